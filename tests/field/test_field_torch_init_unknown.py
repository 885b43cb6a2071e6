"""PyTorch's "CUDA unknown error - this may be due to an incorrectly set up environment" is
cudaErrorUnknown from CUDA's initialisation, before any of the job's kernels ran: the driver's
state on the node (nvidia_uvm after a suspend, its device node never created), read as the
driver's error_device. A job's own CUDA errors after its kernels ran (an illegal memory
access, out of memory) stay the job's; a bare "unknown error" is the driver's state too, read
as its likeliest layer where no node fact settles it (checks.unsettled_words, degraded). Lines
from public reports, each address beside it."""

from __future__ import annotations

from case import Case, gpu_job_case
from scoreboard import top_pair

_UNKNOWN = ("RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment, "
            "e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the "
            "available devices to be zero.")
#: https://github.com/pytorch/pytorch/issues/49081 (train.py's first .cuda(), on a host)
PYTORCH_49081 = ('  File "Anaconda3/envs/pytorch17/lib/python3.7/site-packages/torch/cuda/__init__.py", '
                 'line 172, in _lazy_init\n    torch._C._cuda_init()\n' + _UNKNOWN)
#: https://github.com/microsoft/Bringing-Old-Photos-Back-to-Life/issues/52 (set_device)
OLD_PHOTOS_52 = ("    torch.cuda.set_device(self.opt.gpu_ids[0])\n    torch._C._cuda_init()\n" + _UNKNOWN)
#: https://github.com/replicate/cog-svd/issues/11 (the line alone, in a cog container)
COG_SVD_11 = _UNKNOWN


def _gpu_job(text: str) -> Case:
    return gpu_job_case("x-torch-init-unknown", text)


def test_cuda_init_unknown_error_is_the_drivers() -> None:
    for text in (PYTORCH_49081, OLD_PHOTOS_52, COG_SVD_11):
        assert top_pair(_gpu_job(text)) == ("driver", "error_device")


def test_the_jobs_own_cuda_errors_stay_the_jobs() -> None:
    for line in ("RuntimeError: CUDA error: an illegal memory access was encountered",
                 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"):
        assert top_pair(_gpu_job(line)) is None


def test_a_bare_unknown_error_is_the_drivers_likeliest() -> None:
    assert top_pair(_gpu_job("RuntimeError: CUDA error: unknown error")) == ("driver", "error_device")
