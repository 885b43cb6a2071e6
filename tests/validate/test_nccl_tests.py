"""nccl-tests' all_reduce_perf output, read from a real two-node run, and the rated link
speed a pair's bus bandwidth is judged against."""

from __future__ import annotations

from pathlib import Path

import msgspec

from gpunode.bundle.kube import Pod
from gpunode.facts import NodeObservations
from gpunode.parse.nccl_tests import parse_nccl_tests
from gpunode.validate.active.judge import Observed, judge_nccl
from gpunode.validate.active.rated import NodeLinks, Rating, node_links, pair_rating
from gpunode.validation import Verdict

REAL = Path(__file__).parents[1] / "fixtures" / "real" / "interconnect"
#: Two A3 Mega nodes, 8 H100 each, all_reduce_perf -b 8 -e 8G (SOURCES.md).
A3MEGA = (REAL / "a3mega-nccl-tests-all-reduce-perf-2x8-h100.txt").read_text()


def _pod(phase: str) -> Pod:
    return msgspec.convert({"metadata": {"name": "nccl-0-launcher"}, "status": {"phase": phase}}, Pod)


def test_the_real_table_is_read_by_its_header() -> None:
    result = parse_nccl_tests(A3MEGA)
    assert result is not None and len(result.rows) == 31
    assert (result.rows[0].size_bytes, result.rows[-1].size_bytes) == (8, 8589934592)
    assert result.peak_busbw_gbps == 338.82 and result.avg_busbw_gbps == 70.742
    assert result.rows[-1].algbw_gbps == 180.71 and result.rows[-1].time_us == 47535
    assert result.validation == "OK" and not result.wrong_rows


def test_mpi_prefixed_lines_read_the_same() -> None:
    prefixed = "".join(f"[1,0]<stdout>:{line}\n" for line in A3MEGA.splitlines())
    assert parse_nccl_tests(prefixed) == parse_nccl_tests(A3MEGA)


def test_output_without_a_table_is_none() -> None:
    assert parse_nccl_tests("NCCL WARN NET/IB : No device found.\n") is None


def test_the_real_run_passes_against_eight_400g_ports() -> None:
    rating = Rating(400.0, "8 active InfiniBand port(s), 3200 Gb/s")
    outcome = judge_nccl(Observed("nccl-0-launcher", _pod("Succeeded"), A3MEGA), 100, rating)
    assert outcome.verdict == Verdict.PASS
    assert "bus bandwidth 338.82 GB/s at 8 GiB, 85% of the links' rated 400 GB/s" in outcome.summary


def test_the_real_run_warns_against_links_rated_far_above_it() -> None:
    outcome = judge_nccl(Observed("nccl-0-launcher", _pod("Succeeded"), A3MEGA), 100, Rating(800.0, "x"))
    assert outcome.verdict == Verdict.WARN and "42% of the links' rated 800 GB/s" in outcome.summary


def _obs(**cmd: str) -> NodeObservations:
    return NodeObservations("n", cmd, {}, {}, {})


SYSFS = "".join(
    f"mlx5_{i}/ports/1/{attr}:{value}\n"
    for i, state in enumerate(("4: ACTIVE", "4: ACTIVE", "1: DOWN"))
    for attr, value in (("state", state), ("phys_state", "5: LinkUp"),
                        ("rate", "400 Gb/sec (4X NDR)"), ("link_layer", "InfiniBand"))
)


def test_a_node_is_rated_at_its_active_ports() -> None:
    links = node_links(_obs(**{"sysfs-infiniband.txt": SYSFS}))
    assert links.rdma_gbps == 100.0 and links.rdma_text == "2 active InfiniBand port(s), 800 Gb/s"
    assert node_links(_obs()) == NodeLinks()


def test_a_pair_is_rated_at_its_slower_side_and_over_nvlink_within_one_domain() -> None:
    fast = NodeLinks(400.0, "8 ports", 478.1, "18 links", domain="u.1")
    slow = NodeLinks(200.0, "4 ports", 478.1, "18 links", domain="u.2")
    assert pair_rating(fast, slow) == Rating(200.0, "4 ports")
    same = NodeLinks(rdma_gbps=200.0, nvlink_gbps=450.0, nvlink_text="17 links", domain="u.1")
    assert pair_rating(fast, same) == Rating(450.0, "NVLink domain u.1: 17 links")
    assert pair_rating(fast, NodeLinks()) is None
