"""NCCL finding no IP interface in the job's network namespace (data/job_errors.toml
nccl-no-socket-interface): its socket layer's EAFNOSUPPORT and its bootstrap's own words are
the network the container was given, the container runtime's; other socket errors (a peer
that does not answer, a file limit) are not read as it."""

from __future__ import annotations

import pytest
from case import synthetic_case
from scoreboard import top_pair

from gpunode.job_errors import job_error

REAL = [
    # NVIDIA/nccl#210 (a host with no IP interface), NVIDIA/nccl-tests#14 (a Docker container)
    "include/socket.h:344 WARN Socket creation failed : Address family not supported by protocol",
    "e66aa18dc444:3171:3171 [0] include/socket.h:311 WARN Socket creation failed : Address family not "
    "supported by protocol",
    # NCCL's bootstrap.cc (bootstrapNetInit) when ncclFindInterfaces finds none
    "node5:236:236 [2] bootstrap.cc:60 NCCL WARN Bootstrap : no socket interface found",
]

LOOK_ALIKES = [
    "node5:236:236 [2] NCCL INFO Bootstrap : Using bond0:10.0.0.3<0>",
    "include/socket.h:360 WARN Call to connect failed : Connection timed out",
    "misc/socket.cc:430 NCCL WARN Socket creation failed : Too many open files",
]


@pytest.mark.parametrize("line", REAL)
def test_no_interface_is_the_containers_network(line: str) -> None:
    found = job_error(line)
    assert found is not None and found.id == "nccl-no-socket-interface"
    assert found.component == "container-runtime"


@pytest.mark.parametrize("line", LOOK_ALIKES)
def test_other_socket_lines_are_not_read_as_it(line: str) -> None:
    found = job_error(line)
    assert found is None or found.id != "nccl-no-socket-interface"


def test_a_job_pod_that_finds_no_interface() -> None:
    case = synthetic_case("x-nccl-no-if", [
        {"kind": "log", "object": {"kind": "Pod", "name": "nccl-tests", "namespace": "default"},
         "text": "NCCL failure common.cu:874 'unhandled system error'\n" + REAL[0] + "\n"},
    ])
    assert top_pair(case) == ("container-runtime", "error_unclassified")


# The job's own setting: NCCL_SOCKET_IFNAME unset lets NCCL fall back to any interface, loopback
# last (NVIDIA/nccl#286: the default is ^lo,docker), so its bootstrap finding none under a filter
# the job set is the job's configuration. NVIDIA/nccl's bootstrap.cc returns ncclInvalidUsage
# ("invalid usage") after the WARN; NVIDIA/nccl#1837 shows NCCL's notice of the job's variable.
OWN_SETTING = [
    "twshared1016:1958:1958 [3] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth2\n"
    "twshared1016:1958:1958 [3] bootstrap.cc:45 NCCL WARN Bootstrap : no socket interface found\n",
    "node5:236:236 [2] bootstrap.cc:60 NCCL WARN Bootstrap : no socket interface found\n"
    "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n",
]


@pytest.mark.parametrize("text", OWN_SETTING)
def test_no_interface_under_the_jobs_own_filter_is_the_jobs(text: str) -> None:
    case = synthetic_case("x-nccl-ifname", [
        {"kind": "log", "object": {"kind": "Pod", "name": "trainer-0", "namespace": "default"}, "text": text},
    ])
    assert top_pair(case) is None


def test_bootstrap_line_alone_stays_the_containers_network() -> None:
    """Look-alike: the same WARN with no word of the job's setting or NCCL's usage class."""
    case = synthetic_case("x-nccl-no-if-bare", [
        {"kind": "log", "object": {"kind": "Pod", "name": "trainer-0", "namespace": "default"},
         "text": "NCCL failure common.cu:874 'unhandled system error'\n" + REAL[2] + "\n"},
    ])
    assert top_pair(case) == ("container-runtime", "error_unclassified")
