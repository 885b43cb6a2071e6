"""ML frameworks' and inference engines' words for the GPU stack failing at initialisation
(src/gpunode/data/job_errors/frameworks.toml), on real lines from public reports:

- CUDA's initialization error from the first call, in PyTorch's words (c10/cuda/CUDAFunctions.cpp,
  https://github.com/pytorch/pytorch/blob/main/c10/cuda/CUDAFunctions.cpp; an HPC node's jobs,
  https://hpc-community.unige.ch/t/4121) and ggml's (Ollama's runner on a T4,
  https://github.com/meta-llama/llama3/issues/215): the driver, as cuInit's own 3 is read;
- CUDA's unknown error from the first call in ggml's, TensorRT's and Ollama's words
  (https://github.com/ggml-org/llama.cpp/issues/7218, fixed by loading nvidia_uvm;
  https://github.com/ollama/ollama/issues/8638): the driver, nvidia_uvm missing where the node's
  lsmod lacks it (checks.uvm_words);
- Numba finding no libcuda (numba/cuda/cudadrv/driver.py; https://github.com/serrob23/falsecolor/issues/73):
  the toolkit's missing driver libraries;
- TensorFlow's diagnostics finding no kernel module (cuda_diagnostics.cc): the driver not loaded.

A program's own errors and a healthy framework's notices stay silent."""

from __future__ import annotations

from typing import Any

import pytest
from case import Case, running_job_case, synthetic_case
from scoreboard import top_pair

from gpunode.job_errors import job_error

_LSMOD_NO_UVM = ("Module                  Size  Used by\n"
                 "nvidia_modeset       1241088  0\nnvidia              56500224  1 nvidia_modeset\n")


@pytest.mark.parametrize("line", [
    # https://hpc-community.unige.ch/t/4121
    "RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu.",
    # torch.cuda's warning form of the same (c10's message inside "CUDA initialization: ...")
    "/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py:138: UserWarning: CUDA initialization: "
    "CUDA driver initialization failed, you might not have a CUDA gpu. (Triggered internally at "
    "../c10/cuda/CUDAFunctions.cpp:108.)",
    # https://github.com/meta-llama/llama3/issues/215
    "ggml_cuda_init: failed to initialize CUDA: initialization error",
    "[TRT] [W] CUDA initialization failure with error: 3. Please check your CUDA installation: "
    "http://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html",
])
def test_initialization_error_at_the_first_call_is_the_driver(line: str) -> None:
    assert top_pair(running_job_case("x-fw-init-3", line)) == ("driver", "error_device")


@pytest.mark.parametrize("line", [
    # https://github.com/ggml-org/llama.cpp/issues/7218
    "ggml_cuda_init: failed to initialize CUDA: unknown error",
    "[TRT] [W] CUDA initialization failure with error: 999. Please check your CUDA installation: "
    "http://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html",
    # https://github.com/ollama/ollama/issues/8638
    'time=2025-01-28T17:39:45.000+03:00 level=WARN source=gpu.go:669 msg="unknown error initializing cuda '
    'driver library /usr/lib/x86_64-linux-gnu/libcuda.so.550.120: cuda driver library init failure: 999. see '
    'https://github.com/ollama/ollama/blob/main/docs/troubleshooting.md for more information"',
])
def test_unknown_error_at_the_first_call_is_the_driver_and_uvm_where_lsmod_says(line: str) -> None:
    assert top_pair(running_job_case("x-fw-init-999", line)) == ("driver", "error_device")
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "job-0", "namespace": "default", "container": "job", "state": "Running"},
        {"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
         "container": "job", "text": line + "\n"},
        {"kind": "node-cmd", "name": "lsmod.txt", "text": _LSMOD_NO_UVM}]
    assert top_pair(synthetic_case("x-fw-init-999-uvm", evidence)) == ("driver", "nvidia_uvm_missing")


def test_numba_finding_no_driver_library_is_the_injection() -> None:
    # https://github.com/serrob23/falsecolor/issues/73
    line = ("numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: "
            "CUDA driver library cannot be found.")
    entry = job_error(line)
    assert entry is not None and entry.component == "container-toolkit"
    assert entry.cause == "container_cli_no_driver_libs"


def test_tensorflow_diagnostics_without_kernel_module_is_the_driver_not_loaded() -> None:
    log = "\n".join([
        "E tensorflow/stream_executor/cuda/cuda_driver.cc:271] failed call to cuInit: CUDA_ERROR_NO_DEVICE: "
        "no CUDA-capable device is detected",
        "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:169] retrieving CUDA diagnostic information "
        "for host: train-0",
        "E tensorflow/stream_executor/cuda/cuda_diagnostics.cc:204] kernel driver does not appear to be "
        "running on this host (train-0): /proc/driver/nvidia/version does not exist"])
    assert top_pair(running_job_case("x-fw-no-module", log)) == ("driver", "driver_not_loaded")


@pytest.mark.parametrize("line", [
    # the diagnostics' DSO search, printed also where libcuda.so.1 was loaded
    # (https://github.com/tensorflow/tensorflow/issues/40874)
    "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:200] libcuda reported version is: Not found: "
    "was unable to find libcuda.so DSO loaded into this program",
    # numba -s's summary says either of two things
    "CUDA driver library cannot be found or no CUDA enabled devices are present.",
    # a later call's initialization error, the program's own
    "CUDA error 3 at ggml-cuda.cu:5661: initialization error",
    "[TRT] [E] createInferRuntime: Error Code 6: API Usage Error (CUDA initialization failure with error: 2)",
])
def test_words_that_name_no_layer_are_not_read(line: str) -> None:
    entry = job_error(line)
    assert entry is None or not entry.id.startswith(("framework-", "numba-", "xla-kernel-driver"))


@pytest.mark.parametrize("log", [
    "\n".join([
        "I external/local_tsl/tsl/cuda/cudart_stub.cc:31] Could not find cuda drivers on your machine, "
        "GPU will not be used.",
        "E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:9261] Unable to register cuDNN factory: "
        "Attempting to register factory for plugin cuDNN when one has already been registered",
        "W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not find TensorRT",
        "I tensorflow/compiler/xla/stream_executor/cuda/cuda_gpu_executor.cc:894] successful NUMA node read "
        "from SysFS had negative value (-1), but there must be at least one NUMA node, so returning NUMA "
        "node zero"]),
    "W external/xla/xla/service/gpu/nvptx_compiler.cc:760] The NVIDIA driver's CUDA version is 12.2 which is "
    "older than the ptxas CUDA version (12.3.107). Because the driver is older than the ptxas version, "
    "XLA is disabling parallel compilation, which may slow down compilation.",
    "\n".join(["ggml_cuda_init: GGML_CUDA_FORCE_MMQ:    no", "ggml_cuda_init: GGML_CUDA_FORCE_CUBLAS: no",
               "ggml_cuda_init: found 1 CUDA devices:",
               "  Device 0: NVIDIA H100 80GB HBM3, compute capability 9.0, VMM: yes"]),
    "[TRT] [I] [MemUsageChange] Init CUDA: CPU +2, GPU +0, now: CPU 21, GPU 4403 (MiB)",
    "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, "
    "you must use the 'spawn' start method",
])
def test_a_healthy_or_own_framework_log_stays_silent(log: str) -> None:
    assert top_pair(running_job_case("x-fw-healthy", log)) is None


def _under_nvidia_runtime(text: str) -> Case:
    return synthetic_case("x-fw-nodev-rc", [
        {"kind": "workload", "name": "job-0", "namespace": "default", "runtimeClassName": "nvidia"},
        {"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
         "text": text + "\n"}],
        cluster={"driver_mode": "host"})


def _plain_pod(text: str) -> Case:
    return synthetic_case("x-fw-nodev-plain", [
        {"kind": "workload", "name": "w-0", "namespace": "default", "container": "w", "state": "Running"},
        {"kind": "log", "object": {"kind": "Pod", "name": "w-0", "namespace": "default"}, "container": "w",
         "text": text + "\n"}], healthy=False)


_NO_DEVICE_TEXT = "ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device is detected"


@pytest.mark.parametrize("line", [
    "[TRT] [W] CUDA initialization failure with error: 100. Please check your CUDA installation: "
    "http://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html",
    'time=2024-06-01T10:00:00.000Z level=INFO source=gpu.go:612 msg="Unable to load cudart library '
    '/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15: cuda driver library init failure: 100"',
])
def test_a_frameworks_number_for_no_device_is_read_as_cudas_no_device(line: str) -> None:
    # cudaErrorNoDevice by number (TensorRT; Ollama's discover/gpu_info_nvcuda.c) reads as its text does
    read = top_pair(_under_nvidia_runtime(line))
    assert read is not None and read == top_pair(_under_nvidia_runtime(_NO_DEVICE_TEXT))
    assert top_pair(_plain_pod(line)) == top_pair(_plain_pod(_NO_DEVICE_TEXT))


def test_vllm_failing_to_infer_its_device_is_not_read_alone() -> None:
    # raised also where the image's pynvml package is wrong (https://github.com/ai-dynamo/dynamo/issues/391)
    line = "RuntimeError: Failed to infer device type"
    assert top_pair(_plain_pod(line)) is None


def test_jaxs_no_visible_gpu_devices_is_read_by_the_cuinit_line_before_it() -> None:
    # https://github.com/jax-ml/jax/issues/24866: XLA raises it after any failed cuInit
    jax = ("jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: No visible GPU devices.")
    assert top_pair(_plain_pod(jax)) is None
    cuinit = ("E external/xla/xla/stream_executor/cuda/cuda_driver.cc:152] failed call to cuInit: INTERNAL: "
              "CUDA error: Failed call to cuInit: CUDA_ERROR_SYSTEM_NOT_READY: system not yet initialized")
    assert top_pair(_plain_pod(cuinit + "\n" + jax)) == top_pair(_plain_pod(cuinit))
