"""NCCL's "unhandled system error" followed by PyTorch's "Last error:" and NCCL's last warning
(ncclGetLastError) names the failed call as an NCCL WARN line does: it is not the bare error
that checks.nccl_system_error reads as the container's IPC resources. A socket connect that
failed (to a peer, or to 127.0.0.1 where NCCL bootstrapped on the loopback because of the job's
NCCL_SOCKET_IFNAME) is the job's bootstrap and stays as its WARN form is read; a /dev/shm
segment named there is still the container's shared memory; "Last error: Unknown NCCL Error"
names nothing and stays bare.

Sources: https://github.com/pytorch/pytorch/blob/main/torch/csrc/distributed/c10d/NCCLUtils.cpp
(getNcclErrorDetailStr: "\\nLast error:\\n" + ncclGetLastError, or "Last error: Unknown NCCL
Error"), https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html (NCCL_SOCKET_IFNAME:
the interfaces NCCL's sockets use, chosen by the job)."""

from __future__ import annotations

from case import Case, synthetic_case
from scoreboard import top_pair

HEAD = ("10: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1331, unhandled system "
        "error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.5\n"
        "10: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device "
        "error.\n")


def _case(name: str, text: str, state: str = "Error") -> Case:
    workload = {"kind": "workload", "name": "train-0", "namespace": "default", "container": "train",
                "resources": {"limits": {"nvidia.com/gpu": "8"}}, "state": state}
    if state == "Error":
        workload["exit_code"] = 1
    return synthetic_case(f"x-nccl-last-{name}", [
        workload,
        {"kind": "log", "object": {"kind": "Pod", "name": "train-0", "namespace": "default"},
         "container": "train", "text": text + "\n"},
    ], healthy=False)


def test_a_socket_connect_named_as_the_last_error_is_the_job_s_bootstrap() -> None:
    loopback = HEAD + ("10: Last error:\n10: socketStartConnect: Connect to 127.0.0.1<45069> failed : "
                       "Software caused connection abort")
    assert top_pair(_case("lo", loopback)) is None
    peer = HEAD + "Last error:\nsocketStartConnect: Connect to 10.0.3.7<45069> failed : Connection refused"
    assert top_pair(_case("peer", peer)) != ("container-runtime", "error_unclassified")


def test_a_shared_memory_segment_named_as_the_last_error_is_still_the_container_s() -> None:
    shm = HEAD + "Last error:\nError while creating shared memory segment /dev/shm/nccl-vzIpS6 (size 9637888)"
    assert top_pair(_case("shm", shm)) == ("container-runtime", "error_resource_exhausted")


def test_an_unknown_last_error_names_nothing_and_stays_bare() -> None:
    assert top_pair(_case("unknown", HEAD + "Last error: Unknown NCCL Error")) == (
        "container-runtime", "error_unclassified")


def test_a_running_job_that_chose_its_interface_stays_healthy() -> None:
    text = ("host:77:77 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to enp\n"
            "host:77:77 [0] NCCL INFO Bootstrap : Using enp71s0:10.1.0.12<0>\n"
            "host:77:77 [0] NCCL INFO comm 0x55d1 rank 0 nranks 16 cudaDev 0 busId 1000 - Init COMPLETE")
    assert top_pair(_case("running", text, state="Running")) is None
