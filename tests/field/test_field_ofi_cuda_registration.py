"""aws-ofi-nccl's refusal to register GPU memory with the NIC (data/job_errors/interconnect.toml):
"NET/OFI Unable to register memory (type = 2) ... RC: -22" is NCCL_PTR_CUDA (nccl_net.h: host 0x1,
CUDA 0x2, DMA-BUF 0x4) refused by libfabric's provider with EINVAL, the GPUDirect RDMA path at a
libfabric older than the NCCL release needs (EFA installers before 1.29.1 with NCCL 2.19+).
Look-alikes: host memory (type 1) failing with ENOMEM (aws/aws-ofi-nccl#70, NVIDIA/nccl#563) is
not read as this entry, and the plugin's healthy start-up lines say nothing."""

from __future__ import annotations

from case import gpu_job_case, running_job_case
from scoreboard import top_pair

from gpunode.job_errors import job_error

CUDA_EINVAL = ("ip-10-1-2-3:412:530 [4] register_rail_mr_buffer:617 NCCL WARN NET/OFI Unable to register "
               "memory (type = 2) for device 4. RC: -22, Error: Invalid argument")
HOST_ENOMEM = ("ip-10-0-78-113:3234:3425 [5] register_mr_buffers:469 NCCL WARN NET/OFI Unable to register "
               "memory (type = 1) for device 0. RC: -12, Error: Cannot allocate memory")
HEALTHY = ("algo-1:18568:18640 [6] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)\n"
           "algo-1:18564:18638 [2] NCCL INFO NET/OFI Global registrations supported\n"
           "algo-1:18564:18638 [2] NCCL INFO Using network AWS Libfabric")


def test_cuda_memory_refused_with_einval_is_gpudirect_rdmas_version() -> None:
    found = job_error(CUDA_EINVAL)
    assert found is not None
    assert (found.component, found.cause) == ("gpudirect-rdma", "error_version_mismatch")
    assert top_pair(gpu_job_case("x-ofi-cuda", CUDA_EINVAL)) == ("gpudirect-rdma", "error_version_mismatch")


def test_host_memory_and_healthy_plugin_lines_are_not_this_entry() -> None:
    found = job_error(HOST_ENOMEM)
    assert found is None or found.cause != "error_version_mismatch"
    assert top_pair(running_job_case("x-ofi-healthy", HEALTHY)) is None
