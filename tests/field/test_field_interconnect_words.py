"""The communication stack's words for the container's locked-memory limit
(data/job_errors/interconnect.toml): UCX's own note after a verbs call that failed with ENOMEM
and Open MPI's openib help text name RLIMIT_MEMLOCK, which a container inherits from the
container runtime; the same verbs failure without that note stays with the GPUDirect RDMA path,
and the limit printed where nothing failed stays silent. A verbs queue not created
for want of memory is pinned host memory under the same limit (data/job_errors.toml).

Sources: openucx/ucx src/uct/ib/base/ib_log.c (the note), openucx/ucx#8746 and #8229,
open-mpi/ompi help-mpi-btl-openib.txt and open-mpi/ompi#6468 (--ulimit memlock=-1 in Docker)."""

from __future__ import annotations

import msgspec
import pytest
from case import Case, gpu_job_case
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
    # a memory region refused without UCX's note: may be GPU memory, the GPUDirect RDMA path's
    "[1631000000.123456] [node1:100:0]          ib_md.c:300  UCX  ERROR ibv_reg_mr(address=0x7f0000000000, "
    "length=4096, access=0xf) failed: Cannot allocate memory",
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


def test_a_memory_region_refused_without_the_note_stays_gpudirect() -> None:
    case = gpu_job_case("x-ucx-enomem", LOOK_ALIKES[0] + "\n")
    top = top_pair(case)
    assert top is not None and top[0] == "gpudirect-rdma"


# A verbs queue not created for want of memory (data/job_errors.toml verbs-queue-memlock): host
# memory pinned against RLIMIT_MEMLOCK. NVIDIA/cudf-spark#7632 (UCX shuffle in a container, fixed
# with --ulimit memlock=-1); open-mpi/ompi#6468 (Open MPI's "Failed to create a completion queue").
QUEUE_ENOMEM = [
    "ERROR mlx5_0: ibv_create_cq() failed: Cannot allocate memory.",
    "[1631000000.123456] [node1:100:0]       ib_iface.c:900  UCX  ERROR ibv_create_qp(ib_iface.c) failed: "
    "Cannot allocate memory",
]


@pytest.mark.parametrize("line", QUEUE_ENOMEM)
def test_a_queue_not_created_for_want_of_memory_is_the_containers_memlock(line: str) -> None:
    found = job_error(line)
    assert found is not None and found.id == "verbs-queue-memlock"
    # another errno for the same call stays the GPUDirect RDMA path's
    other = job_error(line.replace("Cannot allocate memory", "No such device"))
    assert other is not None and other.component == "gpudirect-rdma"


# libibverbs' own messages about the kernel's verbs interface, as rdma-core's libibverbs/init.c
# prints them (check_abi_version) and NVIDIA's RDMA Aware Networks Programming User Manual lists
# them ("Typical error messages": https://www.mellanox.com/related-docs/prod_software/
# RDMA_Aware_Programming_user_manual.pdf): an ABI the library does not support is the node's
# RDMA stack at another source than the image's library; no ABI file at all is ib_uverbs not
# loaded, which only a node with an RDMA NIC should have loaded.
ABI_MISMATCH = "libibverbs: Fatal: kernel ABI version 0 doesn't match library version 6."
NO_VERBS_KERNEL = [
    "libibverbs: Fatal: couldn't read uverbs ABI version.",
    # rdma-core's ibv_devices (perror after ibv_get_device_list's ENOSYS)
    "Failed to get IB devices list: Function not implemented",
]


def test_a_kernel_abi_the_library_does_not_support_is_the_ofed_stack() -> None:
    found = job_error(ABI_MISMATCH)
    assert found is not None and (found.component, found.cause) == ("ofed", "error_version_mismatch")


def _job(text: str, nics: int | None = None) -> Case:
    case = gpu_job_case("x-no-uverbs", text)
    if nics is None:
        return case
    cluster = msgspec.convert({"gpu_node": {"nics": nics}}, type(case.cluster))
    return msgspec.structs.replace(case, cluster=cluster)


@pytest.mark.parametrize("line", NO_VERBS_KERNEL)
def test_no_kernel_verbs_interface_beside_a_mellanox_nic_is_the_ofed_stack(line: str) -> None:
    # the simulated node has mlx5_core loaded
    assert top_pair(_job(line + "\n")) == ("ofed", "error_not_found")


@pytest.mark.parametrize("line", NO_VERBS_KERNEL)
def test_no_kernel_verbs_interface_on_a_node_without_an_rdma_nic_says_nothing(line: str) -> None:
    top = top_pair(_job(line + "\n", nics=0))
    assert top is None or top[0] != "ofed"
