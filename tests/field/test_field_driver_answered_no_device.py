"""A GPU job's words that a driver answered and counted no device are no sign of a container
started without NVIDIA's runtime. PyTorch raises "No CUDA GPUs are available" where
cudaGetDeviceCount gave 0 or cudaErrorNoDevice, and "Found no NVIDIA driver on your system"
where the runtime found no driver library at all (cudaErrorInsufficientDriver with
cudaDriverGetVersion at 0: pytorch/pytorch c10/cuda/CUDAFunctions.cpp; the CUDA runtime API's
version management, "If no driver is installed, then 0 is returned"). Plain runc puts no driver
library into a container, so only the second form is read as the runtime's default
(nvidia_not_default_runtime). The first is also what a process gets whose own
CUDA_VISIBLE_DEVICES is empty: a Ray Serve replica building vLLM's engine without a GPU of its
own (ray-project/ray#51154, vllm-project/vllm#14610), the node healthy."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

#: ray-project/ray#51154's last line, in a Ray worker pod that runs
RAY_REPLICA = ("ray::ServeReplica:llm:VLLMDeployment.initialize_and_get_metadata() (pid=1886, "
               "ip=10.58.29.125)\n"
               "RuntimeError: Traceback (most recent call last):\n"
               "RuntimeError: No CUDA GPUs are available")
#: PyTorch's warning where the container holds no driver library
NO_DRIVER = ("/usr/lib/python3/site-packages/torch/cuda/__init__.py:52: UserWarning: CUDA initialization: "
             "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed "
             "a driver from http://www.nvidia.com/Download/index.aspx")


def _pod(text: str, healthy: bool) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "gpu-worker-0", "namespace": "default", "container": "worker",
         "state": "Running"},
        {"kind": "log", "object": {"kind": "Pod", "name": "gpu-worker-0", "namespace": "default"},
         "container": "worker", "text": text + "\n"}]
    return synthetic_case("x-driver-answered", evidence, healthy=healthy)


def test_a_process_given_no_gpu_by_its_framework_leaves_the_node_healthy() -> None:
    assert top_pair(_pod(RAY_REPLICA, healthy=True)) is None


def test_nvidia_smi_counting_no_device_is_not_the_runtimes_default() -> None:
    top = top_pair(_pod("No devices were found", healthy=False))
    assert top is None or top[1] != "nvidia_not_default_runtime"


def test_no_driver_library_under_plain_runc_is_still_the_runtimes_default() -> None:
    assert top_pair(_pod(NO_DRIVER, healthy=False)) == ("container-toolkit", "nvidia_not_default_runtime")


def test_a_no_driver_line_before_the_no_gpu_line_is_read() -> None:
    text = NO_DRIVER + "\nRuntimeError: No CUDA GPUs are available"
    assert top_pair(_pod(text, healthy=False)) == ("container-toolkit", "nvidia_not_default_runtime")
