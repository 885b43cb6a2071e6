"""Names from the API (namespaces, pods, containers, nodes, hostPaths) never lead a write
outside the bundle being written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gpunode.apiserver import Faults, serve_bundle
from gpunode.collect import collect_bundle
from gpunode.collect.mustgather import convert_must_gather
from gpunode.collect.writer import BundleWriter
from gpunode.errors import BundleError
from gpunode.safety import inside

MUST_GATHER = Path(__file__).parent / "fixtures" / "must-gather"
HOSTILE = ["logs/ns/../../../../escape.log", "nodes/../../escape/cmd/x", "nodes/n/files//../../../../x",
           "logs/\x1b]0;t\x07/p/c.log", "nodes/./../x", "/abs/olute"]


def _outside(root: Path, out: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and not p.is_relative_to(out)]


@pytest.mark.parametrize("rel", HOSTILE)
def test_the_writer_keeps_every_path_inside(tmp_path: Path, rel: str) -> None:
    out = tmp_path / "deep" / "out"
    writer = BundleWriter(out)
    writer.write(rel, b"x")
    assert _outside(tmp_path, out) == []
    assert [p for p in out.rglob("*") if p.is_file()]  # written, inside


def test_a_path_through_a_link_out_of_the_bundle_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "nodes").symlink_to(tmp_path)
    with pytest.raises(BundleError, match="leaves"):
        inside(out, "nodes/n/cmd/x")


def test_must_gather_names_stay_inside(tmp_path: Path) -> None:
    src = tmp_path / "mg"
    shutil.copytree(MUST_GATHER, src)
    root = next(p.parent for p in src.rglob("gpu_operand_pods.yaml"))
    log = next(root.glob("gpu_operand_pod_*.log"))
    log.write_text("[pod/../../../../escape/..] hello\n" + log.read_text())
    (root / "nvidia-bug-report_...log").write_text("NVRM: Xid (PCI:0000:00:06): 79\n")
    out = tmp_path / "work" / "bundle"
    convert_must_gather(src, out)
    assert _outside(tmp_path / "work", out) == []


def test_collect_from_a_server_with_hostile_names_writes_only_inside(mini_bundle: Path,
                                                                      tmp_path: Path) -> None:
    served = tmp_path / "served"
    shutil.copytree(mini_bundle, served)
    pods_file = served / "cluster" / "pods.json"
    doc = json.loads(pods_file.read_text())
    for pod in doc["items"]:
        for volume in pod["spec"].get("volumes", []):
            if "hostPath" in volume:
                volume["hostPath"]["path"] = "/../../../../../../../../" + str(tmp_path / "esc")
        for status in pod["status"].get("containerStatuses", []):
            if status.get("restartCount"):
                old = status["name"]
                status["name"] = "../../../../../escape"
                for c in pod["spec"]["containers"]:
                    if c["name"] == old:
                        c["name"] = status["name"]
    pods_file.write_text(json.dumps(doc))
    out = tmp_path / "collected" / "b"
    with serve_bundle(served, faults=Faults()) as server:
        collect_bundle(out, kubeconfig=server.kubeconfig_path, quiet=True)
    assert _outside(tmp_path / "collected", out) == []
    assert not (tmp_path / "esc").exists()
