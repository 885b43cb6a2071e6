"""Two fabric libraries' own words in a GPU job (data/job_errors/interconnect.toml): NCCL not
finding the network NCCL_NET names (``nccl-network-not-found``) and HPE Slingshot's libcxi
refusing to map a buffer for the NIC (``cxi-map-write-error``), both the job's GPU-to-fabric
path.

Sources: NVIDIA/nccl src/net.cc ("Error: network %s not found." then ncclInvalidUsage);
HewlettPackard/shs-libcxi lib/cxil.c (cxil_map's "cxil_map: write error" when the device
write of the map command fails); docs.cscs.ch's NCCL and Cray MPICH known issues. Look-alikes:
NCCL naming the network it uses, a container engine's own "network ... not found", and
libcxi's successful runs (no line)."""

from __future__ import annotations

from case import gpu_job_case
from scoreboard import top_pair

from gpunode.job_errors import job_error

NOT_FOUND = "node1:34157:34217 [1] net.cc:626 NCCL WARN Error: network IB not found."
USING = "node1:34157:34217 [0] NCCL INFO Using network AWS Libfabric"
ENGINE = "Error response from daemon: network gpu-net not found"
CXI = "cxil_map: write error"
CXI_FINE = "libfabric:12345:1712345678::cxi:mr:cxip_map():123<info> mapped 4194304 bytes"


def test_nccl_missing_network_is_the_fabric_path_s() -> None:
    found = job_error(NOT_FOUND)
    assert found is not None and (found.component, found.cause) == ("gpudirect-rdma", "error_not_found")
    assert top_pair(gpu_job_case("x-nccl-net-missing", NOT_FOUND)) == ("gpudirect-rdma", "error_not_found")


def test_a_network_in_use_or_an_engine_s_network_says_nothing() -> None:
    assert job_error(USING) is None
    assert job_error(ENGINE) is None
    assert top_pair(gpu_job_case("x-nccl-net-used", USING)) is None


def test_cxil_map_refused_is_the_fabric_path_s() -> None:
    found = job_error(CXI)
    assert found is not None and (found.component, found.cause) == ("gpudirect-rdma", "error_unclassified")
    assert top_pair(gpu_job_case("x-cxil-map", CXI)) == ("gpudirect-rdma", "error_unclassified")


def test_a_mapped_buffer_says_nothing() -> None:
    assert job_error(CXI_FINE) is None
