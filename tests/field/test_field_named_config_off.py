"""Configuration a component needs that is not there, read where the line names it.

- The kubelet's PodResources API answering that its Get method is off ("PodResources API Get
  method disabled": KubeletPodResourcesGet off before v1.34) names the kubelet's own
  configuration, whichever client relays it: a Kata runtime's device cold plug (NVIDIA
  Confidential Containers troubleshooting, "Pod stuck in ContainerCreating with device cold
  plug failed"), an NRI plugin (containers/nri-plugins#801). An API or method said to be
  disabled is a configuration class, not the device its caller was plugging.
- An environment variable a program requires, unset ("CUDA_MPS_PIPE_DIRECTORY must be set to
  start or to communicate with MPS control daemon"), is an error line in the configuration
  class; the per-claim MPS control daemon the DRA driver's kubelet plugin renders (its
  container mps-control-daemon) is that plugin's (kubernetes-sigs/dra-driver-nvidia-gpu#1143),
  and a container crash-looping is read in the log of the run that ended, which the kubelet
  serves as its current log. The daemon's healthy words (#1153: "To connect CUDA applications
  to this daemon, set env CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps") stay healthy.
"""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

from gpunode.decisive import decisive_line
from gpunode.kb import load_kb

COLD_PLUG = ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to start sandbox '
             '"d0a43b5d": failed to create containerd task: failed to create shim task: device cold plug '
             'failed: cold plug: GetPodResources failed for pod(cuda-vectoradd-kata) in namespace(default): '
             'rpc error: code = Unknown desc = PodResources API Get method disabled')
NRI = ('level=ERROR msg="failed to get pod resources for ns/pod: failed to get pod resources: rpc error: '
       'code = Unknown desc = PodResources API Get method disabled"')


def _kata_pod(message: str) -> list[dict[str, Any]]:
    pod = {"kind": "Pod", "name": "cuda-vectoradd-kata", "namespace": "default"}
    return [{"kind": "node-labels", "labels": {"nvidia.com/gpu.workload.config": "vm-passthrough"}},
            {"kind": "workload", "name": "cuda-vectoradd-kata", "namespace": "default",
             "image": "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0-ubuntu22.04",
             "runtimeClassName": "kata-qemu-nvidia-gpu-snp",
             "resources": {"limits": {"nvidia.com/pgpu": "1"}}, "state": "ContainerCreating"},
            {"kind": "event", "object": pod, "type": "Warning", "reason": "FailedCreatePodSandBox",
             "message": message}]


def test_a_kubelet_api_method_disabled_is_the_kubelets_configuration() -> None:
    case = synthetic_case("x-nc-cold-plug", _kata_pod(COLD_PLUG), healthy=False,
                          cluster={"kubernetes_version": "v1.33.4"})
    assert top_pair(case) == ("kubelet", "error_config_invalid")


def test_the_same_refusal_relayed_by_another_client_has_the_same_class() -> None:
    assert load_kb().line_class(NRI).code == "error_config_invalid"


def test_a_cold_plug_failing_for_the_device_stays_off_the_kubelet() -> None:
    other = COLD_PLUG.replace("GetPodResources failed for pod(cuda-vectoradd-kata) in namespace(default): "
                              "rpc error: code = Unknown desc = PodResources API Get method disabled",
                              "vfio device 0000:0d:00.0 is not viable")
    top = top_pair(synthetic_case("x-nc-cold-plug-device", _kata_pod(other), healthy=False))
    assert top is not None and top[0] != "kubelet"


MPS_UNSET = "CUDA_MPS_PIPE_DIRECTORY must be set to start or to communicate with MPS control daemon"


def _mps_daemon(state: str, log: str) -> list[dict[str, Any]]:
    name = "mps-control-daemon-a0d2f2f3-f0e4-42ff-ab94-eec4b82db2ee-26qs7bc"
    obj = {"kind": "Pod", "name": name, "namespace": "dra-driver-nvidia-gpu"}
    return [{"kind": "pod-state", "component": "dra-kubelet-plugin", "state": "Running"},
            {"kind": "workload", "name": name, "namespace": "dra-driver-nvidia-gpu",
             "container": "mps-control-daemon", "resources": {"limits": {}}, "state": state,
             **({"restarts": 9} if state == "CrashLoopBackOff" else {})},
            {"kind": "log", "object": obj, "text": log}]


def test_an_unset_required_variable_is_an_error_in_the_config_class() -> None:
    found = decisive_line([MPS_UNSET])
    assert found is not None and load_kb().line_class(found.line).code == "error_config_invalid"
    assert decisive_line(["NODE_NAME is set to gpu-wk-01"]) is None


def test_the_drivers_mps_daemon_crash_looping_is_the_plugins() -> None:
    case = synthetic_case("x-nc-mps", _mps_daemon("CrashLoopBackOff", MPS_UNSET), healthy=False)
    assert top_pair(case) == ("dra-kubelet-plugin", "error_config_invalid")


def test_a_running_mps_daemon_saying_where_its_pipe_is_stays_healthy() -> None:
    log = ("[2026-05-31 23:46:49.893 Control 11107] Starting control daemon using socket "
           "/tmp/nvidia-mps/control\n"
           "[2026-05-31 23:46:49.893 Control 11107] To connect CUDA applications to this daemon, "
           "set env CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps\n")
    assert top_pair(synthetic_case("x-nc-mps-ok", _mps_daemon("Running", log))) is None
