"""The builder gives the node what its report shows: which DaemonSets tolerate a reported
taint (an agent kept off a tainted GPU node while the GPU stack runs there), a node whose
driver never loaded (a failed host install, GKE's installer never finishing), and driver
modules the node has not loaded. Each test reads the file or object a collector would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from builder import build_case
from case import CaseError, synthetic_case

NODE = "gpu-wk-01"


def _items(out: Path, resource: str) -> list[dict[str, Any]]:
    raw = json.loads((out / "cluster" / f"{resource}.json").read_text())
    return list(raw["items"] if isinstance(raw, dict) else raw)


def _ds(out: Path, name: str) -> dict[str, Any]:
    return next(d for d in _items(out, "daemonsets") if d["metadata"]["name"] == name)


def _pods_on_node(out: Path, prefix: str) -> list[dict[str, Any]]:
    return [p for p in _items(out, "pods") if p["metadata"]["name"].startswith(prefix)
            and p["spec"].get("nodeName") == NODE]


def _cmd(out: Path, name: str) -> Path:
    return out / "nodes" / NODE / "cmd" / name


# -- who tolerates a reported taint ---------------------------------------------------------

CUSTOM = {"kind": "node-taints", "taints": [{"key": "nv", "value": "NoSchedule", "effect": "NoSchedule"}]}


def test_an_agent_missing_from_a_tainted_node_is_kept_off_and_the_stack_runs(tmp_path: Path) -> None:
    """home-ops#4712's shape: the agent's missing pod on the tainted node is the taint's
    work, and the GPU Operator's operands, which ran there, tolerate it (as the ClusterPolicy
    that renders them says)."""
    case = synthetic_case("agent-taint", [CUSTOM, {"kind": "pod-missing", "component": "logging-agent"}])
    out = build_case(case, tmp_path)
    agent = _ds(out, "fluent-bit")
    assert agent["spec"]["template"]["spec"]["tolerations"] == []
    assert not _pods_on_node(out, "fluent-bit-")
    plugin = _ds(out, "nvidia-device-plugin-daemonset")
    assert {"effect": "NoSchedule", "key": "nv", "operator": "Exists"} in plugin["spec"]["template"]["spec"][
        "tolerations"]
    assert _pods_on_node(out, "nvidia-device-plugin-daemonset-")
    (policy,) = _items(out, "clusterpolicies")
    assert {"effect": "NoSchedule", "key": "nv", "operator": "Exists"} in policy["spec"]["daemonsets"][
        "tolerations"]


def test_a_taint_without_a_missing_agent_keeps_the_scenarios_tolerations(tmp_path: Path) -> None:
    """The GPU Operator troubleshooting page's case: a custom taint keeps every operand off."""
    out = build_case(synthetic_case("operand-taint", [CUSTOM]), tmp_path)
    assert not _pods_on_node(out, "nvidia-device-plugin-daemonset-")
    assert _pods_on_node(out, "fluent-bit-")


def test_the_case_names_who_tolerates(tmp_path: Path) -> None:
    taints = {**CUSTOM, "tolerated_by": ["device-plugin"], "untolerated_by": ["node-exporter"]}
    out = build_case(synthetic_case("named-taint", [taints]), tmp_path)
    assert _pods_on_node(out, "nvidia-device-plugin-daemonset-")
    assert not _pods_on_node(out, "nvidia-dcgm-exporter-")
    assert not _pods_on_node(out, "kube-prometheus-stack-prometheus-node-exporter-")


def test_a_component_both_tolerating_and_not_is_refused(tmp_path: Path) -> None:
    taints = {**CUSTOM, "tolerated_by": ["device-plugin"], "untolerated_by": ["device-plugin"]}
    with pytest.raises(CaseError, match="both tolerated_by and untolerated_by"):
        build_case(synthetic_case("both-taint", [taints]), tmp_path)


# -- a driver that never loaded ---------------------------------------------------------------

BUILD_FAILED = (
    "ERROR: modpost: GPL-incompatible module nvidia.ko uses GPL-only symbol 'rcu_read_unlock_strict'\n"
    "ERROR: Installation has failed.  Please see the file '/var/log/nvidia-installer.log' for details.\n")


def _no_driver(out: Path) -> None:
    assert not _cmd(out, "nvidia-smi.txt").exists() and not _cmd(out, "nvidia-smi-q.xml").exists()
    assert not (out / "nodes" / NODE / "files" / "proc" / "driver" / "nvidia" / "version").exists()
    assert not [ln for ln in _cmd(out, "lsmod.txt").read_text().splitlines() if ln.startswith("nvidia")]
    assert "NVRM" not in _cmd(out, "dmesg.txt").read_text()
    node = next(n for n in _items(out, "nodes") if n["metadata"]["name"] == NODE)
    assert "nvidia.com/gpu" not in node["status"]["capacity"]


def test_a_host_install_that_failed_on_the_module_leaves_no_driver(tmp_path: Path) -> None:
    evidence = [{"kind": "node-file", "path": "var/log/nvidia-installer.log", "text": BUILD_FAILED}]
    case = synthetic_case("install-failed", evidence, cluster={"driver_mode": "host", "components": []})
    out = build_case(case, tmp_path)
    _no_driver(out)
    log = out / "nodes" / NODE / "files" / "var" / "log" / "nvidia-installer.log"
    assert log.read_text() == BUILD_FAILED


def test_an_install_stopped_by_a_loaded_module_keeps_it(tmp_path: Path) -> None:
    text = "ERROR: An NVIDIA kernel module 'nvidia-drm' appears to already be loaded in your kernel.\n"
    evidence = [{"kind": "node-file", "path": "var/log/nvidia-installer.log", "text": text}]
    case = synthetic_case("install-loaded", evidence, cluster={"driver_mode": "host", "components": []})
    out = build_case(case, tmp_path)
    assert _cmd(out, "nvidia-smi.txt").exists()


def test_gke_installer_never_finishing_leaves_no_driver(tmp_path: Path) -> None:
    """container-engine-accelerators#402: the installer init container waits; no driver."""
    evidence: list[dict[str, Any]] = [
        {"kind": "log", "component": "gke-device-plugin", "container": "nvidia-driver-installer",
         "init": True, "text": "GPU driver auto installation is disabled.\n"},
        {"kind": "pod-state", "component": "gke-device-plugin", "container": "nvidia-driver-installer",
         "state": "Init:0/1"}]
    case = synthetic_case("gke-no-driver", evidence, platform="gke",
                          cluster={"driver_mode": "host", "components": []})
    _no_driver(build_case(case, tmp_path))


def test_the_case_says_the_driver_is_not_loaded(tmp_path: Path) -> None:
    case = synthetic_case("said-no-driver", [], platform="eks",
                          cluster={"driver_mode": "host", "components": [], "device_plugin": "static",
                                   "gpu_node": {"driver_loaded": False}})
    _no_driver(build_case(case, tmp_path))


# -- modules the node has not loaded ----------------------------------------------------------


def test_unloaded_modules_leave_lsmod_and_the_kernel_log(tmp_path: Path) -> None:
    case = synthetic_case("no-uvm", [], cluster={"gpu_node": {"unloaded_modules": ["nvidia_uvm",
                                                                                    "nvidia_peermem"]}})
    out = build_case(case, tmp_path)
    rows = {ln.split()[0]: ln.split()[2:] for ln in _cmd(out, "lsmod.txt").read_text().splitlines()[1:]}
    assert "nvidia_uvm" not in rows and "nvidia_peermem" not in rows
    assert rows["nvidia"] == ["41", "nvidia_modeset"]
    assert rows["ib_uverbs"] == ["1", "mlx5_ib"]
    dmesg = _cmd(out, "dmesg.txt").read_text()
    assert "nvidia_uvm:" not in dmesg and "nvidia_peermem:" not in dmesg and "NVRM: loading" in dmesg


def test_the_default_node_loads_uvm_and_peermem(tmp_path: Path) -> None:
    out = build_case(synthetic_case("default-modules", []), tmp_path)
    rows = {ln.split()[0] for ln in _cmd(out, "lsmod.txt").read_text().splitlines()[1:]}
    assert {"nvidia", "nvidia_uvm", "nvidia_peermem"} <= rows
