"""Parsing one metric family from a split scrape gives the same samples as a full parse."""

from __future__ import annotations

import random
import re
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


PIECES = ["# HELP m help text", "# TYPE m gauge", "#TYPE m gauge", "# TYPE  m\tgauge x", "#x HELP n y",
          "# HELPX m", "# HELP", "# HELP m", " # HELP m x", "  m 1", '\tm{a="b"} 2', "m", "m_total 2",
          '{a="b"} 3', ":x 1", "9m 1", "", " ", "a:b_c{x=\"y\"} 1", "é 1", "m\r2", "#\x1cHELP m x"]


def _by_definition(text: str) -> dict[str, str]:
    """Each line under its family: a HELP/TYPE comment's third word, a sample's metric name."""
    groups: dict[str, list[str]] = {}
    for line in text.splitlines():
        words = line.split(None, 3)
        if line.startswith("#"):
            name = words[2] if len(words) > 2 and words[1] in ("HELP", "TYPE") else ""
        else:
            found = re.match(r"\s*([a-zA-Z_:][a-zA-Z0-9_:]*)", line)
            name = found.group(1) if found else ""
        if name:
            groups.setdefault(name, []).append(line)
    return {name: "\n".join(lines) + "\n" for name, lines in groups.items()}


def test_random_scrapes_split_by_definition() -> None:
    """Comment lines read once and remembered split as when read afresh."""
    rng = random.Random(3)
    for _ in range(3000):
        text = "\n".join(rng.choice(PIECES) for _ in range(rng.randint(0, 5))) + rng.choice(["", "\n"])
        assert split_families(text) == _by_definition(text), text
