"""NCCL's shared-memory transport failing to extend its /dev/shm segment, in the words it
prints before 2.19 without the errno (misc/shmutils.cc "Error: failed to extend <path> to <n>
bytes"): fallocate on a container's /dev/shm tmpfs fails only for want of room, so the line
names the runtime's 64 MB default (container-runtime, resource exhausted) as ENOSPC does.
The segment's creation failing after a CUDA error, its attach failing, or an errno other than
ENOSPC appended are not read so.

Sources: NVIDIA/nccl-tests#166 (nccl-tests on 8 GPUs in a container, no errno),
ai-dynamo/dynamo#1408 (vLLM with tp > 1 on a Kubernetes node, with ENOSPC appended);
look-alikes NVIDIA/nccl#1518 (cudaHostRegister's 'invalid argument' before the same creation
error) and vllm-project/vllm#18831 (attaching a segment another process removed)."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.job_errors import load_job_errors

TABLE = load_job_errors()

FULL = {
    # https://github.com/NVIDIA/nccl-tests/issues/166
    "nccl-tests-166": "\n".join([
        "ubuntu:9621:9691 [6] misc/shmutils.cc:71 NCCL WARN Error: failed to extend "
        "/dev/shm/nccl-fjwOOB to 5967876 bytes",
        "",
        "ubuntu:9621:9691 [6] misc/shmutils.cc:112 NCCL WARN Error while creating shared memory "
        "segment /dev/shm/nccl-fjwOOB (size 5967872)",
        "ubuntu:9621:9691 [6] NCCL INFO transport/shm.cc:114 -> 2"]),
    # https://github.com/ai-dynamo/dynamo/issues/1408
    "dynamo-1408": "\n".join([
        "[2025-06-06 09:52:01] ucwlai-k8snode-12-123:15016:15201 [1] misc/shmutils.cc:87 NCCL WARN "
        "Error: failed to extend /dev/shm/nccl-YrFC5V to 33030532 bytes, error: No space left on "
        "device (28)"]),
}

NOT_SHM_SIZE = [
    # https://github.com/NVIDIA/nccl/issues/1518
    "[1] misc/shmutils.cc:103 NCCL WARN Cuda failure 'invalid argument'\n"
    "[1] misc/shmutils.cc:114 NCCL WARN Error while creating shared memory segment "
    "/dev/shm/nccl-NzwJ7O (size 9637888)",
    # https://github.com/vllm-project/vllm/issues/18831
    "NCCL WARN Error while attaching to shared memory segment /dev/shm/nccl- (size 192814336), "
    "error: No such file or directory (2)",
    "misc/shmutils.cc:87 NCCL WARN Error: failed to extend /dev/shm/nccl-YrFC5V to 33030532 bytes, "
    "error: Operation not supported (95)",
]


def _job_log(name: str, text: str) -> Case:
    return synthetic_case(f"shm-extend-{name}", [
        {"kind": "workload", "name": "train-0", "namespace": "default", "container": "train",
         "resources": {"limits": {"nvidia.com/gpu": "2"}}, "state": "CrashLoopBackOff",
         "restarts": 3, "exit_code": 1},
        {"kind": "log", "object": {"kind": "Pod", "name": "train-0", "namespace": "default"},
         "container": "train", "text": text + "\n"},
    ], healthy=False)


@pytest.mark.parametrize("name", sorted(FULL))
def test_nccl_failing_to_extend_its_segment_is_the_runtimes_shm(name: str) -> None:
    assert top_pair(_job_log(name, FULL[name])) == ("container-runtime", "error_resource_exhausted")


@pytest.mark.parametrize("text", NOT_SHM_SIZE)
def test_other_segment_failures_are_not_read_as_its_size(text: str) -> None:
    for line in text.splitlines():
        found = TABLE.read(line)
        assert found is None or found.id not in ("shm-nccl-extend", "shm-no-space"), found
