"""NCCL's shared-memory transport failing to create its segment (misc/shmutils.cc "Error while
creating shared memory segment /dev/shm/nccl-XXXX (size N)"): the segment could not be made in
the container's /dev/shm, the tmpfs the runtime gives it (container-runtime, resource
exhausted), as the job-error table's shm-nccl-create entry reads it. NCCL prints the same line
after a CUDA failure registering the segment; with a CUDA error before it in the job's log the
line says nothing of /dev/shm and gives no finding. Attaching to a segment is not read so.

Sources: pytorch/torchtitan#853 (a CI container's 16 MB /dev/shm on 8x H100, fixed by
--shm-size=1g), WangRongsheng/XrayGLM#83 (DeepSpeed multi-GPU fine-tune), NVIDIA/nccl-tests#166
(the line alone, from another rank than the extend line), NVIDIA/nccl#1683 (the maintainer's
answer: the container's shared memory); look-alikes NVIDIA/nccl#1518 (cudaHostRegister's
'invalid argument' before the same line, 64 MB /dev/shm with room) and NVIDIA/nccl#1589
(attaching: the file was gone)."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

REAL = {
    # https://github.com/pytorch/torchtitan/issues/853
    "torchtitan-853": "\n".join([
        "torch.distributed.DistBackendError: NCCL error in: "
        "/pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, unhandled system error "
        "(run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or "
        "device error. ",
        "Last error:",
        "Error while creating shared memory segment /dev/shm/nccl-1YsMbG (size 7340384)"]),
    # https://github.com/WangRongsheng/XrayGLM/issues/83
    "xrayglm-83": "Error while creating shared memory segment /dev/shm/nccl-CsYXMW (size 9637888)",
    # https://github.com/NVIDIA/nccl-tests/issues/166
    "nccl-tests-166": "\n".join([
        "ubuntu:9621:9688 [3] misc/shmutils.cc:112 NCCL WARN Error while creating shared memory segment "
        "/dev/shm/nccl-KWfVyt (size 5967872)",
        "ubuntu:9621:9688 [3] NCCL INFO transport/shm.cc:114 -> 2"]),
}

LOOK_ALIKES = {
    # https://github.com/NVIDIA/nccl/issues/1518
    "nccl-1518": "\n".join([
        "[3] NCCL INFO 2 coll channels, 2 p2p channels, 2 p2p channels per peer",
        "[1] misc/shmutils.cc:103 NCCL WARN Cuda failure 'invalid argument'",
        "[1] misc/shmutils.cc:114 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-NzwJ7O "
        "(size 9637888)"]),
    # https://github.com/NVIDIA/nccl/issues/1589
    "nccl-1589": "\n".join([
        "g148:14937:69361 [0] misc/shmutils.cc:93 NCCL WARN Call to open failed: No such file or directory",
        "g148:14937:69361 [0] misc/shmutils.cc:129 NCCL WARN Error while attaching to shared memory segment "
        "/dev/shm/nccl-glnlGK (size 14156128), error: No such file or directory (2)"]),
}


def _job_log(name: str, text: str) -> Case:
    return synthetic_case(f"shm-create-{name}", [
        {"kind": "workload", "name": "train-0", "namespace": "default", "container": "train",
         "resources": {"limits": {"nvidia.com/gpu": "8"}}, "state": "Error", "exit_code": 1},
        {"kind": "log", "object": {"kind": "Pod", "name": "train-0", "namespace": "default"},
         "container": "train", "text": text + "\n"},
    ], healthy=False)


@pytest.mark.parametrize("name", sorted(REAL))
def test_a_segment_nccl_could_not_create_is_the_pods_shm(name: str) -> None:
    assert top_pair(_job_log(name, REAL[name])) == ("container-runtime", "error_resource_exhausted")


@pytest.mark.parametrize("name", sorted(LOOK_ALIKES))
def test_after_a_cuda_error_or_on_attach_it_is_not_the_shm_size(name: str) -> None:
    assert top_pair(_job_log(name, LOOK_ALIKES[name])) != ("container-runtime", "error_resource_exhausted")
