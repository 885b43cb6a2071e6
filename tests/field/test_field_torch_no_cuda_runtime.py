"""PyTorch's "No CUDA runtime is found, using CUDA_HOME=..." (torch/utils/cpp_extension.py,
_find_cuda_home: printed where torch.cuda.is_available() is false with a CUDA toolkit in the
image) in a GPU pod that starts under plain runc (no RuntimeClass, NVIDIA's runtime configured
but not the default) is the runtime's default, as the loader's and PyTorch's other "no driver"
words are there: no driver library reached the container. Under NVIDIA's runtime the words do
not say whether the driver, a device or the injection failed, so they are not read as an
injection left out.

Sources: https://github.com/pytorch/pytorch/blob/main/torch/utils/cpp_extension.py (the
warning and its condition); vLLM's platform probe ("Failed to infer device type" after it,
volcano-sh/kthena#969 on k3s without runtimeClassName nvidia); the GPU Operator's note that
pods need the nvidia RuntimeClass where it is not the default (NVIDIA/gpu-operator#1017)."""

from __future__ import annotations

from case import gpu_job_case, synthetic_case
from scoreboard import top_pair

_WARNING = "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'"
_VLLM = "No CUDA runtime is found\nRuntimeError: Failed to infer device type"
_DEFAULT = ("container-toolkit", "nvidia_not_default_runtime")


def test_the_warning_under_plain_runc_is_the_runtimes_default() -> None:
    assert top_pair(gpu_job_case("x-torch-no-cuda", _WARNING)) == _DEFAULT


def test_the_warning_before_vllms_probe_reads_the_same() -> None:
    assert top_pair(gpu_job_case("x-torch-no-cuda-vllm", _VLLM)) == _DEFAULT


def test_under_nvidias_runtime_class_it_is_not_an_injection_left_out() -> None:
    case = synthetic_case("x-torch-no-cuda-rc", [
        {"kind": "workload", "name": "job-0", "namespace": "default", "container": "main",
         "runtimeClassName": "nvidia", "resources": {"limits": {"nvidia.com/gpu": "1"}},
         "state": "CrashLoopBackOff", "restarts": 2, "exit_code": 1},
        {"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
         "container": "main", "text": _WARNING + "\n"}], healthy=False)
    assert top_pair(case) is None


def test_a_pod_that_asks_no_gpu_stays_healthy() -> None:
    case = synthetic_case("x-torch-no-cuda-cpu", [
        {"kind": "workload", "name": "build-0", "namespace": "default", "container": "main",
         "resources": {"limits": {"cpu": "2"}}, "state": "Running"},
        {"kind": "log", "object": {"kind": "Pod", "name": "build-0", "namespace": "default"},
         "container": "main", "text": _WARNING + "\nrunning build_ext\n"}])
    assert top_pair(case) is None
