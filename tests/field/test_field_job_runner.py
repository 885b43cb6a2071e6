"""The validator's CUDA sample is a GPU job (src/gpunode/checks/job_runner.py): the CUDA error
its vectorAdd prints, read with the job-error table, names the layer under the validator that
failed, and the validator is blocked by it. Errors the table leaves to node facts (CUDA's
shared "initialization error") and a program's own (out of memory) stay the validator's; a
passing validation is healthy."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair


def _cuda_validation(line: str) -> Case:
    """The validator's cuda-validation init container crash-looping on ``line``, as the GPU
    Operator's vectorAdd prints its CUDA error (gpu-operator#277, #389, #1546), on a node with
    a host driver."""
    return synthetic_case("x-job-runner", [
        {"kind": "pod-state", "component": "validator", "container": "cuda-validation",
         "init": True, "state": "Init:CrashLoopBackOff"},
        {"kind": "log", "component": "validator", "container": "cuda-validation", "init": True,
         "previous": True, "text": f"[Vector addition of 50000 elements]\n{line}\n"},
    ], healthy=False, cluster={"driver_mode": "host"})


def _vector_a(error: str) -> str:
    return f"Failed to allocate device vector A (error code {error})!"


@pytest.mark.parametrize(("error", "expected"), [
    # cudaErrorCompatNotSupportedOnDevice (804): the kernel driver older than the sample's CUDA
    ("forward compatibility was attempted on non supported HW", ("driver", "cuda_driver_too_old")),
    # cudaErrorSystemNotReady (802): an NVSwitch system whose Fabric Manager is not running
    ("system not yet initialized", ("fabric-manager", "fabric_manager_not_running")),
    # cudaErrorStubLibrary (34): the container got CUDA's stub, not the driver's libcuda
    ("CUDA driver is a stub library", ("container-toolkit", "container_cli_no_driver_libs")),
])
def test_validator_cuda_error_names_the_layer_below(error: str, expected: tuple[str, str]) -> None:
    assert top_pair(_cuda_validation(_vector_a(error))) == expected


@pytest.mark.parametrize("error", [
    # shared by several layers (the table leaves it to node facts): the validator's own verdict
    "initialization error",
    # the program's own error, never the stack's
    "out of memory",
])
def test_validator_cuda_error_naming_no_layer_stays_the_validators(error: str) -> None:
    top = top_pair(_cuda_validation(_vector_a(error)))
    assert top is not None and top[0] == "validator", top


def test_a_passing_validation_is_healthy() -> None:
    case = synthetic_case("x-job-runner-ok", [
        {"kind": "log", "component": "validator", "container": "cuda-validation", "init": True,
         "text": "[Vector addition of 50000 elements]\nCopy input data from the host memory to the "
                 "CUDA device\nTest PASSED\nDone\n"},
    ], cluster={"driver_mode": "host"})
    assert top_pair(case) is None
