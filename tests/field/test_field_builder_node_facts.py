"""Facts of a report the builder carries onto the bundle: the kernel module flavour the node
loaded, init containers and DaemonSets the evidence names, the tolerations of the agents'
DaemonSets, and the GPUs' compute mode; each asserted on the file or object a collector sees.

Sources for the formats: the proprietary module's banners as real kernel logs and
/proc/driver/nvidia/version print them ("NVRM version: NVIDIA UNIX x86_64 Kernel Module
515.76  Mon Sep 12 19:21:56 UTC 2022", "nvidia-modeset: Loading NVIDIA Kernel Mode Setting
Driver for UNIX platforms  535.104.05  ...", "nvidia: module license 'NVIDIA' taints kernel.");
the open module's from the recorded H200 node (../shared/fixtures/real/h200-vm); nvidia-smi's
"Compute M." column ("E. Process", NVIDIA/DIGITS#2005) and NVML's compute mode names."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from builder import build_case
from case import CaseError, load_case, synthetic_case

from gpunode.parse.driver_version import parse_proc_driver_version

NODE = "gpu-wk-01"


def _items(out: Path, resource: str) -> list[dict[str, Any]]:
    raw = json.loads((out / "cluster" / f"{resource}.json").read_text())
    return list(raw["items"] if isinstance(raw, dict) else raw)


def _module(out: Path) -> str:
    text = (out / "nodes" / NODE / "files" / "proc" / "driver" / "nvidia" / "version").read_text()
    return parse_proc_driver_version(text).kernel_module_type


def _dmesg(out: Path) -> str:
    return (out / "nodes" / NODE / "cmd" / "dmesg.txt").read_text()


# -- kernel module flavour -----------------------------------------------------------


def test_a_pre_r560_driver_loads_the_proprietary_module(tmp_path: Path) -> None:
    case = synthetic_case("km-535", [], cluster={"gpu_node": {"driver_version": "535.183.01"}})
    out = build_case(case, tmp_path)
    assert _module(out) == "proprietary"
    dmesg = _dmesg(out)
    assert "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.183.01  " in dmesg
    assert "nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver for UNIX platforms  535.183.01" in dmesg
    assert "nvidia: module license 'NVIDIA' taints kernel." in dmesg
    assert "Open Kernel" not in dmesg and "Release Build" not in dmesg
    # the other nodes keep the simulator's R570 open module
    other = (out / "nodes" / "gpu-wk-02" / "files" / "proc" / "driver" / "nvidia" / "version").read_text()
    assert parse_proc_driver_version(other).kernel_module_type == "open"


def test_the_default_r570_driver_stays_open(tmp_path: Path) -> None:
    out = build_case(synthetic_case("km-default", []), tmp_path)
    assert _module(out) == "open"
    assert "NVIDIA UNIX Open Kernel Module for x86_64  570.133.20  Release Build" in _dmesg(out)


def test_a_gpu_without_gsp_gets_the_proprietary_module_and_no_gsp_firmware(tmp_path: Path) -> None:
    case = synthetic_case("km-v100", [], cluster={"gpu_node": {"gpu": "Tesla V100-SXM2-16GB"}})
    out = build_case(case, tmp_path)
    assert _module(out) == "proprietary"
    xml = (out / "nodes" / NODE / "cmd" / "nvidia-smi-q.xml").read_text()
    assert set(re.findall(r"<gsp_firmware_version>([^<]*)<", xml)) == {"N/A"}


def test_the_case_names_the_open_module_on_a_gpu_it_cannot_drive(tmp_path: Path) -> None:
    over = {"gpu": "Tesla-V100-SXM2-16GB", "kernel_module": "open"}
    out = build_case(synthetic_case("km-open", [], cluster={"gpu_node": over}), tmp_path)
    assert _module(out) == "open"


def test_the_evidence_banner_and_the_cluster_policy_decide(tmp_path: Path) -> None:
    line = "[    3.5] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  550.90.07  Release Build\n"
    banner = [{"kind": "node-cmd", "name": "dmesg.txt", "text": line}]
    over = {"driver_version": "550.90.07"}
    out = build_case(synthetic_case("km-banner", banner, cluster={"gpu_node": over}), tmp_path / "a")
    assert _module(out) == "open"
    policy = [{"kind": "cluster-object", "resource": "clusterpolicies",
               "object": {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy",
                          "metadata": {"name": "cluster-policy"},
                          "spec": {"driver": {"kernelModuleType": "proprietary"}}}}]
    out = build_case(synthetic_case("km-policy", policy), tmp_path / "b")
    assert _module(out) == "proprietary"


def test_an_open_module_before_r515_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "km-bad.yaml"
    path.write_text(json.dumps({
        "id": "km-bad", "source": "https://example.org/x", "title": "t", "platform": "generic",
        "cluster": {"gpu_node": {"driver_version": "470.256.02", "kernel_module": "open"}},
        "expect": {"healthy": True}}) + "\n", encoding="utf-8")
    with pytest.raises(CaseError) as err:
        load_case(path)
    assert "\n" not in str(err.value)
    assert re.match(r"\S*km-bad\.yaml: cluster\.gpu_node\.kernel_module: ", str(err.value)), err.value


# -- init containers the evidence names ---------------------------------------------------

INSTALLER = "GPU driver auto installation is disabled.\nWaiting for GPU driver libraries to be available.\n"


def test_an_init_container_of_a_pod_whose_main_container_never_started(tmp_path: Path) -> None:
    evidence: list[dict[str, Any]] = [
        {"kind": "log", "component": "gke-device-plugin", "container": "nvidia-driver-installer",
         "init": True, "text": INSTALLER},
        {"kind": "pod-state", "component": "gke-device-plugin", "container": "nvidia-driver-installer",
         "state": "Init:0/1"}]
    case = synthetic_case("init-gke", evidence, platform="gke",
                          cluster={"driver_mode": "host", "components": []})
    out = build_case(case, tmp_path)
    pod = next(p for p in _items(out, "pods") if p["metadata"]["name"].startswith("nvidia-gpu-device-plugin")
               and p["spec"].get("nodeName") == NODE)
    assert [c["name"] for c in pod["spec"]["initContainers"]] == ["nvidia-driver-installer"]
    (init,) = pod["status"]["initContainerStatuses"]
    assert "running" in init["state"] and not init["ready"]
    assert pod["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "PodInitializing"
    logs = out / "logs" / "kube-system" / pod["metadata"]["name"]
    assert (logs / "nvidia-driver-installer.log").read_text() == INSTALLER
    assert not (logs / "nvidia-gpu-device-plugin.log").exists()
    owner = pod["metadata"]["generateName"][:-1]
    ds = next(d for d in _items(out, "daemonsets") if d["metadata"]["name"] == owner)
    inits = ds["spec"]["template"]["spec"]["initContainers"]
    assert [c["name"] for c in inits] == ["nvidia-driver-installer"]


def test_a_logging_agents_init_container_crash_loops(tmp_path: Path) -> None:
    text = "mkdir: cannot create directory '/var/log/calico': Permission denied\n"
    evidence = [
        {"kind": "log", "component": "logging-agent", "container": "pos-migrator", "init": True,
         "text": text},
        {"kind": "pod-state", "component": "logging-agent", "container": "pos-migrator",
         "state": "Init:CrashLoopBackOff", "restarts": 7}]
    out = build_case(synthetic_case("init-agent", evidence, healthy=False), tmp_path)
    pod = next(p for p in _items(out, "pods") if p["metadata"]["namespace"] == "logging"
               and p["spec"].get("nodeName") == NODE)
    (init,) = pod["status"]["initContainerStatuses"]
    assert init["name"] == "pos-migrator" and init["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert init["restartCount"] == 7
    assert pod["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "PodInitializing"
    logs = out / "logs" / "logging" / pod["metadata"]["name"]
    assert (logs / "pos-migrator.log").read_text() == text
    assert sorted(p.name for p in logs.iterdir()) == ["pos-migrator.log", "pos-migrator.previous.log"]


# -- the agents' DaemonSets ------------------------------------------------------------------

CONTROL_PLANE = [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists",
                  "effect": "NoSchedule"}]


@pytest.mark.parametrize(("component", "namespace"),
                         [("logging-agent", "logging"), ("otel-agent", "opentelemetry")])
def test_an_agents_daemonset_tolerations(tmp_path: Path, component: str, namespace: str) -> None:
    evidence = [{"kind": "node-taints", "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
                {"kind": "daemonset-tolerations", "component": component, "tolerations": CONTROL_PLANE}]
    out = build_case(synthetic_case(f"tol-{component}", evidence, healthy=False), tmp_path)
    (ds,) = [d for d in _items(out, "daemonsets") if d["metadata"]["namespace"] == namespace]
    assert ds["spec"]["template"]["spec"]["tolerations"] == CONTROL_PLANE
    assert not [p for p in _items(out, "pods") if p["metadata"]["namespace"] == namespace
                and p["spec"].get("nodeName") == NODE]
    assert ds["status"]["desiredNumberScheduled"] == ds["status"]["currentNumberScheduled"]


REFUSAL = ('Error creating: pods "grafana-agent-logs-tzr4t" is forbidden: violates PodSecurity '
           '"baseline:latest": hostPath volumes (volumes "varlog")')


def test_a_refused_daemonset_the_bundle_lacks_is_deployed_without_pods(tmp_path: Path) -> None:
    evidence: list[dict[str, Any]] = [
                {"kind": "event", "component": "logging-agent", "reason": "FailedCreate", "message": REFUSAL,
                 "object": {"kind": "DaemonSet", "name": "grafana-agent-logs", "namespace": "grafana-agent"}},
                {"kind": "pod-missing", "component": "logging-agent"}]
    out = build_case(synthetic_case("refused-ds", evidence, healthy=False), tmp_path)
    daemonsets = {(d["metadata"]["namespace"], d["metadata"]["name"]): d for d in _items(out, "daemonsets")}
    ds = daemonsets[("grafana-agent", "grafana-agent-logs")]
    assert ("logging", "fluent-bit") not in daemonsets
    assert ds["status"]["currentNumberScheduled"] == 0 and ds["status"]["desiredNumberScheduled"] > 0
    assert not [p for p in _items(out, "pods") if p["metadata"]["namespace"] in ("grafana-agent", "logging")]
    (event,) = [e for e in _items(out, "events") if e["involvedObject"]["kind"] == "DaemonSet"]
    assert event["metadata"]["namespace"] == "grafana-agent"
    assert event["involvedObject"]["uid"] == ds["metadata"]["uid"]
    assert event["source"]["component"] == "daemonset-controller"


# -- compute mode --------------------------------------------------------------------------


MODES = [("Exclusive_Process", "E. Process"), ("Prohibited", "Prohibited"), ("Exclusive_Thread", "E. Thread")]


@pytest.mark.parametrize(("mode", "column"), MODES)
def test_compute_mode(tmp_path: Path, mode: str, column: str) -> None:
    out = build_case(synthetic_case(f"cm-{mode}", [], cluster={"gpu_node": {"compute_mode": mode}}), tmp_path)
    node = out / "nodes" / NODE / "cmd"
    xml = (node / "nvidia-smi-q.xml").read_text()
    assert set(re.findall(r"<compute_mode>([^<]*)<", xml)) == {mode}
    table = (node / "nvidia-smi.txt").read_text()
    rows = [line for line in table.splitlines() if "MiB /" in line]
    assert rows and all(line.endswith(f"%{' ' * (13 - len(column))}{column} |") for line in rows), rows
    default = (out / "nodes" / "gpu-wk-02" / "cmd" / "nvidia-smi.txt").read_text()
    assert {len(line) for line in rows} == {len(line) for line in default.splitlines() if "MiB /" in line}
    assert "Default" in default
