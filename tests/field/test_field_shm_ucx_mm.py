"""UCX's shared-memory transport (mm) unable to allocate its own shared memory (data/job_errors.toml
shm-ucx-mm-fifo, shm-ucx-posix-write): the receive FIFO of an mm interface, or the POSIX mapper's
segment under /dev/shm, which it sizes against /dev/shm's free room; in a container that is the
runtime's tmpfs (container-runtime, resource exhausted). Connecting to a peer's FIFO and the SysV
mapper's shmget limits are not read so.

Sources: openucx/ucx#11683 (the FIFO allocated while /dev/shm runs low, a SIGSEGV at MPI_Init;
the line from uct/sm/mm/base/mm_iface.c), openucx/ucx#4534 (the POSIX mapper's own words);
look-alikes openucx/ucx#8511 (attaching to a peer's FIFO) and openucx/ucx#9347 (SysV shmget
against the IPC limits)."""

from __future__ import annotations

import pytest
from case import synthetic_case
from scoreboard import top_pair

from gpunode.job_errors import job_error

REAL = [
    # https://github.com/openucx/ucx/blob/master/src/uct/sm/mm/base/mm_iface.c (openucx/ucx#11683)
    "mm_iface failed to allocate receive FIFO",
    # https://github.com/openucx/ucx/issues/4534
    "[2019-12-02T18:03:58.458Z] [1575309838.145409] [boo31:13306:0]       mm_posix.c:158  UCX  ERROR "
    "Not enough memory to write total of 1065072 bytes. Please check that /dev/shm or the directory you "
    "specified has more available memory.",
]

LOOK_ALIKES = [
    # https://github.com/openucx/ucx/issues/8511
    "[1665173472.252802] [slurm-slehpc15-james-hpc-pg0-12:44314:0]           mm_ep.c:159  UCX  ERROR   mm ep "
    "failed to connect to remote FIFO id 0xa0000: Shared memory error",
    # https://github.com/openucx/ucx/issues/9347
    "[1693920302.521312]         mm_sysv.c:113  UCX  ERROR   failed to allocate 134217752 bytes with mm for "
    "mm_recv_desc",
]


@pytest.mark.parametrize("line", REAL)
def test_ucx_mm_out_of_shared_memory_is_the_containers_shm(line: str) -> None:
    found = job_error(line)
    assert found is not None and found.id.startswith("shm-ucx-")
    case = synthetic_case("x-ucx-mm", [
        {"kind": "log", "object": {"kind": "Pod", "name": "mpi-0", "namespace": "default"},
         "text": line + "\n[ucp_address_unpack] Caught signal 11 (Segmentation fault)\n"},
    ], healthy=False)
    assert top_pair(case) == ("container-runtime", "error_resource_exhausted")


@pytest.mark.parametrize("line", LOOK_ALIKES)
def test_attach_and_sysv_limits_are_not_read_as_it(line: str) -> None:
    found = job_error(line)
    assert found is None or not found.id.startswith("shm-ucx-")
