"""``gpunode probe``: the real probe on this machine, and the recorded H200 through the CLI."""

from __future__ import annotations

import ctypes.util
import json
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
from probe_check_helpers import DEVICE, recorded_raw

import gpunode.commands.probe
import gpunode.probe
from gpunode.cli import build_report, main
from gpunode.commands.probe import node_view
from gpunode.model import Report
from gpunode.probe import ProbeResult, load_probe_json

NO_NVIDIA_HERE = ctypes.util.find_library("nvidia-ml") is None and not os.path.exists(
    "/proc/driver/nvidia/version"
)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """The installed entry point in a fresh process: real probe, real exit code."""
    return subprocess.run(
        [sys.executable, "-c", "from gpunode.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def invoke(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``main()`` in this process (so the probe can be replaced by a recorded one)."""
    sys_argv = sys.argv
    sys.argv = ["gpunode", *args]
    try:
        with pytest.raises(SystemExit) as stopped:
            main()
    finally:
        sys.argv = sys_argv
    out, err = capsys.readouterr()
    return int(stopped.value.code or 0), out, err


@pytest.fixture
def h200(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, object]]:
    """``run_probe`` answers with the probe recorded on the H200; returns the calls it got."""
    calls: list[dict[str, object]] = []
    result = load_probe_json((DEVICE / "probe.json").read_bytes())
    recorded = msgspec.structs.replace(result, raw=recorded_raw(nvidia_smi=True))

    def fake_run_probe(host_root: str = "/", node_name: str | None = None, **kw: object) -> ProbeResult:
        calls.append({"host_root": host_root, "node_name": node_name, **kw})
        return recorded if node_name is None else msgspec.structs.replace(recorded, node_name=node_name)

    monkeypatch.setattr(gpunode.probe, "run_probe", fake_run_probe)
    # the recorded host is the H200: its PCI bus holds NVIDIA functions
    monkeypatch.setattr(gpunode.commands.probe, "nvidia_on_pci", lambda _root: True)
    return calls


def pci_host(root: Path, *vendors: str) -> Path:
    """A host root whose PCI bus holds functions with these vendor ids (and nothing else)."""
    for i, vendor in enumerate(vendors):
        device = root / f"sys/bus/pci/devices/0000:{i:02x}:00.0"
        device.mkdir(parents=True)
        (device / "vendor").write_text(f"{vendor}\n")
    return root


def test_no_nvidia_gpu_on_the_pci_bus_is_not_a_gpu_node(tmp_path: Path) -> None:
    host = pci_host(tmp_path, "0x8086", "0x1af4")
    proc = run("probe", "--host-root", str(host))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("not a GPU node: no NVIDIA GPU (PCI vendor 0x10de)")
    assert "install" not in proc.stdout and "kubectl" not in proc.stdout and "ssh" not in proc.stdout
    assert "lspci" in proc.stdout
    as_json = json.loads(run("probe", "--host-root", str(host), "-o", "json").stdout)
    assert as_json["gpu_node"] is False


@pytest.mark.skipif(not NO_NVIDIA_HERE, reason="this machine has an NVIDIA driver")
def test_real_probe_without_a_driver_says_so_and_exits_1(tmp_path: Path) -> None:
    proc = run("probe", "--host-root", str(pci_host(tmp_path, "0x10de")))
    assert proc.returncode == 1, proc.stderr
    steps = [line for line in proc.stdout.splitlines() if line.lstrip().startswith("$ ")]
    assert steps and not any("kubectl" in s or "ssh " in s for s in steps)  # host commands only
    assert "driver_not_loaded" in proc.stdout
    assert "The NVIDIA driver is not loaded" in proc.stdout
    assert "Traceback" not in proc.stderr


@pytest.mark.skipif(not NO_NVIDIA_HERE, reason="this machine has an NVIDIA driver")
def test_real_probe_json_report_and_raw_facts(tmp_path: Path) -> None:
    host = str(pci_host(tmp_path / "host", "0x10de"))
    proc = run(
        "probe", "--host-root", host, "-o", "json", "--bundle", str(tmp_path / "b"), "--node-name", "dev-box"
    )
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    (node,) = report["nodes"]
    assert node["name"] == "dev-box"
    assert [(rc["component"], rc["cause"]) for rc in node["root_causes"]] == [("driver", "driver_not_loaded")]
    assert report["cluster"]["components"] == []
    facts = json.loads((tmp_path / "b/nodes/dev-box/cmd/gpunode-probe.json").read_text())
    assert facts["nvml"]["init_ok"] is False
    assert f"probe bundle in {tmp_path / 'b'}" in proc.stderr
    raw = run("probe", "--host-root", host, "--facts")
    assert raw.returncode == 1
    assert json.loads(raw.stdout)["format"] == "gpunode-probe/v1"


def test_recorded_h200_is_healthy_and_exits_0(
    capsys: pytest.CaptureFixture[str], h200: list[dict[str, object]]
) -> None:
    code, out, _ = invoke(capsys, "probe", "--stack")
    assert code == 0
    assert "✓ h200-device  1x NVIDIA H200" in out  # the stack panel's title
    assert "from probe probe:h200-device" in out  # not the temporary bundle, which is gone
    assert "✗" not in out
    assert h200 == [{"host_root": "/", "node_name": None, "run_nvidia_smi": False}]


def test_recorded_h200_json_has_layer_one_ok_and_no_kubernetes(
    capsys: pytest.CaptureFixture[str], h200: list[dict[str, object]]
) -> None:
    code, out, _ = invoke(capsys, "probe", "-o", "json", "--nvidia-smi", "--host-root", "/")
    assert code == 0
    (node,) = json.loads(out)["nodes"]
    statuses = {c["component"]: c["status"] for c in node["components"]}
    assert statuses["driver"] == statuses["gpu-hardware"] == statuses["kernel"] == "ok"
    assert statuses["kubelet"] == statuses["container-runtime"] == "not-deployed"
    assert node["root_causes"] == []
    assert h200[0]["run_nvidia_smi"] is True


def test_facts_prints_the_probe_json(
    capsys: pytest.CaptureFixture[str], h200: list[dict[str, object]]
) -> None:
    code, out, _ = invoke(capsys, "probe", "--facts")
    assert code == 0
    facts = json.loads(out)
    assert facts["nvml"]["driver_version"] == "580.159.04"
    assert "raw" not in facts


def test_bundle_is_kept_and_not_overwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], h200: list[dict[str, object]]
) -> None:
    bundle = tmp_path / "probe-bundle"
    code, _, err = invoke(capsys, "probe", "--bundle", str(bundle), "-o", "markdown")
    assert code == 0 and "probe bundle in" in err
    assert (bundle / "nodes/h200-device/cmd/gpunode-probe.json").is_file()
    assert (bundle / "nodes/h200-device/cmd/dmesg.txt").is_file()
    code, out, err = invoke(capsys, "probe", "--bundle", str(bundle))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "already holds node h200-device" in err


def test_usage_errors_are_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], h200: list[dict[str, object]]
) -> None:
    code, _, err = invoke(capsys, "probe", "--facts", "-o", "json")
    assert code == 2 and "--facts" in err and err.count("\n") == 1
    code, _, err = invoke(capsys, "probe", "--host-root", str(tmp_path / "missing"))
    assert code == 2 and "no such directory" in err
    assert h200 == []  # neither ran the probe


RUN = Path(__file__).resolve().parent / "h200-run"


def _verdict(report: Report) -> list[tuple[str, str, str | None]]:
    (node,) = report.nodes
    return [(c.component, c.status.value, c.cause) for c in node.components]


def test_offline_verdict_equals_the_one_printed_on_the_h200() -> None:
    """``gpunode probe -o json`` ran on the H200; its bundle, judged here, says the same."""
    printed = msgspec.json.decode((RUN / "report.json").read_bytes(), type=Report)
    here = node_view(build_report(RUN / "bundle", ["h200-device"]))
    known = {c for c, _, _ in _verdict(printed)}  # components catalogued since are compared below
    assert [v for v in _verdict(here) if v[0] in known] == _verdict(printed)
    (node,) = here.nodes
    since = {c.component: (c.status.value, c.summary) for c in node.components if c.component not in known}
    links = {c: v for c, v in since.items() if c in {"nvlink-fabric", "imex", "rdma-links", "gpudirect-rdma"}}
    # the other components catalogued since (DRA, HAMi, VM passthrough, ...) run as pods: none here
    assert all(status == "not-deployed" for status, _ in since.values()), since
    assert links == {
        "nvlink-fabric": ("not-deployed", "no NVLink peers (no NVLinks)"),
        "imex": ("not-deployed", "no IMEX on this node"),
        "rdma-links": ("not-deployed", "no InfiniBand HCA"),
        "gpudirect-rdma": ("not-deployed", "no InfiniBand HCA: no NIC for GPUDirect RDMA"),
    }
    assert printed.nodes[0].root_causes == here.nodes[0].root_causes == ()
    assert printed.nodes[0].gpu_product == "NVIDIA H200"
