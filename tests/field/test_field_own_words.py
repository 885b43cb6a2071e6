"""A component's own words on field-shaped bundles: the decisive line replaces a state,
names the layer it belongs to, and reads the recent past, the kernel and the journals."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import diagnose_case, top_root_cause


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
    assert found is not None and found[0] == "driver" and found[1].startswith("error_")


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
