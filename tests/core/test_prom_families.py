"""Parsing one metric family from a split scrape gives the same samples as a full parse."""

from __future__ import annotations

from pathlib import Path

from gpunode.parse.prom import parse_prometheus_text, samples_named, split_families
from gpunode.sim import build_bundle, load_scenario


def test_one_family_equals_the_full_parse(tmp_path: Path) -> None:
    bundle = build_bundle(load_scenario("fault-gpu-fallen-off-bus"), tmp_path / "b")
    text = (bundle / "nodes/gpu-wk-02/metrics/dcgm-exporter.prom").read_text()
    families = split_families(text)
    full = parse_prometheus_text(text)
    for name in ("DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"):
        assert parse_prometheus_text(families[name]) == samples_named(full, name), name
    assert any(s.value == 79 for s in samples_named(full, "DCGM_FI_DEV_XID_ERRORS"))
    assert sum(len(parse_prometheus_text(t)) for t in families.values()) == len(full)
