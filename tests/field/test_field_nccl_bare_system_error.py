"""NCCL's bare "unhandled system error" (ncclSystemError, no WARN line naming the failed call)
in a container that holds several GPUs is the container's IPC resources, which the runtime
gives it (container-runtime, unclassified): NCCL's intra-node transports keep their segments
under the container's /dev/shm. A WARN line names the call and is read instead; a pod with one
GPU (ranks across pods) is not read so.

Sources: https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html
("Docker", "Shared memory"), https://github.com/pytorch/pytorch/issues/54822 (the bare error in
Docker, fixed with --ipc=host), https://github.com/NVIDIA/nccl/issues/342 (the SHM transport in
Docker's 64 MB /dev/shm)."""

from __future__ import annotations

from case import Case, synthetic_case
from scoreboard import top_pair

BARE = ("RuntimeError: NCCL error in: ../torch/lib/c10d/ProcessGroupNCCL.cpp:839, unhandled system error, "
        "NCCL version 2.8.3\nncclSystemError: System call (socket, malloc, munmap, etc) failed.")
WARNED = ("host:77:77 [0] include/socket.h:311 NCCL WARN Net : Connect to 10.0.0.2<35001> failed : "
          "Connection refused\n" + BARE)


def _case(name: str, text: str, gpus: str) -> Case:
    return synthetic_case(f"x-nccl-bare-{name}", [
        {"kind": "workload", "name": "train-0", "namespace": "default", "container": "train",
         "resources": {"limits": {"nvidia.com/gpu": gpus}}, "state": "Error", "exit_code": 1},
        {"kind": "log", "object": {"kind": "Pod", "name": "train-0", "namespace": "default"},
         "container": "train", "text": text + "\n"},
    ], healthy=False)


def test_a_bare_system_error_with_several_gpus_in_one_container_is_the_runtime_s() -> None:
    assert top_pair(_case("four", BARE, "4")) == ("container-runtime", "error_unclassified")


def test_one_gpu_per_pod_is_not_read_so() -> None:
    assert top_pair(_case("one", BARE, "1")) != ("container-runtime", "error_unclassified")


def test_a_warn_line_naming_the_call_is_read_instead() -> None:
    assert top_pair(_case("warned", WARNED, "4")) != ("container-runtime", "error_unclassified")


def test_a_multi_gpu_job_whose_nccl_set_up_stays_healthy() -> None:
    text = ("host:77:77 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via P2P/IPC\n"
            "host:77:77 [0] NCCL INFO comm 0x55d1 rank 0 nranks 4 cudaDev 0 busId 1000 - Init COMPLETE")
    case = synthetic_case("x-nccl-bare-healthy", [
        {"kind": "workload", "name": "train-0", "namespace": "default", "container": "train",
         "resources": {"limits": {"nvidia.com/gpu": "4"}}, "state": "Running"},
        {"kind": "log", "object": {"kind": "Pod", "name": "train-0", "namespace": "default"},
         "container": "train", "text": text + "\n"},
    ], healthy=True)
    assert top_pair(case) is None
