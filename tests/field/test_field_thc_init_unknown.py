"""CUDA's first call failing with the unknown error in older words (THC's "THCudaCheck FAIL
file=.../THCGeneral.c line=70 error=30 : unknown error"): Lua Torch's cutorch and PyTorch before
its c10 rewrite print it where today's PyTorch says "CUDA unknown error - this may be due to an
incorrectly set up environment", and it is read the same way (the driver's state on the node:
data/job_errors/cuda_init.toml ``thc-init-unknown``). cudaErrorUnknown is 30 before CUDA 10.1
and 999 since.

Sources: torch/cutorch#798 (THCGeneral.c line=70 after a driver upgrade, "error 30 usually means
you have a driver that's not initialized"), pytorch/pytorch#18981 and
ayooshkathuria/pytorch-yolo-v3#88 (THCGeneral.cpp line=87), pytorch/pytorch#31179 (the error
torch._C._cuda_init raises), NVlabs/nvbio-gpl#7 (deviceQuery's "cudaGetDeviceCount returned 30"),
the runtime API's cudaError_t (https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html).
Look-alikes: THC's peer-access check answering invalid argument while the model runs on
(uber-research/UPSNet#45), the unknown error from a later call in a tensor's file (THCStorage),
which names no layer, and deviceQuery's other answers (100, no device: shared)."""

from __future__ import annotations

from case import gpu_job_case, running_job_case
from scoreboard import top_pair

#: torch/cutorch#798.
CUTORCH_798 = ("THCudaCheck FAIL file= torch/extra/cutorch/lib/THC/THCGeneral.c line=70 "
               "error=30 : unknown error")
#: pytorch/pytorch#18981 (Windows paths).
PYTORCH_18981 = r"THCudaCheck FAIL file=..\aten\src\THC\THCGeneral.cpp line=87 error=30 : unknown error"
#: The same check on CUDA 10.1 and later, where cudaErrorUnknown is 999.
AFTER_10_1 = "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=50 error=999 : unknown error"
#: pytorch/pytorch#31179: PyTorch 1.3's error raised from torch._C._cuda_init.
RAISED = ("RuntimeError: cuda runtime error (999) : unknown error at "
          "/opt/conda/conda-bld/pytorch_1573049306803/work/aten/src/THC/THCGeneral.cpp:50")
#: NVlabs/nvbio-gpl#7: the CUDA samples' deviceQuery, the nvidia-uvm module not installed.
DEVICE_QUERY = "cudaGetDeviceCount returned 30\n-> unknown error"
#: deviceQuery's answer on a node whose container sees no GPU: another error, not read here.
NO_DEVICE = "cudaGetDeviceCount returned 100\n-> no CUDA-capable device is detected"
#: uber-research/UPSNet#45: printed while the model "can still run normally".
PEER_ACCESS = ("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=405 "
               "error=11 : invalid argument")
#: A later call's unknown error, in a tensor's storage (pytorch/pytorch#3912's form).
STORAGE = ("THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch_1502009910772/work/torch/lib/THC/generic/"
           "THCStorage.c line=32 error=30 : unknown error")


def test_thc_s_unknown_error_at_initialisation_is_the_driver_s() -> None:
    for i, line in enumerate((CUTORCH_798, PYTORCH_18981, AFTER_10_1, RAISED, DEVICE_QUERY)):
        assert top_pair(gpu_job_case(f"x-thc-init-unknown-{i}", line)) == ("driver", "error_device"), line


def test_thc_s_other_answers_are_not_read_as_the_driver() -> None:
    assert top_pair(running_job_case("x-thc-peer-access", PEER_ACCESS)) is None
    assert top_pair(gpu_job_case("x-thc-storage-unknown", STORAGE)) != ("driver", "error_device")
    assert top_pair(gpu_job_case("x-devicequery-no-device", NO_DEVICE)) != ("driver", "error_device")
