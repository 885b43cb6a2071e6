"""Defaults shared by the command line and the active checks (no heavy imports)."""

from __future__ import annotations

DEFAULT_IMAGE = "nvcr.io/nvidia/cuda:12.8.1-base-ubuntu22.04"
# nccl-tests built with MPI, with HPC-X's OpenMPI and sshd (an MPIJob-ready image): all_reduce_perf.
# A tag its publisher lists (github.com/coreweave/nccl-tests README, "Docker Images"; docs/validate.md).
DEFAULT_NCCL_IMAGE = "ghcr.io/coreweave/nccl-tests:12.8.1-devel-ubuntu22.04-nccl2.27.6-1-7c12c62"
# Bus bandwidth floor for the two-node all-reduce, GB/s as NCCL tests report it, where the
# links' rated speed is unknown (no RDMA port or NVLink domain read on the pair's nodes).
DEFAULT_NCCL_FLOOR_GBPS = 100.0
DEFAULT_TIMEOUT_S = 300.0
# dcgm-exporter collects every 30 s by default; live freshness waits one interval.
DEFAULT_SCRAPE_INTERVAL_S = 30.0
