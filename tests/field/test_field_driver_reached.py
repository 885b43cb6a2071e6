"""A GPU job's words that only a container holding the driver's library can print settle a
too-old driver as the driver's, not a runtime that left the library out: the driver's JIT
refusing PTX built by a newer compiler (cudaErrorUnsupportedPtxVersion, the driver older than
the CUDA that built the job's code) and TensorFlow listing the GPUs it enumerated through the
driver API before CUDA's runtime found the driver too old. A package manager that has no
kernel-devel/kernel-headers for the running kernel (yum's "No package ... available") is the
kernel headers missing, as dnf's "Unable to find a match" already is."""

from __future__ import annotations

from typing import Any

from case import Case, running_job_case, synthetic_case
from scoreboard import top_pair

#: Triton's status wrapping CUDA's text without naming CUDA (seldon-core#5029's form); the
#: bare runtime text (ComputationalRadiationPhysics/cuda_memtest#31, CUDA 11.3 build on driver
#: 460); NVIDIA/CUDALibrarySamples#47 (HPC SDK container on an older host driver); a Rust
#: binding's driver-API form (chelsea0x3b/llama-dfdx#6: "update to cuda driver 530")
PTX_LINES = (
    "UNAVAILABLE: Internal: unable to create stream: the provided PTX was compiled with an "
    "unsupported toolchain",
    "[05/23/2021 18:30:06][computer][0]:ERROR: CUDA error: the provided PTX was compiled with an "
    "unsupported toolchain., line 148, file /var/tmp/cuda_memtest/src/cuda_memtest/cuda_memtest.cu",
    "Error: the provided PTX was compiled with an unsupported toolchain.",
    "thread 'main' panicked at 'called `Result::unwrap()` on an `Err` value: Driver(DriverError("
    "CUDA_ERROR_UNSUPPORTED_PTX_VERSION, \"the provided PTX was compiled with an unsupported toolchain.\"))'",
)

#: TensorFlow enumerating a GPU, then the runtime's insufficient-driver error (kubeflow/kubeflow#1009's
#: form; tensorflow/tensorflow#8526: "loads all the libraries, recognizes all the GPUs", fixed by a
#: newer driver; tensorflow/tensorflow#41401: cudaGetDevice() failed on driver 451 with CUDA 10.1)
TF_ENUMERATED = (
    "2018-06-15 00:00:58.577468: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1423] "
    "Adding visible gpu devices: 0\n"
    "2018-06-15 00:00:58.577542: E tensorflow/core/common_runtime/direct_session.cc:167] Internal: "
    "cudaGetDevice() failed. Status: CUDA driver version is insufficient for CUDA runtime version")
TF_FOUND = (
    "I tensorflow/core/common_runtime/gpu/gpu_device.cc:1405] Found device 0 with properties: \n"
    "name: GeForce GTX 1080 Ti major: 6 minor: 1 memoryClockRate(GHz): 1.582\n"
    "tensorflow.python.framework.errors_impl.InternalError: cudaGetDevice() failed. Status: "
    "CUDA driver version is insufficient for CUDA runtime version")
#: the same error with no GPU enumerated first: a pod without a RuntimeClass on a node whose default
#: runtime is not NVIDIA's may have no libcuda at all (liuwei16/ALFNet#4's bare line)
TF_BARE = ("tensorflow.python.framework.errors_impl.InternalError: cudaGetDevice() failed. Status: "
           "CUDA driver version is insufficient for CUDA runtime version")
#: a healthy TF job that enumerated its GPU
TF_HEALTHY = ("I tensorflow/core/common_runtime/gpu/gpu_device.cc:1423] Adding visible gpu devices: 0\n"
              "I tensorflow/core/common_runtime/gpu/gpu_device.cc:1103] Created TensorFlow device "
              "(/job:localhost/replica:0/task:0/device:GPU:0 with 10405 MB memory)")


def _job(text: str) -> Case:
    return running_job_case("x-job", text)


def _driver_log(text: str) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "pod-state", "component": "driver", "container": "nvidia-driver-ctr",
         "state": "CrashLoopBackOff", "restarts": 5, "exit_code": 1},
        {"kind": "log", "component": "driver", "container": "nvidia-driver-ctr", "previous": True,
         "text": text + "\n"}]
    return synthetic_case("x-driver", evidence, healthy=False)


def test_ptx_from_a_newer_toolchain_is_the_driver_too_old_in_every_form() -> None:
    for line in PTX_LINES:
        assert top_pair(_job(line)) == ("driver", "cuda_driver_too_old"), line


def test_a_gpu_enumerated_before_the_insufficient_driver_makes_it_the_drivers() -> None:
    assert top_pair(_job(TF_ENUMERATED)) == ("driver", "cuda_driver_too_old")
    assert top_pair(_job(TF_FOUND)) == ("driver", "cuda_driver_too_old")


def test_without_a_gpu_enumerated_the_runtime_reading_stands() -> None:
    assert top_pair(_job(TF_BARE)) == ("container-toolkit", "nvidia_not_default_runtime")


def test_a_healthy_job_that_enumerated_its_gpu_stays_healthy() -> None:
    assert top_pair(_job(TF_HEALTHY)) is None


def test_yums_no_package_for_the_running_kernels_devel_is_the_headers_missing() -> None:
    # kubernetes-sigs/kubespray#5605 (CentOS 8), NVIDIA/ansible-role-nvidia-driver#21 (CentOS 7
    # kernel-headers), QubesOS/qubes-issues#4610 (kernel-devel of the running kernel)
    for line in ("No package kernel-devel-4.18.0-168.el8.x86_64 available",
                 "No package kernel-headers-3.10.0-957.12.2.el7.x86_64 available.",
                 "No package kernel-devel-4.14.74-1.pvops.qubes.x86_64 available."):
        assert top_pair(_driver_log(line)) == ("driver", "kernel_headers_missing"), line


def test_yum_missing_some_other_package_is_not_the_headers() -> None:
    top = top_pair(_driver_log("No package nvidia-driver-latest-dkms available."))
    assert top is not None and top[1] != "kernel_headers_missing", top
