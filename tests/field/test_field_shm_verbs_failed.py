"""A GPU job's words for its shared memory and its RDMA path (data/job_errors.toml): /dev/shm
full (NCCL's shared-memory transport, the container runtime's 64 MB default), a verbs or
RDMA-CM call failing in a wrapper's "failed" form (NCCL's ibvwrap, UCX), perftest's port that
is not ACTIVE, and librdmacm's address or route resolution error. Each on real lines from
public reports, each beside a look-alike it must not take, read through a whole case; the lines
alone are read to their table entries in test_field_verbs_words.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair


def _gpu_job(text: str) -> Case:
    """A GPU workload pod, Running, with its log."""
    return synthetic_case("x-shm-verbs", [
        {"kind": "workload", "name": "train-0", "namespace": "default", "container": "app",
         "resources": {"limits": {"nvidia.com/gpu": "4"}}, "state": "Running"},
        {"kind": "log", "object": {"kind": "Pod", "name": "train-0", "namespace": "default"},
         "text": text + "\n"},
    ])


def test_nccl_shm_segment_without_space_is_the_runtimes_shm_size() -> None:
    log = ("train-0:1:2 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
           "train-0:1:2 [0] misc/shmutils.cc:88 NCCL WARN Error: failed to extend /dev/shm/nccl-AB12CD to "
           "9637892 bytes, error: No space left on device (28)\n"
           "train-0:1:2 [0] NCCL INFO transport/shm.cc:551 -> 2")
    assert top_pair(_gpu_job(log)) == ("container-runtime", "error_resource_exhausted")


def test_nccl_running_over_shm_is_healthy() -> None:
    log = ("train-0:1:2 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
           "train-0:1:2 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct\n"
           "train-0:1:2 [0] NCCL INFO comm 0x5580 rank 0 nranks 4 cudaDev 0 busId 1000 - Init COMPLETE")
    assert top_pair(_gpu_job(log)) is None


def test_a_queue_pair_that_times_out_is_the_rdma_path_unreachable() -> None:
    log = ("NCCL error: unhandled system error\n"
           "ibv_modify_qp failed with 110 Connection timed out, on dev rocep1s0f0:1")
    assert top_pair(_gpu_job(log)) == ("gpudirect-rdma", "error_unreachable")


def test_a_queue_pair_retried_then_connected_is_healthy() -> None:
    log = ("NCCL INFO Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_0:1, "
           "curr state INIT, next state RTR, retrying 1/7 after 1000 msec of sleep\n"
           "NCCL INFO comm 0x5580 rank 0 nranks 16 cudaDev 0 busId 1000 - Init COMPLETE")
    assert top_pair(_gpu_job(log)) is None


def test_perftest_port_down_is_the_link_down() -> None:
    assert top_pair(_gpu_job(" Port number 1 state is Down\n Couldn't set the link layer")) == (
        "rdma-links", "rdma_port_down")


def test_rdma_cm_address_error_names_the_links() -> None:
    assert top_pair(_gpu_job("RDMA_CM_EVENT_ADDR_ERROR, error: -19")) == ("rdma-links", "error_unclassified")


_REAL = Path(__file__).parents[1] / "fixtures" / "real"


@pytest.mark.parametrize("name", [
    "broken/interconnect/deepep-60-ibv-devinfo-roce-port-down.txt",  # ibv_devinfo, PORT_DOWN
    "broken/interconnect/gpud-482-ibstat-port-polling.txt",  # ibstat, Down/Polling
])
def test_a_jobs_own_listing_with_its_port_down_is_the_link_down(name: str) -> None:
    log = "running ib_write_bw\n" + (_REAL / name).read_text("utf-8")
    assert top_pair(_gpu_job(log)) == ("rdma-links", "rdma_port_down")


@pytest.mark.parametrize("name", [
    "interconnect/deepep-38-ibv-devinfo-h100-roce.txt",  # every port ACTIVE
    "interconnect/gpud-752-ibstat-active-hdr.txt",
    "interconnect/gpud-99-ibstat-port-disabled.txt",  # switched off on purpose
])
def test_a_jobs_own_listing_with_ports_active_or_disabled_is_healthy(name: str) -> None:
    assert top_pair(_gpu_job((_REAL / name).read_text("utf-8"))) is None


def test_a_jobs_own_listing_waiting_in_init_is_no_subnet_manager() -> None:
    text = (_REAL / "interconnect/gpud-752-ibstat-active-hdr.txt").read_text("utf-8")
    waiting = text.replace("State: Active", "State: Initializing")
    assert waiting != text
    assert top_pair(_gpu_job(waiting)) == ("rdma-links", "ib_port_no_subnet_manager")
