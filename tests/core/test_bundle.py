"""Bundles: hand-made ones diagnose, broken ones fail with one clear line."""

from __future__ import annotations

import shutil
import tarfile
from pathlib import Path
from typing import Any

import pytest

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.errors import BundleError
from gpunode.model import Status


def _report(path: Path):  # type: ignore[no-untyped-def]
    return diagnose(load_bundle(path), read_node_observations)


def test_handmade_bundle_names_the_driver_as_root_cause(handmade: Path) -> None:
    report = _report(handmade)
    (node,) = report.nodes
    assert node.name == "gpu-a1"
    (root,) = node.root_causes
    assert (root.component, root.cause, root.layer) == ("driver", "kernel_headers_missing", 1)
    assert any("Could not resolve Linux kernel version" in ev.excerpt for ev in root.evidence)
    assert (
        "kubectl -n gpu-operator logs nvidia-driver-daemonset-8fz4q -c nvidia-driver-ctr --previous --tail=50"
        in root.next_steps
    )
    toolkit = next(c for c in node.components if c.component == "container-toolkit")
    assert toolkit.status == Status.FAILED and toolkit.blocked_by == ("driver",)


def test_missing_sections_are_unknown_not_ok(handmade: Path) -> None:
    report = _report(handmade)
    comps = {c.component: c for c in report.nodes[0].components}
    assert comps["gpu-hardware"].status == Status.UNKNOWN
    assert comps["gpu-hardware"].summary == \
        "no nvidia-smi output for gpu-a1: the bundle has no nodes/gpu-a1/ folder"
    lacked = {m.path: m for m in report.nodes[0].missing_data}
    assert "gpu-hardware" in lacked["nodes/gpu-a1/cmd/nvidia-smi-q.xml"].components
    assert "cluster/daemonsets.json" in report.source.missing


def test_tar_gz_bundle_gives_the_same_report(handmade: Path, tmp_path: Path) -> None:
    archive = tmp_path / "b.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(handmade, arcname="falcon-bundle")
    from_dir, from_tar = _report(handmade), _report(archive)
    assert from_tar.nodes == from_dir.nodes
    assert from_tar.groups == from_dir.groups


def test_truncated_tar_names_the_file(handmade: Path, tmp_path: Path) -> None:
    archive = tmp_path / "b.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(handmade, arcname="bundle")
    data = archive.read_bytes()
    archive.write_bytes(data[: len(data) // 2])
    with pytest.raises(BundleError, match=r"b\.tar\.gz"):
        _report(archive)


def test_bad_json_names_the_file(handmade: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    shutil.copytree(handmade, bundle)
    (bundle / "cluster/pods.json").write_text('{"kind": "List", "items": [')
    with pytest.raises(BundleError, match=r"cluster/pods\.json"):
        load_bundle(bundle)


def test_wrong_kind_is_rejected(handmade: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    shutil.copytree(handmade, bundle)
    (bundle / "cluster/nodes.json").write_text(
        '{"kind": "Node", "apiVersion": "v1", "metadata": {"name": "x"}}'
    )
    with pytest.raises(BundleError, match=r"cluster/nodes\.json: expected a List"):
        load_bundle(bundle)


def test_wrong_manifest_format_is_rejected(handmade: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    shutil.copytree(handmade, bundle)
    (bundle / "manifest.json").write_text('{"format": "gpunode-bundle/v9"}')
    with pytest.raises(BundleError, match="unsupported format"):
        load_bundle(bundle)


def test_missing_bundle_is_a_bundle_error(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match="no such bundle"):
        load_bundle(tmp_path / "nope")


def test_empty_folder_is_not_a_bundle(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match="not a gpunode bundle"):
        _report(tmp_path)


def test_empty_bundle_reports_no_nodes_and_everything_missing(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text('{"format": "gpunode-bundle/v1"}')
    report = _report(tmp_path)
    assert report.nodes == ()
    assert "cluster/pods.json" in report.source.missing
    assert not report.has_failures


def _handmade_copy(handmade: Path, tmp_path: Path) -> tuple[Path, dict[str, object]]:
    import json

    bundle = tmp_path / "b"
    shutil.copytree(handmade, bundle)
    return bundle, json.loads((bundle / "cluster" / "pods.json").read_text())


def test_numeric_quantities_are_read_as_strings(handmade: Path, tmp_path: Path) -> None:
    import json

    bundle, doc = _handmade_copy(handmade, tmp_path)
    items: list[dict[str, Any]] = doc["items"]  # type: ignore[assignment]
    items.append({"metadata": {"name": "trainer", "namespace": "ml"},
                  "spec": {"nodeName": "gpu-a1", "containers": [
                      {"name": "t", "image": "t", "resources": {"limits": {"nvidia.com/gpu": 1}}}]},
                  "status": {"phase": "Running"}})
    (bundle / "cluster" / "pods.json").write_text(json.dumps(doc))
    facts = load_bundle(bundle)
    assert [p.spec.containers[0].resources.limits for p in facts.workload_pods] == [{"nvidia.com/gpu": "1"}]
    assert not facts.manifest.warnings and not facts.damaged


def test_a_malformed_item_is_skipped_with_file_index_and_field(handmade: Path, tmp_path: Path) -> None:
    import json

    bundle, doc = _handmade_copy(handmade, tmp_path)
    items: list[dict[str, Any]] = doc["items"]  # type: ignore[assignment]
    items[0]["spec"]["nodeName"] = 7
    (bundle / "cluster" / "pods.json").write_text(json.dumps(doc))
    facts = load_bundle(bundle)
    assert facts.manifest.warnings == (
        "cluster/pods.json: item 0 skipped: Expected `str`, got `int` - at `$.spec.nodeName`",)
    assert facts.damaged == {"pods"} and facts.manifest.partial
    report = _report(bundle)
    pod_causes = {"pod_missing", "component_missing"}
    assert not {rc.cause for n in report.nodes for rc in n.root_causes} & pod_causes


def test_deep_nesting_is_one_line_not_a_recursion_error(handmade: Path, tmp_path: Path) -> None:
    bundle, _ = _handmade_copy(handmade, tmp_path)
    deep = "[" * 100_000 + "]" * 100_000
    (bundle / "cluster" / "version.json").write_text(deep)
    facts = load_bundle(bundle)
    # one line naming the file: the shape check may refuse it before its depth is reached
    (warning,) = [w for w in facts.manifest.warnings if w.startswith("cluster/version.json: ignored: ")]
    assert warning.endswith(("nested too deeply", "expected an object")), warning
    (bundle / "cluster" / "events.json").write_text(f'{{"kind": "List", "items": [{deep}]}}')
    with pytest.raises(BundleError, match=r"cluster/events\.json: nested too deeply"):
        load_bundle(bundle)
    (bundle / "manifest.json").write_text(f'{{"extra": {deep}}}')
    with pytest.raises(BundleError, match=r"manifest\.json: nested too deeply"):
        load_bundle(bundle)
