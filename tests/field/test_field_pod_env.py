"""A GPU workload's failure read with its own NVIDIA env (checks.pod_env): a driver library of a
capability its NVIDIA_DRIVER_CAPABILITIES leaves out, no GPU where NVIDIA_VISIBLE_DEVICES asks
for none, an unknown device id the pod lists itself, are the pod's own request and accuse no
stack component. The same words without the env, with an env that asks for the capability or
for `all`, or with a device id the pod does not list, keep today's reading. Semantics:
https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html
(NVIDIA_VISIBLE_DEVICES none/void/empty, NVIDIA_DRIVER_CAPABILITIES compute/utility/video/...,
empty = utility,compute: https://github.com/containerd/nerdctl/pull/1024). Sources of the words:
mudler/LocalAI#11973 (compose capabilities gpu,utility; libcuda.so.1 missing), NVIDIA/enroot#207
(NVIDIA_VISIBLE_DEVICES=0,1,4,5; "device error: 4: unknown device")."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import diagnose_case, top_pair

LIBCUDA = "ImportError: libcuda.so.1: cannot open shared object file\n"
NO_DRIVER = "RuntimeError: Found no NVIDIA driver on your system.\n"
UNKNOWN = "nvidia-container-cli: device error: 4: unknown device\n"


def _log_case(text: str, env: dict[str, str] | None) -> Case:
    workload: dict[str, Any] = {"kind": "workload", "name": "job", "namespace": "default",
                                "container": "main", "state": "Running"}
    if env is not None:
        workload["env"] = env
    evidence = [workload, {"kind": "log", "object": {"kind": "Pod", "name": "job", "namespace": "default"},
                           "container": "main", "text": text}]
    return synthetic_case("x-pod-env", evidence, healthy=False, cluster={"driver_mode": "host"})


def _event_case(env: dict[str, str] | None) -> Case:
    workload: dict[str, Any] = {"kind": "workload", "name": "job", "namespace": "default",
                                "container": "main", "state": "RunContainerError"}
    if env is not None:
        workload["env"] = env
    evidence = [workload, {"kind": "event", "object": {"kind": "Pod", "name": "job", "namespace": "default"},
                           "type": "Warning", "reason": "Failed", "message": UNKNOWN}]
    return synthetic_case("x-pod-env-id", evidence, healthy=False, cluster={"driver_mode": "host"})


def test_libcuda_missing_without_compute_asked_is_the_pods_own() -> None:
    assert top_pair(_log_case(LIBCUDA, {"NVIDIA_DRIVER_CAPABILITIES": "utility"})) is None


def test_cudas_no_driver_without_compute_asked_is_the_pods_own() -> None:
    assert top_pair(_log_case(NO_DRIVER, None)) is not None
    assert top_pair(_log_case(NO_DRIVER, {"NVIDIA_DRIVER_CAPABILITIES": "utility,video"})) is None
    assert top_pair(_log_case(NO_DRIVER, {"NVIDIA_DRIVER_CAPABILITIES": "compute,utility"})) is not None


def test_libcuda_missing_keeps_its_reading_where_compute_was_asked_or_unknown() -> None:
    today = top_pair(_log_case(LIBCUDA, None))
    assert today is not None and today[0] == "container-toolkit"
    for env in ({"NVIDIA_DRIVER_CAPABILITIES": "compute,utility"}, {"NVIDIA_DRIVER_CAPABILITIES": "all"},
                {"NVIDIA_DRIVER_CAPABILITIES": ""}, {"NVIDIA_VISIBLE_DEVICES": "all"}):
        assert top_pair(_log_case(LIBCUDA, env)) == today, env


def test_no_gpu_asked_is_the_pods_own() -> None:
    assert top_pair(_log_case(LIBCUDA, {"NVIDIA_VISIBLE_DEVICES": "void"})) is None


def test_unknown_device_the_pod_lists_is_its_own() -> None:
    assert top_pair(_event_case({"NVIDIA_VISIBLE_DEVICES": "0,1,4,5"})) is None


def test_unknown_device_the_pod_does_not_list_keeps_the_plugins_reading() -> None:
    today = top_pair(_event_case(None))
    assert today is not None
    assert top_pair(_event_case({"NVIDIA_VISIBLE_DEVICES": "0,1"})) == today
    assert top_pair(_event_case({"NVIDIA_VISIBLE_DEVICES": "all"})) == today


def test_the_workload_line_the_pod_explains_names_no_stack_component() -> None:
    """The workload stays listed as failing, its line no longer named the device plugin's."""
    own = diagnose_case(_event_case({"NVIDIA_VISIBLE_DEVICES": "0,1,4,5"})).gpu_workloads
    today = diagnose_case(_event_case(None)).gpu_workloads
    assert [(w.failing, w.component) for w in own] == [(True, None)]
    assert [(w.failing, w.component is not None) for w in today] == [(True, True)]
