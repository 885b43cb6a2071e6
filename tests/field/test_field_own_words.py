"""A component's own words on field-shaped bundles: the decisive line replaces a state,
names the layer it belongs to, and reads the recent past, the kernel and the journals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
from case import Case
from scoreboard import diagnose_case, top_root_cause

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.sim import build_bundle, load_scenario


def _case(*evidence: dict[str, Any], **extra: Any) -> Case:
    raw = {"id": "x-own-words", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "evidence": list(evidence), "expect": {"healthy": True}, **extra}
    return msgspec.convert(raw, Case)


def _top(case: Case) -> tuple[str, str, str] | None:
    top = top_root_cause(diagnose_case(case), case.node)
    return (top.component, top.cause, top.title) if top else None


def test_a_crash_loop_is_named_by_the_last_error_of_its_previous_log() -> None:
    case = _case(
        {"kind": "pod-state", "component": "dcgm-exporter", "state": "CrashLoopBackOff"},
        {"kind": "log", "component": "dcgm-exporter", "previous": True,
         "text": 'time="2025-01-01T00:00:00Z" level=info msg="Starting dcgm-exporter"\n'
                 'time="2025-01-01T00:00:00Z" level=fatal msg="failed to open /etc/dcgm-exporter/custom.csv: '
                 'no such file or directory"\n'},
    )
    found = _top(case)
    assert found is not None
    assert found[:2] == ("dcgm-exporter", "error_file_state")
    assert found[2] == ("dcgm-exporter exits: failed to open /etc/dcgm-exporter/custom.csv: "
                        "no such file or directory")
    top = top_root_cause(diagnose_case(case), case.node)
    assert top is not None and top.decisive is not None and top.decisive.state == "crash_loop"
    assert top.decisive.source.endswith("nvidia-dcgm-exporter.previous.log:2")


def test_a_container_that_cannot_start_blames_the_hook_that_failed() -> None:
    case = _case({
        "kind": "pod-state", "component": "device-plugin", "state": "RunContainerError",
        "message": "createContainer hook #6: exit status 1, stderr: failed to create directory: "
                   "mkdirat etc/nvidia/x: read-only file system"})
    found = _top(case)
    assert found is not None and found[:2] == ("container-toolkit", "error_file_state")
    assert found[2].startswith("container-toolkit fails starting device-plugin:")


def test_a_gpu_workload_that_cannot_start_blames_the_layer_its_error_names() -> None:
    case = _case({
        "kind": "event", "object": {"kind": "Pod", "name": "train-0"}, "type": "Warning", "reason": "Failed",
        "message": "Error: failed to create containerd task: OCI runtime create failed: "
                   "error running hook #0: "
                   "error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: "
                   "initialization error: driver error: timed out: unknown"})
    found = _top(case)
    assert found is not None and found[:2] == ("driver", "driver_rpc_timeout")  # catalogued: it wins


def test_a_long_hook_error_is_read_to_its_innermost_error() -> None:
    """A Failed event on an operand (no state reported: the kubelet's StartError follows),
    whose message names the toolkit first and the driver only at its end, past what a
    report shows of it: the driver is blamed and the title shows the innermost errors."""
    command = "exec command: [/usr/bin/nvidia-container-cli --load-kmods configure " + "--x=y " * 60 + "]"
    case = _case({
        "kind": "event", "component": "gfd", "type": "Warning", "reason": "Failed",
        "message": "failed to create containerd task: OCI runtime create failed: error running hook #0: "
                   f"error running hook: exit status 1, stdout: , stderr: {command}\n"
                   "nvidia-container-cli: detection error: driver error: timed out: unknown"})
    found = _top(case)
    assert found is not None and found[:2] == ("driver", "driver_rpc_timeout")
    top = top_root_cause(diagnose_case(case), case.node)
    assert top is not None and top.decisive is not None
    assert top.decisive.line.endswith("driver error: timed out: unknown")


def test_nfd_master_killed_at_its_memory_limit_is_one_cluster_cause() -> None:
    case = _case({"kind": "pod-state", "component": "nfd", "container": "master", "state": "Running",
                  "restarts": 4, "last_reason": "OOMKilled", "last_minutes_ago": 300})
    report = diagnose_case(case)
    assert [(rc.component, rc.cause) for rc in report.cluster.root_causes] == [("nfd", "oom_killed")]


def test_a_controller_the_api_refuses_is_degraded_whatever_level_it_logs_at() -> None:
    """client-go logs a list it may not make at warning level; a trimmed paste has no level."""
    warned = _case({"kind": "log", "component": "gpu-operator", "container": "gpu-operator", "text": (
        '{"level":"info","ts":"2024-08-01T16:39:37Z","msg":"State Manager, finished processing"}\n'
        "W0801 16:40:09.232591 1 reflector.go:547] informers.go:106: failed to list *v1.ConfigMap: "
        'configmaps is forbidden: User "system:serviceaccount:gpu-operator:gpu-operator" cannot list '
        'resource "configmaps" in API group "" at the cluster scope\n')})
    bare = _case({"kind": "log", "component": "nfd", "container": "master", "text": (
        "failed to list *v1alpha1.NodeFeatureGroup: the server could not find the requested resource\n")})
    assert _top(warned) is not None and _top(warned)[:2] == ("gpu-operator", "error_permission_denied")
    assert _top(bare) is not None and _top(bare)[:2] == ("nfd", "error_not_found")


def test_a_controller_that_recovered_after_a_refusal_is_healthy() -> None:
    case = _case({"kind": "log", "component": "nfd", "container": "master", "text": (
        "failed to list *v1alpha1.NodeFeatureGroup: the server could not find the requested resource\n"
        "I0801 16:41:00.000000 1 nfd-master.go:1] node updated\n")})
    assert _top(case) is None


def test_the_recent_past_a_restart_after_an_oom_kill_is_degraded() -> None:
    oom = _case({"kind": "pod-state", "component": "device-plugin", "state": "Running", "restarts": 1,
                 "last_reason": "OOMKilled"})
    found = _top(oom)
    assert found is not None and found[:2] == ("device-plugin", "oom_killed")


def test_an_error_exit_long_ago_is_a_start_up_race_not_news() -> None:
    recent = _case({"kind": "pod-state", "component": "gfd", "state": "Running", "restarts": 1,
                    "last_reason": "Error", "last_minutes_ago": 10})
    old = _case({"kind": "pod-state", "component": "gfd", "state": "Running", "restarts": 1,
                 "last_reason": "Error", "last_minutes_ago": 600})
    found = _top(recent)
    assert found is not None and found[0] == "gfd"
    assert _top(old) is None


def test_a_module_the_loader_refused_is_evidence_against_its_owner() -> None:
    case = _case({"kind": "node-cmd", "name": "dmesg.txt",
                  "text": "[   12.1] mlx5_vdpa: Unknown symbol mlx5_db_free (err -22)\n"})
    found = _top(case)
    assert found is not None and found[:2] == ("ofed", "error_module_load")


def test_the_peer_memory_module_the_loader_refused_is_the_drivers() -> None:
    # dmesg of Mellanox/nv_peer_memory#39 (nv_peer_mem against an inbox ib_core) and, as the
    # module is named since R470, nvidia_peermem: the GPU's GPUDirect RDMA client, whatever
    # symbol it lacks (the driver's p2p ones or MOFED's peer-memory registration)
    for module, symbol in (("nv_peer_mem", "ib_register_peer_memory_client"),
                           ("nvidia_peermem", "nvidia_p2p_get_pages")):
        case = _case({"kind": "node-cmd", "name": "dmesg.txt",
                      "text": f"[76463.688316] {module}: disagrees about version of symbol {symbol}\n"
                              f"[76463.688326] {module}: Unknown symbol {symbol} (err -22)\n"})
        found = _top(case)
        assert found is not None and found[:2] == ("driver", "peermem_not_loaded"), module


def test_routine_kernel_lines_and_the_taint_notice_alarm_nobody() -> None:
    case = _case({"kind": "node-cmd", "name": "dmesg.txt",
                  "text": "[    2.8] nvidia: module verification failed: signature and/or required key"
                          " missing"
                          " - tainting kernel\n[    3.0] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  "
                          "550.54.15\n[    3.1] NVRM: Persistence mode is deprecated and will be removed.\n"})
    assert _top(case) is None


def test_a_not_ready_node_is_traced_by_the_kubelet_journal_to_the_runtime() -> None:
    case = _case(
        {"kind": "node-condition", "type": "Ready", "status": "False", "reason": "KubeletNotReady",
         "message": "container runtime status check may not have completed yet"},
        {"kind": "node-cmd", "name": "journal-kubelet.txt",
         "text": "2025-01-01T00:00:00+0000 gpu-wk-01 kubelet[812]: E0101 00:00:00.000000     812 kubelet.go:2"
                 "] \"Container runtime not ready\" err=\"failed to connect to containerd: dial unix "
                 "/run/containerd/containerd.sock: connect: connection refused\"\n"})
    report = diagnose_case(case)
    top = top_root_cause(report, case.node)
    assert top is not None and top.component == "container-runtime"  # the layer the journal names
    node = next(n for n in report.nodes if n.name == case.node)
    kubelet = next(c for c in node.components if c.component == "kubelet")
    assert kubelet.blocked_by == ("container-runtime",)


def test_a_gpu_workload_rejected_at_admission_accuses_the_device_plugin() -> None:
    case = _case({
        "kind": "event", "object": {"kind": "Pod", "name": "train-0"}, "type": "Warning",
        "reason": "UnexpectedAdmissionError",
        "message": "Allocate failed due to rpc error: code = Unavailable desc = "
                   "error reading from server: EOF, which is unexpected"})
    found = _top(case)
    assert found is not None and found[:2] == ("device-plugin", "gpu_admission_failed")
    top = top_root_cause(diagnose_case(case), case.node)
    assert top is not None and top.decisive is not None and "default/train-0" in top.decisive.source


def _with_workload(tmp: Path, last_words: str, phase: str) -> tuple[str, str] | None:
    """falcon-ai with one GPU job on gpu-wk-01 whose container last ended with ``last_words``
    (its terminated message: FallbackToLogsOnError keeps the last log lines there)."""
    root = build_bundle(load_scenario("falcon-ai"), tmp / "b")
    ended = {"exitCode": 1, "reason": "Error", "message": last_words, "finishedAt": "2026-12-05T09:39:58Z"}
    running = {"running": {"startedAt": "2026-12-05T09:40:00Z"}}
    status = {"name": "trainer", "ready": phase == "Running", "restartCount": int(phase == "Running"),
              "image": "nvcr.io/nvidia/pytorch:24.05-py3", "imageID": "",
              "state": running if phase == "Running" else {"terminated": ended},
              "lastState": {"terminated": ended} if phase == "Running" else {}}
    meta = {"name": "trainer-0", "namespace": "ml", "uid": "8d0c7a52-1b1e-4bfc-9d7e-0f5a3e1d2c11"}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
           "spec": {"nodeName": "gpu-wk-01", "containers": [{
               "name": "trainer", "image": "nvcr.io/nvidia/pytorch:24.05-py3",
               "resources": {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}}}]},
           "status": {"phase": phase, "containerStatuses": [status]}}
    path = root / "cluster/pods.json"
    pods = json.loads(path.read_text())
    pods["items"].append(pod)
    path.write_text(json.dumps(pods))
    report = diagnose(load_bundle(root), read_node_observations)
    causes = [rc for n in report.nodes for rc in n.root_causes]
    return (causes[0].component, causes[0].cause) if causes else None


def test_a_gpu_job_whose_last_words_are_nvml_unknown_error_names_device_access(tmp_path: Path) -> None:
    """A Running workload that restarted after NVML lost its devices: the toolkit's
    device access, not healthy."""
    found = _with_workload(tmp_path, "Failed to initialize NVML: Unknown Error\n", "Running")
    assert found == ("container-toolkit", "nvml_device_access_lost")


def test_a_gpu_job_that_exited_with_its_own_error_accuses_nobody(tmp_path: Path) -> None:
    assert _with_workload(tmp_path, "ValueError: learning rate must be positive\n", "Failed") is None


def test_deploy_labels_the_operator_left_empty_are_its_invalid_configuration() -> None:
    """The GPU Operator writes "true" or "false"; an empty value selects no operand and
    disables none (NVIDIA/gpu-operator#491); "false" is a deliberate choice, not a failure."""
    empty = _case({"kind": "node-labels", "labels": {"nvidia.com/gpu.deploy.device-plugin": "",
                                                      "nvidia.com/gpu.deploy.driver": "true"}})
    top = _top(empty)
    assert top is not None and top[:2] == ("gpu-operator", "error_config_invalid")
    assert 'nvidia.com/gpu.deploy.device-plugin: ""' in top[2]
    disabled = _case({"kind": "node-labels", "labels": {"nvidia.com/gpu.deploy.dcgm-exporter": "false"}})
    assert _top(disabled) is None or _top(disabled)[:2] != ("gpu-operator", "error_config_invalid")
