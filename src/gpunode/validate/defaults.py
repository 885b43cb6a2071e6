"""Defaults shared by the command line and the active checks (no heavy imports)."""

from __future__ import annotations

DEFAULT_IMAGE = "nvcr.io/nvidia/cuda:12.8.1-base-ubuntu22.04"
DEFAULT_NCCL_IMAGE = "nvcr.io/nvidia/pytorch:25.01-py3"
# Bus bandwidth floor for the two-node all-reduce, GB/s as NCCL tests report it.
DEFAULT_NCCL_FLOOR_GBPS = 100.0
DEFAULT_TIMEOUT_S = 300.0
# dcgm-exporter collects every 30 s by default; live freshness waits one interval.
DEFAULT_SCRAPE_INTERVAL_S = 30.0
