"""libibverbs skipping a device whose kernel driver speaks an ABI its provider does not
(rdma-core libibverbs/init.c: "Warning: Driver %s does not support the kernel ABI of %u
(supports %u to %u) for device %s"): the verbs userspace in a job's image does not match the
node's RDMA driver, read as the GPUDirect RDMA path's version mismatch (data/job_errors.toml
verbs-kernel-abi). Real lines from public reports, and look-alikes that must not move."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.job_errors import job_error

#: Real lines and the report each is from.
REAL = {
    # https://github.com/SoftRoCE/rxe-dev/issues/74 (rxe_cfg, ibv_devices on Soft-RoCE)
    "libibverbs: Warning: Driver rxe does not support the kernel ABI of 1 (supports 2 to 2) "
    "for device /sys/class/infiniband/rxe0": "https://github.com/SoftRoCE/rxe-dev/issues/74",
    # https://github.com/open-mpi/ompi/issues/11623 (ucx_info -d: mlx5's provider on a Soft-RoCE device)
    "libibverbs: Warning: Driver mlx5 does not support the kernel ABI of 2 (supports 1 to 1) "
    "for device /sys/class/infiniband/rxe_eth0": "https://github.com/open-mpi/ompi/issues/11623",
    # https://github.com/sgl-project/sglang/issues/16242 (an SGLang image on Broadcom RoCE NICs)
    "libibverbs: Warning: Driver bnxt_re does not support the kernel ABI of 6 (supports 1 to 1) "
    "for device /sys/class/infiniband/bnxt_re1": "https://github.com/sgl-project/sglang/issues/16242",
}

#: libibverbs' other warnings, about providers for devices the node may not have, and words
#: about an ABI that are not this warning.
LOOK_ALIKES = [
    "libibverbs: Warning: couldn't load driver 'libbnxt_re-rdmav34.so': libbnxt_re-rdmav34.so: "
    "cannot open shared object file: No such file or directory",
    "libibverbs: Warning: couldn't open config directory '/etc/libibverbs.d'.",
    "The driver supports the kernel ABI of 6 for device bnxt_re0",
]


@pytest.mark.parametrize("line", sorted(REAL))
def test_real_lines_are_the_verbs_kernel_abi_entry(line: str) -> None:
    found = job_error(line)
    assert found is not None and found.id == "verbs-kernel-abi", found


@pytest.mark.parametrize("line", LOOK_ALIKES)
def test_look_alikes_are_not_read_as_it(line: str) -> None:
    found = job_error(line)
    assert found is None or found.id != "verbs-kernel-abi"


def _gpu_pod(text: str) -> Case:
    """A GPU workload pod on the node, with its log."""
    return synthetic_case("x-verbs-abi", [
        {"kind": "workload", "name": "rdma-test", "namespace": "default", "state": "Running"},
        {"kind": "log", "object": {"kind": "Pod", "name": "rdma-test", "namespace": "default"},
         "text": text + "\n"},
    ])


def test_a_pod_whose_verbs_userspace_does_not_match_the_host_driver_is_a_version_mismatch() -> None:
    line = next(iter(REAL))
    log = f"root@rdma-test:/# ibv_devices\n{line}\n    device                 node GUID\n"
    assert top_pair(_gpu_pod(log)) == ("gpudirect-rdma", "error_version_mismatch")


def test_a_pod_that_lists_its_device_stays_healthy() -> None:
    log = ("root@rdma-test:/# ibv_devices\n    device                 node GUID\n"
           "    ------              ----------------\n    bnxt_re0            b2ff3ffffe5e6a10\n")
    assert top_pair(_gpu_pod(log)) is None
