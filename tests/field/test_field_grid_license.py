"""CUDA refusing an unlicensed vGPU (GRID) device (data/job_errors.toml
``cuda-device-not-licensed``: cudaErrorDeviceNotLicensed / CUDA_ERROR_DEVICE_NOT_LICENSED,
102, "device doesn't have valid Grid license"): the guest driver's licence, which the GRID
driver's licensing daemon (nvidia-gridd) holds, is the driver install's to fix.

Sources: the CUDA driver API's error types (docs.nvidia.com/cuda/cuda-driver-api,
group__CUDA__TYPES); the enumerator as a binding lists it (jcuda/jcuda, CUresult.java);
awslabs/amazon-eks-ami#2450 (PyTorch's line on a g6f node whose AMI installed no
nvidia-gridd); Azure/aks-gpu#90 (a GRID driver release that installed no nvidia-gridd unit,
the licence then Unlicensed). Look-alikes: the daemon's own line for a licence it acquired,
and CUDA's busy-or-unavailable error, which an unlicensed GPU also gives (Azure/AKS#4870) but
so does a GPU in exclusive mode held by another process: that one is not read as a licence."""

from __future__ import annotations

from case import gpu_job_case
from scoreboard import top_pair

from gpunode.job_errors import job_error

#: awslabs/amazon-eks-ami#2450: PyTorch's words, as the PR quotes them.
EKS_AMI_2450 = "RuntimeError: CUDA error: device doesn't have valid Grid license"
#: The enumerator by name, as the driver API and its bindings (jcuda/jcuda) give it.
BY_NAME = "cuInit failed: CUDA_ERROR_DEVICE_NOT_LICENSED"
RUNTIME_NAME = "cudaGetDeviceCount returned cudaErrorDeviceNotLicensed"

#: nvidia-gridd's line once it holds a licence (Azure/aks-gpu#90's healthy state).
ACQUIRED = "nvidia-gridd: License acquired successfully. (Info: NVIDIA Virtual Compute Server)"
#: Azure/AKS#4870's line: an unlicensed A10 gave it, but so does a GPU another process holds.
BUSY = "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable"


def test_an_unlicensed_device_is_the_driver_s() -> None:
    for line in (EKS_AMI_2450, BY_NAME, RUNTIME_NAME):
        found = job_error(line)
        assert found is not None and (found.component, found.cause) == ("driver", "error_device"), line
    assert top_pair(gpu_job_case("x-grid-license", EKS_AMI_2450)) == ("driver", "error_device")


def test_a_licence_acquired_and_a_busy_device_are_not_a_licence() -> None:
    assert job_error(ACQUIRED) is None
    assert top_pair(gpu_job_case("x-grid-license-ok", ACQUIRED)) is None
    found = job_error(BUSY)
    assert found is None or found.id != "cuda-device-not-licensed"
