"""An RDMA test's own "Couldn't allocate MR" over host memory, with no errno or ENOMEM, is the
container's locked-memory limit, which the container runtime sets (raids-lab/crater#339:
ib_read_bw between pods under containerd's default 64 KiB memlock). The same words after a GPU
buffer (perftest --use_cuda: peer memory), with another errno (EFAULT), or NCCL's verbs wrapper
naming its own path are not read so."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

PERFTEST = "Couldn't allocate MR\nfailed to create mr\nFailed to create MR\n Couldn't create IB resources\n"


def _case(text: str) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "rdma-test", "namespace": "default", "container": "ctr",
         "resources": {"limits": {"nvidia.com/gpu": "1", "rdma/rdma_shared": "1"}}, "state": "Running"},
        {"kind": "log", "object": {"kind": "Pod", "name": "rdma-test", "namespace": "default"},
         "container": "ctr", "text": text}]
    return synthetic_case("x-rdma-memlock", evidence, cluster={"driver_mode": "host"})


def test_host_memory_refused_is_the_runtimes_limit() -> None:
    assert top_pair(_case(PERFTEST)) == ("container-runtime", "error_resource_exhausted")
    assert top_pair(_case("Couldn't allocate MR with error=12\n")) == (
        "container-runtime", "error_resource_exhausted")


def test_gpu_buffer_refused_is_not_the_runtimes() -> None:
    text = "allocated GPU buffer address at 0x7f0000000000 pointer=0x7f0000000000\n" + PERFTEST
    top = top_pair(_case(text))
    assert top is None or top[0] != "container-runtime"


def test_bad_address_is_not_the_runtimes() -> None:
    top = top_pair(_case("Couldn't allocate MR with error=14\n"))
    assert top is None or top[0] != "container-runtime"


def test_nccl_wrapper_keeps_its_path() -> None:
    line = "misc/ibvwrap.cc:278 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory\n"
    top = top_pair(_case(line))
    assert top is None or top[0] != "container-runtime"
