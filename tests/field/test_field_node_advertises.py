"""A node whose device plugin the report shows working advertises nvidia.com/gpu in the
bundle the builder writes, as a real node does: GKE's own plugin shown Running on a GKE node
(its driver installed by GKE), and a static NVIDIA plugin on a node where a GPU workload was
admitted and ran (the kubelet admits a pod asking for nvidia.com/gpu only while the node
advertises it). A workload's own failure on such a node (its image without GKE's
/usr/local/nvidia on the library path, a command that exits 0 under restartPolicy Always) is
then no evidence against the node's stack. Look-alikes that must stay as they were: a GKE
plugin beside an event showing the node short of the resource, a GKE plugin that is not
running, and a static plugin whose workload never ran. HAMi's plugin shown Running in a scenario
without NVIDIA's advertises its split GPUs, unless the report shows the node short."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from builder import build_case
from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.sim.nodes import GPU_RESOURCE

GKE = {"driver_mode": "host", "components": [], "gpu_node": {"gpus": 1, "gpu": "NVIDIA L4"}}
STATIC = {"driver_mode": "host", "components": [], "device_plugin": "static", "runtime_class": False}


def _allocatable(case: Case) -> dict[str, Any]:
    """The affected node's status.allocatable in the bundle built for ``case``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = build_case(case, Path(tmp) / case.id)
        nodes = json.loads((out / "cluster" / "nodes.json").read_text())["items"]
    return next(dict(n["status"]["allocatable"]) for n in nodes if n["metadata"]["name"] == case.node)


def _gke_job(log: str, *, plugin: str = "Running", more: tuple[dict[str, Any], ...] = ()) -> Case:
    return synthetic_case("x-gke-advertises", [
        {"kind": "pod-state", "component": "gke-device-plugin", "state": plugin},
        {"kind": "workload", "name": "engine-0", "namespace": "default", "container": "engine",
         "state": "CrashLoopBackOff", "restarts": 6, "exit_code": 127},
        {"kind": "log", "object": {"kind": "Pod", "name": "engine-0", "namespace": "default"},
         "text": log + "\n"},
        *more,
    ], platform="gke", cluster=GKE)


# deepgram/self-hosted-resources#177: a job image without GKE's driver mount on its library path
LIBCUDA = ("impeller: error while loading shared libraries: libcuda.so.1: cannot open shared object "
           "file: No such file or directory")
# kubernetes/minikube#19114: the scheduler's line for a node that offers no nvidia.com/gpu
INSUFFICIENT = ("0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are "
                "available: 1 No preemption victims found for incoming pod.")


#: Jobs' own lines on GKE nodes whose stack works (the image leaves /usr/local/nvidia off its
#: library path): deepgram/self-hosted-resources#177, keras-team/kinetic#269, antflydb/antfly#707.
JOB_LINES = (LIBCUDA, "RuntimeError: Device string must not be empty", "MODEL_LOAD_FAILED: CudaUnavailable")


@pytest.mark.parametrize("line", JOB_LINES)
def test_a_running_gke_plugin_advertises_the_gpu_and_a_jobs_library_path_is_not_the_node(line: str) -> None:
    case = _gke_job(line)
    assert _allocatable(case).get(GPU_RESOURCE) == "1"
    assert top_pair(case) is None


def test_a_gke_node_the_scheduler_finds_short_of_gpus_stays_without_them() -> None:
    event = {"kind": "event", "object": {"kind": "Pod", "name": "engine-0", "namespace": "default"},
             "type": "Warning", "reason": "FailedScheduling", "message": INSUFFICIENT}
    case = _gke_job(LIBCUDA, more=(event,))
    assert GPU_RESOURCE not in _allocatable(case)
    assert top_pair(case) is not None


def test_a_gke_plugin_that_is_not_running_advertises_nothing() -> None:
    case = _gke_job(LIBCUDA, plugin="CrashLoopBackOff")
    assert GPU_RESOURCE not in _allocatable(case)
    assert top_pair(case) is not None


def _gke_pool(*evidence: dict[str, Any]) -> Case:
    return synthetic_case("x-gke-pool", list(evidence), platform="gke", cluster=GKE)


# Smana/cloud-native-ref#1902: a pod spec written for another cloud, refused by the API server
REFUSED = {"kind": "event", "object": {"kind": "ReplicaSet", "name": "engine", "namespace": "default"},
           "type": "Warning", "reason": "FailedCreate",
           "message": 'pods "engine-0" is forbidden: pod rejected: RuntimeClass "nvidia" not found'}


def test_a_gke_pool_without_the_operator_runs_gkes_plugin_when_the_report_does_not_name_it() -> None:
    # GKE deploys its own plugin on every GPU pool (cloud.google.com/kubernetes-engine/docs/how-to/gpus)
    case = _gke_pool(REFUSED)
    assert _allocatable(case).get(GPU_RESOURCE) == "1"
    assert top_pair(case) is None


def test_a_gke_pool_shown_short_of_gpus_gets_no_plugin_by_default() -> None:
    # GoogleCloudPlatform/container-engine-accelerators#196: no plugin ran until installed by hand
    pending = {"kind": "workload", "name": "gpu-pod", "namespace": "default",
               "resources": {"limits": {"nvidia.com/gpu": "1"}}, "state": "Pending",
               "message": "X Insufficient nvidia.com/gpu"}
    case = _gke_pool(pending)
    assert GPU_RESOURCE not in _allocatable(case)
    assert top_pair(case) is not None


def _static(workload: dict[str, Any]) -> Case:
    return synthetic_case("x-static-admitted", [
        {"kind": "workload", "name": "cuda-container", "namespace": "default",
         "container": "cuda-container", "image": "nvidia/cuda:9.0-devel",
         "resources": {"limits": {"nvidia.com/gpu": "1"}}, **workload},
    ], platform="docker", cluster=STATIC)


def test_a_gpu_pod_that_ran_and_exited_zero_shows_the_static_plugin_advertising() -> None:
    # NVIDIA/k8s-device-plugin#106: the README's pod, no command, restartPolicy Always
    case = _static({"state": "CrashLoopBackOff", "restarts": 1, "exit_code": 0, "reason": "Completed"})
    assert int(_allocatable(case).get(GPU_RESOURCE, "0")) >= 1
    assert top_pair(case) is None


def test_a_gpu_pod_that_never_ran_leaves_the_static_plugin_as_it_was() -> None:
    case = _static({"state": "Pending"})
    assert GPU_RESOURCE not in _allocatable(case)
    assert top_pair(case) == ("device-plugin", "device_plugin_zero_gpus")


# blog.gitcode.com 33c117f2 (a Karpenter thread): one GPU node, its GPU held by a running pod,
# the next pod Pending on the scheduler's fit count
FULL = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu"


def _static_pair(second: dict[str, Any], *more: dict[str, Any]) -> Case:
    return synthetic_case("x-static-full", [
        {"kind": "workload", "name": "gpu-job-0", "namespace": "default", "container": "cuda",
         "resources": {"limits": {"nvidia.com/gpu": "1"}}, "state": "Running"},
        second, *more,
    ], platform="eks", cluster={**STATIC, "gpu_node": {"gpus": 1}})


def _pending(name: str) -> dict[str, Any]:
    return {"kind": "workload", "name": name, "namespace": "default", "container": "cuda",
            "resources": {"limits": {"nvidia.com/gpu": "1"}}, "state": "Pending", "message": FULL}


def _event(name: str, reason: str, message: str) -> dict[str, Any]:
    return {"kind": "event", "object": {"kind": "Pod", "name": name, "namespace": "default"},
            "type": "Warning", "reason": reason, "message": message}


def test_the_schedulers_count_for_another_pod_does_not_unadvertise_a_node_whose_pod_runs() -> None:
    case = _static_pair(_pending("gpu-job-1"), _event("gpu-job-1", "FailedScheduling", FULL))
    assert _allocatable(case).get(GPU_RESOURCE) == "1"
    assert top_pair(case) is None


def test_the_kubelets_refusal_on_the_node_keeps_it_without_gpus() -> None:
    # the kubelet's own admission count: the node had none of the resource when it refused
    refused = ("Node didn't have enough resource: nvidia.com/gpu, requested: 1, used: 0, capacity: 0")
    case = _static_pair(_pending("gpu-job-1"), _event("gpu-job-1", "OutOfnvidia.com/gpu", refused))
    assert GPU_RESOURCE not in _allocatable(case)


def test_a_pending_pod_alone_with_the_schedulers_count_leaves_the_static_plugin_as_it_was() -> None:
    case = synthetic_case("x-static-pending", [_pending("gpu-job-1"),
                                               _event("gpu-job-1", "FailedScheduling", FULL)],
                          platform="eks", cluster={**STATIC, "gpu_node": {"gpus": 1}})
    assert GPU_RESOURCE not in _allocatable(case)


HAMI = {"driver_mode": "host", "components": [], "gpu_node": {"gpus": 8}}
# Project-HAMi/HAMi#591: the scheduler extender refusing a request larger than the node's GPUs
HAMI_REFUSAL = ('I1104 06:32:23.952296       1 score.go:225] "calcScore:node not fit pod" '
                'pod="default/test-6d5bc9d5dc-knrqr" node="gpu-wk-01"')


def _hami(plugin: str, *more: dict[str, Any]) -> Case:
    return synthetic_case("x-hami-advertises", [
        {"kind": "pod-state", "component": "hami-device-plugin", "state": plugin},
        {"kind": "log", "component": "hami-scheduler", "container": "vgpu-scheduler-extender",
         "text": HAMI_REFUSAL + "\n"},
        *more,
    ], cluster=HAMI)


def test_a_running_hami_plugin_advertises_its_split_gpus() -> None:
    # HAMi's README: allocatable nvidia.com/gpu is the GPU count times deviceSplitCount (10)
    case = _hami("Running")
    assert _allocatable(case).get(GPU_RESOURCE) == "80"
    assert top_pair(case) is None


def test_a_hami_plugin_not_running_or_a_node_shown_short_keeps_what_the_report_shows() -> None:
    assert GPU_RESOURCE not in _allocatable(_hami("CrashLoopBackOff"))
    short = {"kind": "event", "object": {"kind": "Pod", "name": "engine-0", "namespace": "default"},
             "type": "Warning", "reason": "FailedScheduling", "message": INSUFFICIENT}
    case = _hami("Running", short)
    assert GPU_RESOURCE not in _allocatable(case)
    assert top_pair(case) is not None
