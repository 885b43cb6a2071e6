"""GPU workloads in trouble (gpunode.workloads): which ones fail, and what the report says
of them. Pods are shaped as the API returns them (kubectl get pod -o json)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest

from gpunode.bundle.kube import Event, Pod
from gpunode.model import (
    ClusterReport,
    ComponentReport,
    NodeReport,
    Report,
    RootCause,
    SourceInfo,
    Status,
    WorkloadIssue,
)
from gpunode.workloads import _leads_to, failing

NOW = datetime(2025, 5, 20, 9, 15, tzinfo=UTC)
GPU = {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}}


def _pod(status: dict[str, Any]) -> Pod:
    obj = {
        "metadata": {"name": "train-0", "namespace": "ml"},
        "spec": {
            "nodeName": "gpu-wk-01",
            "containers": [{"name": "cuda", "image": "cuda:12", "resources": GPU}],
        },
        "status": status,
    }
    return msgspec.convert(obj, Pod)


def _event(reason: str, message: str, kind: str = "Warning") -> Event:
    return msgspec.convert(
        {
            "reason": reason,
            "message": message,
            "type": kind,
            "involvedObject": {"kind": "Pod", "name": "train-0", "namespace": "ml"},
        },
        Event,
    )


def _container(
    state: dict[str, Any], last: dict[str, Any] | None = None, restarts: int = 0
) -> dict[str, Any]:
    return {"name": "cuda", "ready": False, "restartCount": restarts, "state": state, "lastState": last or {}}


ADMISSION = {
    "phase": "Failed",
    "reason": "UnexpectedAdmissionError",
    "message": "Pod was rejected: Allocate failed due to requested number of devices unavailable "
    "for nvidia.com/gpu. Requested: 1, Available: 0, which is unexpected",
}
CRASH = {
    "phase": "Running",
    "containerStatuses": [
        _container(
            {
                "waiting": {
                    "reason": "CrashLoopBackOff",
                    "message": "back-off 5m0s restarting failed container",
                }
            },
            {
                "terminated": {
                    "reason": "Error",
                    "exitCode": 1,
                    "message": "Failed to initialize NVML: Unknown Error",
                    "finishedAt": "2025-05-20T09:10:00Z",
                }
            },
            restarts=7,
        )
    ],
}
CREATING = {
    "phase": "Pending",
    "containerStatuses": [_container({"waiting": {"reason": "ContainerCreating"}})],
}
PENDING = {
    "phase": "Pending",
    "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
}
OLD_ERROR = {
    "phase": "Running",
    "containerStatuses": [
        _container(
            {"running": {"startedAt": "2025-05-18T10:00:00Z"}},
            {
                "terminated": {
                    "reason": "Error",
                    "exitCode": 1,
                    "message": "CUDA error: unknown error",
                    "finishedAt": "2025-05-18T09:59:00Z",
                }
            },
            restarts=1,
        )
    ],
}
RECENT_ERROR = {
    "phase": "Running",
    "containerStatuses": [
        _container(
            {"running": {"startedAt": "2025-05-20T09:01:00Z"}},
            {
                "terminated": {
                    "reason": "Error",
                    "exitCode": 1,
                    "message": "CUDA error: unknown error",
                    "finishedAt": "2025-05-20T09:00:00Z",
                }
            },
            restarts=1,
        )
    ],
}


@pytest.mark.parametrize(
    ("status", "events", "expected"),
    [
        (ADMISSION, [], True),  # the kubelet refused it
        (CRASH, [], True),  # keeps ending in an error
        (RECENT_ERROR, [], True),  # ended in an error within the hour, runs again
        (OLD_ERROR, [], False),  # an error two days ago, running since
        (
            PENDING,
            [_event("FailedScheduling", "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.")],
            False,
        ),
        (
            PENDING,
            [_event("FailedScheduling", "1 node(s) had untolerated taint {nvidia.com/gpu: present}")],
            False,
        ),
        (CREATING, [], False),  # being created, nothing said against it
        (
            CREATING,
            [
                _event(
                    "FailedCreatePodSandBox",
                    "Failed to create pod sandbox: rpc error: code = Unknown "
                    'desc = failed to get sandbox runtime: no runtime for "nvidia" is configured',
                )
            ],
            True,
        ),
        (CREATING, [_event("Scheduled", "Successfully assigned ml/train-0 to gpu-wk-01", "Normal")], False),
    ],
)
def test_a_workload_fails_or_waits(status: dict[str, Any], events: list[Event], expected: bool) -> None:
    assert failing(_pod(status), events, NOW) is expected


def _issue(failing: bool) -> WorkloadIssue:
    return WorkloadIssue("gpu-wk-01", "ml", "train-0", "Pending", failing)


def _report(*issues: WorkloadIssue) -> Report:
    node = NodeReport("gpu-wk-01", Status.OK, (), ())
    return Report(
        source=SourceInfo("manual", "x"),
        cluster=ClusterReport(None, (), ()),
        nodes=(node,),
        groups=(),
        gpu_workloads=issues,
    )


def test_only_a_failing_workload_is_a_failure_of_the_report() -> None:
    assert not _report().has_failures
    assert not _report(_issue(False)).has_failures  # waiting to be scheduled: a busy cluster
    assert _report(_issue(False), _issue(True)).has_failures


def _root(component: str) -> RootCause:
    return RootCause(component, 1, "gsp_firmware_unresponsive", "t", Status.FAILED, (), ())


def test_a_workload_leads_down_to_the_root_cause_of_the_component_it_names() -> None:
    plugin = ComponentReport(
        "device-plugin", 3, "NVIDIA device plugin", Status.FAILED, "s", blocked_by=("driver",)
    )
    node = NodeReport("gpu-wk-01", Status.FAILED, (_root("driver"),), (plugin,))
    assert _leads_to(node, "device-plugin") == "driver"
    assert _leads_to(node, "driver") == "driver"
    assert _leads_to(node, None) is None
    assert _leads_to(NodeReport("gpu-wk-01", Status.OK, (), (plugin,)), "device-plugin") is None
