"""The node pass's ``may_find`` gates (``checks.base``): a check behind a gate is not called
on a node where the gate is shut, so a gate must be shut only where its checks find nothing.
The file gates (``Reads``, ``FilesMatching``) are asked once per set of node files, the others
once per node; a node's judgement is the same with every gate open."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from gpunode import diagnose as diagnose_module
from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.checks import base
from gpunode.checks.base import FileGate, FilesMatching, PodsHere, node_plan, pods_here, reads
from gpunode.checks.context import NodeContext
from gpunode.kb import load_kb
from gpunode.sim import build_bundle, load_scenario

#: Scenarios whose nodes open the gates: journals, workload logs, RDMA listings, a runtime
#: the kubelet reports down, the RDMA plugin's and the driver's pods.
SCENARIOS = ("falcon-ai", "fault-container-runtime-down", "fault-nccl-socket-fallback",
             "fault-rdma-port-down", "fault-rdma-selector-no-devices", "fault-imex-not-running",
             "fault-fabric-manager-not-running", "fault-kernel-headers-missing", "fault-node-not-ready")


def _ctx(cmd: dict[str, str] | None = None, files: dict[str, str] | None = None,
         pods: dict[str, list[object]] | None = None) -> Any:
    obs = SimpleNamespace(cmd=cmd or {}, files=files or {}, metrics={})
    here = pods or {}

    def observed(need: str) -> bool:
        kind, _, rest = need.partition("/")
        return rest in {"cmd": obs.cmd, "files": obs.files}.get(kind, obs.metrics)

    return SimpleNamespace(obs=obs, observed=observed, stack_pods=lambda c: here.get(c, []))


def test_reads_opens_on_any_of_its_files() -> None:
    gate = reads("cmd/journal-kubelet.txt", "files/var/log/x.log")
    assert not gate(_ctx())
    assert gate(_ctx(cmd={"journal-kubelet.txt": ""}))  # present, even empty: the check reads it
    assert gate(_ctx(files={"var/log/x.log": "line"}))
    assert not gate(_ctx(cmd={"journal-runtime.txt": "x"}, files={"var/log/y.log": "x"}))
    assert gate == reads("cmd/journal-kubelet.txt", "files/var/log/x.log")  # one gate, asked once


def test_files_matching_searches_the_paths() -> None:
    gate = FilesMatching(r"(?:^|/)nvidia-container-runtime/config\.toml$")
    assert gate(_ctx(files={"etc/nvidia-container-runtime/config.toml": ""}))
    assert not gate(_ctx(files={"etc/containerd/config.toml": ""}))
    assert isinstance(gate, FileGate) and isinstance(reads("cmd/x"), FileGate)


def test_pods_here_opens_where_the_component_runs() -> None:
    gate = pods_here("rdma-device-plugin")
    assert gate == PodsHere("rdma-device-plugin")
    assert not gate(_ctx(pods={"driver": [object()]}))
    assert gate(_ctx(pods={"rdma-device-plugin": [object()]}))


def test_file_gates_asked_per_set_of_files_not_per_node() -> None:
    plan = node_plan(load_bundle(_bundle_of("falcon-ai")).catalog)
    assert plan.reads and all(isinstance(g, FileGate) for g in plan.reads)
    assert not any(isinstance(g, FileGate) for g in plan.gates)


_BUNDLES: dict[str, Path] = {}


def _bundle_of(name: str) -> Path:
    return _BUNDLES[name]


@pytest.fixture(scope="module", autouse=True)
def bundles(tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("gates")
    for name in SCENARIOS:
        _BUNDLES[name] = build_bundle(load_scenario(name), root / name)


def _judged(facts: Any, name: str) -> dict[str, tuple[object, ...]]:
    ctx = NodeContext(facts, name, read_node_observations(facts, name), load_kb())
    judged = diagnose_module.judge_node(ctx, facts.catalog)
    return {cid: (j.status, tuple(j.findings), tuple(j.unobserved)) for cid, j in judged.items()}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_gates_change_no_judgement(scenario: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every GPU node of the scenario judged with the gates and with every gate open (each
    check called, as before the gates): the same findings, statuses and missing data."""
    facts = load_bundle(_bundle_of(scenario))
    names = [n for n in facts.gpu_nodes() if facts.is_gpu_node(n)]
    gated = {name: _judged(facts, name) for name in names}
    monkeypatch.setattr(base.NodePlan, "shut", lambda self, ctx, unread=frozenset(): frozenset())
    facts = load_bundle(_bundle_of(scenario))
    for name in names:
        assert _judged(facts, name) == gated[name], name
