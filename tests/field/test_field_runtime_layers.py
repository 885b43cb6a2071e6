"""The layer an error names in the container toolkit, the runtime and its configuration:
a GPU job whose container got no driver library or GPU, in a pod that starts under plain
runc (no RuntimeClass, NVIDIA's runtime not the default), is the runtime's configuration;
settled by the pod's runtime and the node's driver, not by the job's words alone."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from containerd_configs import RUNC_DEFAULT
from scoreboard import top_pair

from gpunode.catalog import load_catalog
from gpunode.checks.named import hook_layer, runtime_own_error


def _case(*evidence: dict[str, Any], **cluster: Any) -> Case:
    raw = {"id": "x-runtime-layers", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "evidence": list(evidence), "expect": {"healthy": False}, "cluster": cluster}
    return msgspec.convert(raw, Case)


def _log(text: str, name: str = "tf-job") -> dict[str, Any]:
    return {"kind": "log", "object": {"kind": "Pod", "name": name}, "text": text}


#: NVIDIA/nvidia-docker#828: TensorFlow in a Kubernetes pod that did not get the nvidia runtime.
NO_LIBCUDA = "ImportError: libcuda.so.1: cannot open shared object file: No such file or directory\n"
CONFIG = {"kind": "node-file", "path": "etc/containerd/config.toml", "text": RUNC_DEFAULT}
NOT_DEFAULT = ("container-toolkit", "nvidia_not_default_runtime")


def test_a_job_without_driver_libraries_under_plain_runc_is_the_runtime_s_default() -> None:
    assert top_pair(_case(_log(NO_LIBCUDA), CONFIG, cdi=False)) == NOT_DEFAULT
    # the GPU Operator's CDI layout: operands name RuntimeClass nvidia, runc stays the default
    assert top_pair(_case(_log(NO_LIBCUDA), cdi=True)) == NOT_DEFAULT


def test_the_same_words_where_nvidia_is_the_default_runtime_blame_no_runtime_default() -> None:
    # negative: nvidia is containerd's default (the builder's non-CDI layout), so the pod got it
    assert top_pair(_case(_log(NO_LIBCUDA), cdi=False)) != NOT_DEFAULT


def test_a_job_that_found_its_gpu_says_nothing_about_the_runtime() -> None:
    # negative: a healthy job under the same runc default
    text = "INFO Found 1 CUDA device(s); using GPU 0\n"
    assert top_pair(_case(_log(text), cdi=True)) is None


def test_a_job_finding_no_device_of_another_kind_says_nothing_about_the_runtime() -> None:
    # negative: NCCL's network probe finding no InfiniBand device (NVIDIA/nccl#226's log,
    # tests/fixtures/real/broken/interconnect), an INFO line about RDMA NICs, says nothing of the
    # GPU the container got
    text = "llm-0:394:394 [3] NCCL INFO NET/IB : No device found.\n"
    assert top_pair(_case(_log(text), cdi=True)) != NOT_DEFAULT


#: NVIDIA/gpu-operator#1017 and canonical/microk8s-core-addons#400: the CUDA vector-add sample in a
#: pod that names no RuntimeClass, where the operator's CDI is enabled but not the default.
VECTOR_ADD = ("Failed to allocate device vector A (error code CUDA driver version is insufficient "
              "for CUDA runtime version)!\n")
TOO_OLD = ("driver", "cuda_driver_too_old")


def test_cuda_s_insufficient_driver_under_plain_runc_with_the_operator_s_cdi_only_enabled() -> None:
    # the ClusterPolicy's cdi.enabled alone adds the nvidia-cdi RuntimeClass; the default stays
    # runc, so the container got no driver library even though containerd's own CDI switch is on
    assert top_pair(_case(_log(VECTOR_ADD, "cuda-vectoradd"), cdi=True)) == NOT_DEFAULT


def test_cuda_s_insufficient_driver_where_the_pod_gets_nvidia_s_runtime_is_the_driver_s() -> None:
    # negatives: nvidia is containerd's default (the builder's non-CDI layout); and a platform
    # that installs the NVIDIA runtime itself, whose runtime has CDI on: the operator's policy does
    # not describe it, so the container may have the driver's libraries and the words stand
    assert top_pair(_case(_log(VECTOR_ADD, "cuda-vectoradd"), cdi=False)) == TOO_OLD
    assert _on("aks", _log(VECTOR_ADD, "cuda-vectoradd")) == TOO_OLD


# A failed OCI hook is the layer of the hook's own words, not of the runtime's report of it.
NAMED_IN = load_catalog().named_in
#: NVIDIA/gpu-operator#1598: crun of OpenShift 4.18.22 failing NVIDIA's hook; crun gives only the exit code.
CRUN_SILENT = "error executing hook `/usr/local/nvidia/toolkit/nvidia-container-runtime-hook` (exit code: 1)"
#: containerd/nerdctl#4614: nerdctl's own hook, rendered by containerd, fails under runc.
RUNC_ENGINE_HOOK = ('OCI runtime create failed: runc create failed: unable to start container process: error '
                    'during container init: error running createRuntime hook #0: exit status 1, stdout: , '
                    'stderr: containerd: template: oci-hook:1: unexpected "|" in command: unknown')
#: runc's relay of a hook's words ("error running hook: <err>, stdout: <out>, stderr: <err>", runc's
#: libcontainer/configs) around what nvidia-container-cli wrote in NVIDIA/gpu-operator#511.
RUNC_NVIDIA_WORDS = ("error during container init: error running hook #0: error running hook: exit status 1, "
                     "stdout: , stderr: nvidia-container-cli.real: initialization error: load library "
                     "failed: libnvidia-ml.so.1: cannot open shared object file: no such file or directory: "
                     "unknown")


def test_a_hook_that_failed_without_words_of_its_own_is_the_runtime_s() -> None:
    assert hook_layer(NAMED_IN, CRUN_SILENT) == "container-runtime"
    assert hook_layer(NAMED_IN, CRUN_SILENT + ": unknown") == "container-runtime"


def test_a_hook_of_the_container_engine_itself_is_the_runtime_s() -> None:
    assert hook_layer(NAMED_IN, RUNC_ENGINE_HOOK) == "container-runtime"


def test_nvidia_s_hook_speaking_is_the_layer_its_words_name() -> None:
    # negative: the hook's own words name NVIDIA's library: never the runtime's
    # (the catalog names the CLI's words as the toolkit's: compared with a constant, not with
    # the catalog's answer, which a None on both sides would also satisfy)
    assert NAMED_IN("nvidia-container-cli: initialization error") == "container-toolkit"
    assert hook_layer(NAMED_IN, RUNC_NVIDIA_WORDS) == "container-toolkit"


def test_a_report_cut_before_the_hook_s_words_or_no_hook_at_all_is_left_undecided() -> None:
    # negative: runc's report wrapped before "stderr:" (aks-engine#920's paste), and a line with no hook
    wrapped = 'running prestart hook 0 caused \\"error running hook: exit status 1, stdout:'
    assert hook_layer(NAMED_IN, wrapped) is None
    assert hook_layer(NAMED_IN, "failed to create containerd task: context deadline exceeded") is None


def _policy(path: str) -> dict[str, Any]:
    """A ClusterPolicy whose toolkit env names the containerd config to write (rancher/rke2-docs#263)."""
    env = [{"name": "CONTAINERD_CONFIG", "value": path},
           {"name": "CONTAINERD_SOCKET", "value": "/run/k3s/containerd/containerd.sock"}]
    return {"kind": "cluster-object", "resource": "clusterpolicies",
            "object": {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy",
                       "metadata": {"name": "cluster-policy"},
                       "spec": {"toolkit": {"enabled": True, "env": env}}}}


def _on(platform: str, *evidence: dict[str, Any]) -> tuple[str, str] | None:
    return top_pair(msgspec.structs.replace(_case(*evidence), platform=platform))


RKE2 = "/var/lib/rancher/rke2/agent/etc/containerd/"


def test_a_toolkit_told_to_write_the_config_rke2_renders_from_its_template_writes_the_wrong_file() -> None:
    # rancher/rke2-docs#263: CONTAINERD_CONFIG named config.toml; GPU pods got no driver libraries
    assert _on("rke2", _policy(RKE2 + "config.toml")) == ("container-toolkit", "containerd_config_wrong_path")


def test_the_template_itself_or_a_platform_without_one_is_not_judged() -> None:
    # negatives: the documented template path on RKE2, and a stock containerd's own config.toml
    assert _on("rke2", _policy(RKE2 + "config.toml.tmpl")) is None
    assert _on("generic", _policy("/etc/containerd/config.toml")) is None


#: awslabs/amazon-eks-ami#2498: runc 1.3.2 on Amazon Linux 2 writes a CFS quota the kernel refuses.
RUNC_OWN = ("failed to create containerd task: failed to create shim task: OCI runtime create failed: "
            "runc create failed: unable to start container process: error during container init: error "
            'setting cgroup config for procHooks process: failed to write "13000": write /sys/fs/cgroup/'
            "cpu,cpuacct/kubepods.slice/cpu.cfs_quota_us: invalid argument: unknown")


def _event(message: str) -> dict[str, Any]:
    return {"kind": "event", "object": {"kind": "Pod", "name": "frontend"}, "type": "Warning",
            "reason": "Failed", "message": message}


def test_runc_failing_by_its_own_name_for_a_gpu_job_is_the_runtime_s() -> None:
    assert runtime_own_error(RUNC_OWN)
    top = top_pair(_case(_event(RUNC_OWN)))
    assert top is not None and top[0] == "container-runtime"


def test_runc_relaying_nvidia_s_words_or_no_runtime_named_is_not_the_runtime_s() -> None:
    # negatives: the same wrapper around nvidia-container-cli's words (NVIDIA/nvidia-container-toolkit#108)
    # names the toolkit; a containerd timeout names no OCI runtime at all
    wrapper = RUNC_OWN.split("error during", maxsplit=1)[0]
    relayed = wrapper + "nvidia-container-cli: device error: unknown device: unknown"
    top = top_pair(_case(_event(relayed)))
    assert top is not None and top[0] == "container-toolkit"
    assert not runtime_own_error("failed to create containerd task: context deadline exceeded: unknown")


#: NixOS/nixpkgs#305312: Docker 25, CDI feature off: no "cdi" device driver for --device nvidia.com/gpu=all.
DOCKER_NO_CDI = ('docker: Error response from daemon: could not select device driver "cdi" with '
                 "capabilities: [].")


def test_docker_without_a_device_driver_for_a_gpu_request_is_the_toolkit_s_registration() -> None:
    assert NAMED_IN(DOCKER_NO_CDI) == "container-toolkit"
    found = top_pair(_case(_event(DOCKER_NO_CDI)))
    assert found == ("container-toolkit", "docker_gpu_capability_unregistered")


def test_docker_s_other_device_drivers_and_runtimes_name_no_gpu_layer() -> None:
    # negatives: a non-GPU device driver, and an unknown runtime (the catalogue's near miss)
    assert NAMED_IN('could not select device driver "amd" with capabilities: [].') is None
    assert NAMED_IN("docker: Error response from daemon: unknown or invalid runtime name: runsc.") is None
