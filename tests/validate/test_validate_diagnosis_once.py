"""``validate`` with the diagnosis shown (table, HTML) diagnoses the nodes once, not twice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

import gpunode.diagnose
import gpunode.validate.runner
from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.validate.service import ValidateRequest, validate


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = gpunode.diagnose.diagnose

    def counted(*args: Any, **kwargs: Any) -> gpunode.diagnose.Report:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(gpunode.diagnose, "diagnose", counted)
    monkeypatch.setattr(gpunode.validate.runner, "diagnose", counted)
    return calls


def test_the_checks_diagnosis_is_the_one_shown(falcon_healthy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    facts = load_bundle(falcon_healthy)
    expected = msgspec.json.encode(gpunode.diagnose.diagnose(facts, read_node_observations))
    calls = _counting(monkeypatch)
    result = validate(ValidateRequest(bundle=falcon_healthy, with_diagnosis=True))
    assert len(calls) == 1
    assert msgspec.json.encode(result.diagnosis) == expected


def test_nodes_asked_by_name_are_diagnosed_as_asked(falcon_healthy: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks diagnose every GPU node; the report shows the nodes the command named."""
    node = load_bundle(falcon_healthy).gpu_nodes()[-1]
    calls = _counting(monkeypatch)
    result = validate(ValidateRequest(bundle=falcon_healthy, with_diagnosis=True, nodes=(node,)))
    assert len(calls) == 2
    assert result.diagnosis is not None and [n.name for n in result.diagnosis.nodes] == [node]
