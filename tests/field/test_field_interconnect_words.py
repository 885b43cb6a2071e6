"""The communication stack's words for the container's locked-memory limit
(data/job_errors/interconnect.toml): UCX's own note after a verbs call that failed with ENOMEM
and Open MPI's openib help text name RLIMIT_MEMLOCK, which a container inherits from the
container runtime; the same verbs failure without that note stays with the GPUDirect RDMA path,
and the limit printed where nothing failed stays silent.

Sources: openucx/ucx src/uct/ib/base/ib_log.c (the note), openucx/ucx#8746 and #8229,
open-mpi/ompi help-mpi-btl-openib.txt and open-mpi/ompi#6468 (--ulimit memlock=-1 in Docker)."""

from __future__ import annotations

import pytest
from case import gpu_job_case
from scoreboard import top_pair

from gpunode.job_errors import job_error

REAL = [
    # https://github.com/openucx/ucx/issues/8746 (UCX 1.13, ib_log.c's form)
    "[1668693503.473099] [ampere:1188443:0]          ib_log.c:246  UCX  ERROR mlx5_0: "
    "ibv_create_cq() failed: Cannot allocate memory. Please set max locked memory (ulimit -l) to "
    "'unlimited' (current: 64 kbytes)",
    # https://github.com/NVIDIA/cudf-spark/pull/7632 names the line; the full form as UCX prints it for
    # a memory region (ib_md.c), as in the Errors FAQ of an HPC site's documentation
    "[1765653660.705652] [magi175:640743:0] ib_md.c:287 UCX ERROR ibv_reg_mr(address=0x15213b956010, "
    "length=65536, access=0xf) failed: Cannot allocate memory : Please set max locked memory (ulimit -l) to "
    "'unlimited' (current: 524288 kbytes)",
    # Open MPI's openib BTL (help-mpi-btl-openib.txt, init-fail-no-mem), open-mpi/ompi#6468
    "memlock limits are set too low.  For most HPC installations, the",
]

LOOK_ALIKES = [
    # the verbs failure without UCX's note: the GPUDirect RDMA path's (data/job_errors.toml)
    "[1631000000.123456] [node1:100:0]       ib_iface.c:900  UCX  ERROR ibv_create_qp(ib_iface.c) failed: "
    "Cannot allocate memory",
    # libibverbs' start-up notice of the limit, printed whether or not anything is registered
    "libibverbs: Warning: RLIMIT_MEMLOCK is 32768 bytes.",
    "    This will severely limit memory registrations.",
    # Open MPI's openib BTL stepping aside for a port
    "No OpenFabrics connection schemes reported that they were able to be",
]


@pytest.mark.parametrize("line", REAL)
def test_the_named_memlock_limit_is_the_container_runtimes(line: str) -> None:
    found = job_error(line)
    assert found is not None and found.component == "container-runtime"
    assert found.cause == "error_resource_exhausted"


@pytest.mark.parametrize("line", LOOK_ALIKES)
def test_other_lines_do_not_name_the_limit(line: str) -> None:
    found = job_error(line)
    assert found is None or found.component != "container-runtime"


def test_a_job_whose_ucx_names_the_limit() -> None:
    case = gpu_job_case("x-ucx-memlock", "Initializing UCX\n" + REAL[0] + "\nAbort(1614735) on node 0\n")
    assert top_pair(case) == ("container-runtime", "error_resource_exhausted")


def test_the_same_verbs_failure_without_the_note_stays_gpudirect() -> None:
    case = gpu_job_case("x-ucx-enomem", LOOK_ALIKES[0] + "\n")
    top = top_pair(case)
    assert top is not None and top[0] == "gpudirect-rdma"
