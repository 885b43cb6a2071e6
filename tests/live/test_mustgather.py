"""GPU Operator must-gather output becomes a bundle the engine can read."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from livehelpers import key, read_list

from gpunode.bundle.load import load_bundle
from gpunode.collect.mustgather import (
    convert_must_gather,
    is_must_gather,
    parse_node_labels,
    parse_wide_table,
    split_prefixed_log,
)
from gpunode.errors import BundleError
from inprocess import run_cli

FIXTURE = Path(__file__).parent / "fixtures" / "must-gather"
MINI = Path(__file__).parent / "fixtures" / "mini"


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return convert_must_gather(FIXTURE, tmp_path_factory.mktemp("mg") / "bundle")


def test_detects_the_nested_artifact_directory(tmp_path: Path) -> None:
    assert is_must_gather(FIXTURE)
    assert not is_must_gather(MINI)
    with pytest.raises(BundleError, match="not a GPU Operator must-gather"):
        convert_must_gather(MINI, tmp_path / "out")


def test_objects_are_kept_as_they_were_saved(converted: Path) -> None:
    pods = {key(p): p for p in read_list(converted / "cluster" / "pods.json")}
    source = {key(p): p for p in read_list(MINI / "cluster" / "pods.json")
              if p["metadata"]["namespace"] == "gpu-operator"}
    assert pods == source
    assert read_list(converted / "cluster" / "clusterpolicies.json") == \
        read_list(MINI / "cluster" / "clusterpolicies.json")
    assert len(read_list(converted / "cluster" / "daemonsets.json")) == 4


def test_nodes_are_rebuilt_from_labels_and_status(converted: Path) -> None:
    nodes = {n["metadata"]["name"]: n for n in read_list(converted / "cluster" / "nodes.json")}
    assert sorted(nodes) == ["gpu-wk-01", "gpu-wk-02"]
    node = nodes["gpu-wk-02"]
    assert node["metadata"]["labels"]["nvidia.com/gpu.present"] == "true"
    assert node["status"]["conditions"] == [{"type": "Ready", "status": "True"}]
    assert node["status"]["nodeInfo"]["osImage"] == "Ubuntu 24.04.1 LTS"


def test_prefixed_logs_are_split_per_container(converted: Path) -> None:
    base = "logs/gpu-operator/nvidia-device-plugin-daemonset-z8c3x/nvidia-device-plugin"
    expected = (MINI / f"{base}.log").read_text()
    assert (converted / f"{base}.log").read_text() == expected
    assert (converted / f"{base}.previous.log").read_text() == expected
    operator = list((converted / "logs" / "gpu-operator").glob("gpu-operator-*/gpu-operator.log"))
    assert len(operator) == 1


def test_kernel_lines_come_from_the_bug_report(converted: Path) -> None:
    dmesg = (converted / "nodes" / "gpu-wk-02" / "cmd" / "dmesg.txt").read_text()
    assert "NVRM: Xid (PCI:0000:00:06): 79" in dmesg
    assert "Start of NVIDIA bug report" not in dmesg


def test_result_is_a_partial_bundle_the_loader_accepts(converted: Path) -> None:
    manifest = json.loads((converted / "manifest.json").read_text())
    assert manifest["partial"] is True
    assert manifest["origin"] == "gpu-operator-must-gather"
    facts = load_bundle(converted)
    assert sorted(facts.nodes) == ["gpu-wk-01", "gpu-wk-02"]


def test_text_parsers() -> None:
    assert parse_node_labels("n1\n- a=b\n- c=\n\n\nn2\n- x=y\n") == {"n1": {"a": "b", "c": ""},
                                                                     "n2": {"x": "y"}}
    rows = parse_wide_table("NAME   STATUS     OS-IMAGE\nn1     NotReady   Ubuntu 22.04.5 LTS\n")
    assert rows == [{"NAME": "n1", "STATUS": "NotReady", "OS-IMAGE": "Ubuntu 22.04.5 LTS"}]
    assert split_prefixed_log("[pod/p/c] one\n[pod/p/d] two\nnoise\n[pod/p/c] three\n") == {
        ("p", "c"): "one\nthree\n", ("p", "d"): "two\n"}


def _causes(bundle: Path) -> set[tuple[str, str, str]]:
    from gpunode.cli import build_report

    report = build_report(bundle, None)
    return {(n.name, rc.component, rc.cause) for n in report.nodes for rc in n.root_causes}


def test_fields_must_gather_lacks_are_unknown_not_zero(converted: Path) -> None:
    """Rebuilt nodes carry no capacity and pods come from one namespace: no false root cause."""
    causes = _causes(converted)
    assert causes <= _causes(MINI)
    assert not {c for _, _, c in causes} & {"device_plugin_zero_gpus", "pod_missing",
                                              "component_missing"}
    assert causes  # the Xid 79 in the bug report is still found


def _opens(report: dict[str, Any]) -> list[str]:
    causes = [*report["cluster"]["root_causes"], *(rc for n in report["nodes"] for rc in n["root_causes"])]
    return [ev["open"] for rc in causes for ev in rc["evidence"] if ev["open"] is not None]


def _run_in(folder: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> subprocess.CompletedProcess[str]:
    """The command line in this process (tests/inprocess.py), run from ``folder``."""
    monkeypatch.chdir(folder)
    return run_cli(*args, env={**os.environ, "COLUMNS": "200"})


def test_evidence_opens_in_the_must_gather_the_user_gave(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the command line, run from the must-gather's parent: the report is made from a
    converted copy in a temporary directory, yet every ``open`` is a file of the must-gather as
    the user named it (the bug report a kernel line came from, the operand's log), and no
    output names the copy."""
    shutil.copytree(FIXTURE, tmp_path / "mg")
    run = partial(_run_in, tmp_path, monkeypatch)
    done = run("diagnose", "--from", "mg", "-o", "json")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["source"]["location"] == report["source"]["path"] == "mg"
    opens = _opens(report)
    assert "mg/nvidia-gpu-operator_20261130_1741/nvidia-bug-report_gpu-wk-02.log.gz" in opens
    for path in opens:
        assert (tmp_path / path).is_file() or (tmp_path / path).is_dir(), path
        assert path.startswith("mg/"), path
    copies = str(Path(tempfile.gettempdir()) / "gpunode-")
    for command in ("diagnose", "stack"):
        for output in ("table", "wide", "json", "markdown", "html"):
            shown = run(command, "--from", "mg", "-o", output)
            assert shown.returncode == 1, (command, output, shown.stderr)
            assert copies not in shown.stdout + shown.stderr, (command, output)
    table = run("diagnose", "--from", "mg").stdout
    assert "open: mg/nvidia-gpu-operator_20261130_1741/nvidia-bug-report_gpu-wk-02.log.gz" in table


def test_validate_reads_a_must_gather_as_diagnose_does(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """``validate --from`` converts a must-gather as ``diagnose --from`` does: the stack
    category fails on the same root cause, the reports name the directory the user gave and
    every ``open`` is one of its files, never the working copy."""
    shutil.copytree(FIXTURE, tmp_path / "mg")
    run = partial(_run_in, tmp_path, monkeypatch)
    diagnosed = json.loads(run("diagnose", "--from", "mg", "-o", "json").stdout)
    done = run("validate", "--from", "mg", "-o", "json")
    assert done.returncode == 1, done.stderr
    assert "not a gpunode bundle" not in done.stderr and "Traceback" not in done.stderr
    report = json.loads(done.stdout)
    assert report["source"]["location"] == report["source"]["path"] == "mg"
    causes = {(rc["component"], rc["cause"]) for n in diagnosed["nodes"] for rc in n["root_causes"]}
    assert causes and all(cause in done.stdout for _, cause in causes)
    opens = re.findall(r'"open": "([^"]+)"', done.stdout)
    assert opens and all(p.startswith("mg/") and (tmp_path / p).exists() for p in opens), opens
    assert str(Path(tempfile.gettempdir()) / "gpunode-") not in done.stdout + done.stderr
