"""CUDA's 804, forward compatibility refused on the board, in any form the job-error table reads
says the container got the driver: the image's forward-compatibility libcuda reached the kernel
driver and found the visible hardware unable to run with it (the runtime API's cudaError_t,
https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html: "the visible hardware
detected by CUDA does not support this configuration"; the CUDA Compatibility guide,
https://docs.nvidia.com/deploy/cuda-compatibility/: forward compatibility on data-centre GPUs
only). So on a pod that may have started without NVIDIA's runtime it stays the driver too old
for the job's CUDA, whether printed as PyTorch's "Error 804: ..." or as a driver API wrapper's
number (LAMMPS' geryon CU_SAFE_CALL, lib/gpu/geryon/nvd_macros.h: "Cuda driver error %d in call
at file", https://github.com/lammps/lammps/issues/4849). CUDA's 35 in the same wrapper's words
is also what the runtime answers without any libcuda, and keeps the runtime's reading."""

from __future__ import annotations

from case import Case, running_job_case
from scoreboard import top_pair

#: LAMMPS' geryon wrapper printing the driver API's CUresult (lammps/lammps#4849)
GERYON_804 = ("Cuda driver error 804 in call at file\n"
              "'/opt/lammps/lib/gpu/geryon/nvd_device.h' in line 333.\n"
              "Abort(-1) on node 0 (rank 0 in comm 0):")
#: the same wrapper's words for the insufficient driver
GERYON_35 = "Cuda driver error 35 in call at file '/opt/lammps/lib/gpu/geryon/nvd_device.h' in line 333."
#: the driver API's enumerator by name
NAMED_804 = "cuInit failed: CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"


def _job(text: str) -> Case:
    return running_job_case("x-job", text)


def test_a_wrappers_number_for_the_refused_compatibility_is_the_driver_too_old() -> None:
    assert top_pair(_job(GERYON_804)) == ("driver", "cuda_driver_too_old")


def test_the_refused_compatibility_by_name_is_the_driver_too_old() -> None:
    assert top_pair(_job(NAMED_804)) == ("driver", "cuda_driver_too_old")


def test_the_insufficient_driver_in_the_same_words_keeps_the_runtime_reading() -> None:
    assert top_pair(_job(GERYON_35)) == ("container-toolkit", "nvidia_not_default_runtime")
