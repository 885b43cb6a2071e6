"""cuInit answering CUDA_ERROR_NOT_INITIALIZED (3) for itself is the driver's own initialisation
failing (the enumeration: "or that initialization has failed",
https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html): Ollama's discovery prints
cuInit's return as "cuda driver library init failure: %d" and "cuInit err: %d"
(https://github.com/ollama/ollama/blob/main/discover/gpu_info_nvcuda.c); threads end in the node's
driver (https://github.com/ollama/ollama/issues/11593, nvidia_uvm's HMM option;
https://github.com/ollama/ollama/issues/11932, the maintainers asking for the driver's log). Other
numbers and a later runtime call's initialization error are not read so."""

from __future__ import annotations

import pytest
from case import running_job_case
from scoreboard import top_pair

OLLAMA = ('time=2025-08-02T22:42:20.643Z level=INFO source=gpu.go:612 msg="Unable to load cudart library '
          '/usr/lib/x86_64-linux-gnu/libcuda.so.575.57.08: cuda driver library init failure: {code}"')


@pytest.mark.parametrize("line", [OLLAMA.format(code=3), "cuInit err: 3",
                                  "cu->cuInit(0) failed -> CUDA_ERROR_NOT_INITIALIZED: initialization error"])
def test_cuinit_not_initialized_is_the_driver(line: str) -> None:
    assert top_pair(running_job_case("x-cuinit-3", line)) == ("driver", "error_device")


@pytest.mark.parametrize("line", [
    OLLAMA.format(code=35),
    OLLAMA.format(code=30),
    # a runtime call's initialization error later in a program (a forked child's own)
    "CUDA error 3 at ggml-cuda.cu:5661: initialization error",
])
def test_other_codes_and_runtime_calls_are_not_read_as_cuinit_3(line: str) -> None:
    found = top_pair(running_job_case("x-cuinit-other", line))
    assert found != ("driver", "error_device")


def test_a_discovery_that_initialised_is_healthy() -> None:
    line = 'time=2025-08-02T22:42:20.643Z level=INFO source=types.go:130 msg="inference compute" library=cuda'
    assert top_pair(running_job_case("x-cuinit-ok", line)) is None
