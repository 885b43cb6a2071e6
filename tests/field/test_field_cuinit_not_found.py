"""CUDA's initialisation answering CUDA_ERROR_NOT_FOUND (500, "named symbol not found") is a driver
piece missing from the container, the toolkit's not-found class: at the first call no symbol of
the program is looked up yet. Windows drivers 555+ need libnvdxgdmal.so.1 mapped into WSL2
containers, and without it CUDA initialisation returns 500
(https://github.com/NVIDIA/nvidia-container-toolkit/issues/520, fixed in the toolkit and Docker
Desktop 4.31.0; https://github.com/jhj0517/Whisper-WebUI/issues/279, fixed by updating Docker
Desktop); Ollama's maintainer: the container runtime cannot talk to the driver
(https://github.com/ollama/ollama/issues/6961); TensorFlow's cuInit form
(https://github.com/tensorflow/tensorflow/issues/68711). A later call's 500 (a PTX kernel not in a
module, https://github.com/google-deepmind/alphafold/issues/863) is the program's own."""

from __future__ import annotations

import pytest
from case import gpu_job_case, running_job_case
from scoreboard import top_pair

OLLAMA = ('time=2024-09-25T10:11:12.000Z level=INFO source=gpu.go:621 msg="Unable to load cudart library '
          '/usr/lib/x86_64-linux-gnu/libcuda.so.555.85: cuda driver library init failure: {code}"')
TORCH = ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before "
         "calling NumCudaDevices() that might have already set an error? Error {code}: {text}")
TOOLKIT = ("container-toolkit", "error_not_found")


@pytest.mark.parametrize("line", [
    TORCH.format(code=500, text="named symbol not found"),
    "E external/local_xla/xla/stream_executor/cuda/cuda_driver.cc:282] failed call to cuInit: "
    "CUDA_ERROR_NOT_FOUND: named symbol not found",
])
def test_init_not_found_in_a_crashing_job_is_the_toolkit(line: str) -> None:
    assert top_pair(gpu_job_case("x-init-500", line)) == TOOLKIT


def test_ollama_discovery_500_is_the_toolkit() -> None:
    assert top_pair(running_job_case("x-ollama-500", OLLAMA.format(code=500))) == TOOLKIT


@pytest.mark.parametrize("line", [
    # a later call looking up the program's own symbol
    'E external/org_tensorflow/tensorflow/compiler/xla/stream_executor/cuda/cuda_driver.cc:628] failed '
    'to get PTX kernel "shift_right_logical" from module: CUDA_ERROR_NOT_FOUND: named symbol not found',
    "CUDA error 500 at kernels.cu:88: named symbol not found",
    OLLAMA.format(code=5000),
])
def test_a_later_calls_500_is_not_the_toolkit(line: str) -> None:
    assert top_pair(running_job_case("x-later-500", line)) != TOOLKIT


def test_init_that_answered_is_healthy() -> None:
    assert top_pair(running_job_case("x-init-ok", "torch.cuda.device_count() = 1")) is None
