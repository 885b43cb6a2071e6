"""Nodes judged in worker processes: same results, same order, errors and dead workers handled."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from goldenmaker import MAKER

from gpunode import nodepool
from gpunode.errors import BundleError

NAMES = [f"gpu-{i:03d}" for i in range(40)]
PARENT = os.getpid()


def _where(name: str) -> tuple[str, int]:
    return name, os.getpid()


def test_nodes_come_back_in_order_from_worker_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(nodepool.JOBS_ENV, "2")
    results = list(nodepool.judged(NAMES, _where))
    assert [name for name, _ in results] == NAMES
    assert {pid for _, pid in results} - {PARENT}, "no node was judged in a worker"
    assert results[0][1] == PARENT, "the first node warms the caches the workers inherit"


def test_small_fleets_and_jobs_1_stay_in_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(nodepool.JOBS_ENV, raising=False)
    assert {pid for _, pid in nodepool.judged(NAMES, _where)} == {PARENT}
    assert nodepool.jobs(nodepool.MIN_NODES - 1) == 1
    monkeypatch.setenv(nodepool.JOBS_ENV, "1")
    assert nodepool.jobs(100_000) == 1


def test_chunks_keep_node_order_and_end_small() -> None:
    """The last chunks are a quarter of the others, so the workers finish close together."""
    names = [f"gpu-{i:05d}" for i in range(4_999)]
    chunks = nodepool._chunks(names, 2)
    assert [name for chunk in chunks for name in chunk] == names
    assert max(len(chunk) for chunk in chunks) == nodepool.MAX_CHUNK
    assert all(len(chunk) <= nodepool.MAX_CHUNK // 4 for chunk in chunks[-8:])
    assert nodepool._chunks(names[:3], 2) == [[n] for n in names[:3]]


def _refuse(name: str) -> str:
    if name == "gpu-017":
        raise BundleError(f"nodes/{name}/cmd/nvidia-smi-q.xml: cannot read")
    return name


def test_a_worker_error_reaches_the_caller_as_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(nodepool.JOBS_ENV, "2")
    with pytest.raises(BundleError, match=re.escape("gpu-017/cmd/nvidia-smi-q.xml: cannot read")):
        list(nodepool.judged(NAMES, _refuse))


def _die_in_worker(name: str) -> tuple[str, int]:
    if name == "gpu-021" and os.getpid() != PARENT:
        os._exit(9)  # as if killed for memory
    return _where(name)


def test_nodes_a_dead_worker_held_are_judged_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(nodepool.JOBS_ENV, "2")
    results = list(nodepool.judged(NAMES, _die_in_worker))
    assert [name for name, _ in results] == NAMES
    assert dict(results)["gpu-021"] == PARENT


@pytest.mark.parametrize("case", [c for c in MAKER.cases() if c.startswith("falcon-ai")])
def test_reports_from_workers_are_the_serial_reports(case: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Diagnose and validate JSON with every node judged in a worker, byte for byte."""
    monkeypatch.setenv(nodepool.JOBS_ENV, "2")
    pooled: list[int] = []
    real = nodepool._in_workers
    monkeypatch.setattr(nodepool, "_in_workers", lambda *args: pooled.append(1) or real(*args))
    expected = MAKER.golden_path(case).read_bytes()
    assert MAKER.reports(MAKER.bundle_for(case, tmp_path)) == expected
    assert pooled, "the nodes were not sent to workers"


def test_validate_outcomes_come_back_as_messagepack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Validate's node checks ride on the diagnosis in the workers; their outcomes come back
    with the node reports as MessagePack (not pickled), and the report is the serial one."""
    from gpunode.bundle.load import load_bundle, read_node_observations
    from gpunode.validate.runner import validate_facts

    case = next(c for c in MAKER.cases() if c.startswith("falcon-ai"))
    facts = load_bundle(MAKER.bundle_for(case, tmp_path))
    monkeypatch.setenv(nodepool.JOBS_ENV, "1")
    serial = msgspec.json.encode(validate_facts(facts, read_node_observations))
    monkeypatch.setenv(nodepool.JOBS_ENV, "2")
    codecs: list[nodepool.Codec | None] = []
    real = nodepool._in_workers

    def in_workers(names: list[str], work: Any, workers: int, codec: nodepool.Codec | None) -> Any:
        codecs.append(codec)
        return real(names, work, workers, codec)

    monkeypatch.setattr(nodepool, "_in_workers", in_workers)
    pooled = msgspec.json.encode(validate_facts(facts, read_node_observations))
    assert codecs and codecs[0] is not None, "validate's results were pickled"
    assert pooled == serial


@pytest.mark.parametrize("case", ["falcon-ai", "falcon-ai-broken"])
def test_validate_without_its_diagnosis_shown_is_the_same_report(
        case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``validate -o json`` shows no diagnosis: the workers send back each node's verdict and
    root causes only (what the stack check reads), and the report does not change."""
    from gpunode.bundle.load import load_bundle, read_node_observations
    from gpunode.validate.runner import validate_and_diagnose

    monkeypatch.setenv(nodepool.JOBS_ENV, "2")
    facts = load_bundle(MAKER.bundle_for(case, tmp_path))
    shown, diagnosis = validate_and_diagnose(facts, read_node_observations)
    hidden, none = validate_and_diagnose(facts, read_node_observations, with_diagnosis=False)
    assert none is None and diagnosis is not None
    assert all(node.components for node in diagnosis.nodes)
    assert msgspec.json.encode(hidden) == msgspec.json.encode(shown)
    stack = next(r for r in shown.checks() if r.id == "gpu.stack-diagnosis")
    assert (stack.verdict.value == "fail") == any(node.root_causes for node in diagnosis.nodes)


@pytest.mark.parametrize("case", [c for c in MAKER.cases() if not c.startswith("fixture:")])
def test_a_node_verdict_is_its_report_without_components(case: str, tmp_path: Path) -> None:
    """What validate's workers send back when the diagnosis is not shown is the full node
    report less its components and missing data, for every node of every scenario."""
    from gpunode.bundle.load import load_bundle, read_node_observations
    from gpunode.checks.context import NodeContext
    from gpunode.diagnose import Diagnoser, judge_cluster, judge_node
    from gpunode.kb import load_kb

    facts, kb = load_bundle(MAKER.bundle_for(case, tmp_path)), load_kb()
    diagnoser = Diagnoser(facts, kb)
    cluster = diagnoser.cluster_report(judge_cluster(facts, kb))
    problems = {c.component: c.status for c in cluster.components if c.status.is_problem}
    for name in facts.gpu_nodes():
        ctx = NodeContext(facts, name, read_node_observations(facts, name), kb)
        judged = judge_node(ctx, facts.catalog)
        full = diagnoser.node_report(ctx, judged, problems)
        assert diagnoser.node_verdict(ctx, judged, problems) == msgspec.structs.replace(
            full, components=(), missing_data=())
