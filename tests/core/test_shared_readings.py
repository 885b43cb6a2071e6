"""Readings shared between nodes (issue 20's node pass): a component without a pod on a node
is read once per distinct ``absence_key`` and the reading shared (``checks.pods.absent_shared``);
a component's report that says only "not deployed" or "ok" is made once and shared
(``Diagnoser._quiet_component``); a component with nothing to refit and no words of its own
is passed over by the facts fit and ``own_words`` (``diagnose._settled``), and one none of
whose scans may find anything on the node by the signature scans (``signatures.scanning``).
Each must give what the reading it stands for gives: the key holds every input of the
reading (change one, and the reading changes, and the shared reading with it), nodes of
equal keys get equal reports, and whole reports are the same with and without the sharing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from gpunode import diagnose as diagnose_module
from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.checks import decisive, operator, pods
from gpunode.checks.context import NodeContext
from gpunode.diagnose import Diagnoser, diagnose
from gpunode.facts import ClusterFacts
from gpunode.kb import load_kb
from gpunode.model import Finding
from gpunode.platforms import GENERIC
from gpunode.sim import build_bundle, load_scenario

#: A GPU Operator operand (with a state label of its own) made pod-less and DaemonSet-less on
#: both GPU nodes of falcon-ai, so its absence is a shared reading there.
OPERAND = "dcgm-exporter"
NODE, OTHER = "gpu-wk-01", "gpu-wk-02"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_bundle(load_scenario("falcon-ai"), tmp_path_factory.mktemp("shared") / "bundle")


@pytest.fixture
def facts(root: Path) -> ClusterFacts:
    """falcon-ai without the operand's DaemonSet and pods, the ClusterPolicy with sandbox
    workloads enabled (so the node's workload-config label is read)."""
    loaded = load_bundle(root)
    loaded.daemonsets.pop(OPERAND, None)
    for by_component in loaded.pods_by_node.values():
        by_component.pop(OPERAND, None)
    policy = loaded.cluster_policies[0]
    spec = {**policy.spec, "sandboxWorkloads": {"enabled": True}}
    loaded.cluster_policies = (msgspec.structs.replace(policy, spec=spec), *loaded.cluster_policies[1:])
    return loaded


def _ctx(facts: ClusterFacts, name: str = NODE) -> NodeContext:
    return NodeContext(facts, name, read_node_observations(facts, name), load_kb())


def _relabelled(facts: ClusterFacts, change: Callable[[dict[str, str]], None], name: str = NODE) -> None:
    node = facts.nodes[name]
    labels = dict(node.metadata.labels)
    change(labels)
    facts.nodes[name] = msgspec.structs.replace(
        node, metadata=msgspec.structs.replace(node.metadata, labels=labels))


def _set(key: str, value: str) -> Callable[[dict[str, str]], None]:
    return lambda labels: labels.__setitem__(key, value)


def _no_pci(labels: dict[str, str]) -> None:
    for key in operator.NVIDIA_PCI_LABELS:
        labels.pop(key, None)


def _platform(provides: tuple[str, ...], title: str) -> Callable[[NodeContext], None]:
    def apply(ctx: NodeContext) -> None:
        ctx.__dict__["platform"] = msgspec.structs.replace(GENERIC, provides=provides, title=title)
    return apply


def _scoped_pods(ctx: NodeContext) -> None:
    ctx.__dict__["pods_complete"] = False


LABELS = {
    "operands switched off": _set(operator.OPERANDS_LABEL, "false"),
    "vm workload": _set(operator.WORKLOAD_CONFIG, "vm-passthrough"),
    "operand's own state label": _set(operator.OPERANDS[OPERAND][0], "false"),
    "no NVIDIA PCI label": _no_pci,
}
CONTEXTS = {
    "platform provides it": _platform((OPERAND,), "Test platform"),
    "platform's title": _platform((OPERAND,), "Another platform"),
    "pods listed in some namespaces": _scoped_pods,
}


def test_the_operand_is_read_from_the_shared_memo(facts: ClusterFacts) -> None:
    ctx = _ctx(facts)
    assert OPERAND in pods.shareable_components(facts)
    assert pods.absent_shared(ctx, OPERAND) is pods.absent_shared(_ctx(facts), OPERAND)  # one reading


@pytest.mark.parametrize("change", sorted(LABELS))
def test_each_label_the_reading_reads_is_in_the_key(facts: ClusterFacts, change: str) -> None:
    base = _ctx(facts)
    before = pods.absent_shared(base, OPERAND)  # (kept in the shared memo)
    _relabelled(facts, LABELS[change])
    ctx = _ctx(facts)
    direct = pods._absent(ctx, OPERAND)
    assert direct != before  # the input matters to the reading...
    assert pods.absence_key(ctx) != pods.absence_key(base)  # ...so the key holds it
    assert pods.absent_shared(ctx, OPERAND) == direct


@pytest.mark.parametrize("change", sorted(CONTEXTS))
def test_the_platform_and_the_pod_list_s_scope_are_in_the_key(facts: ClusterFacts, change: str) -> None:
    base = _ctx(facts)
    before = pods.absent_shared(base, OPERAND)
    previous = _ctx(facts)
    _platform((OPERAND,), "Test platform")(previous)
    pods.absent_shared(previous, OPERAND)  # (a platform's reading is kept too)
    ctx = _ctx(facts)
    CONTEXTS[change](ctx)
    direct = pods._absent(ctx, OPERAND)
    assert direct != before
    assert pods.absence_key(ctx) != pods.absence_key(base)
    assert pods.absent_shared(ctx, OPERAND) == direct


def test_no_node_object_is_in_the_key(facts: ClusterFacts) -> None:
    base = _ctx(facts)
    before = pods.absent_shared(base, OPERAND)
    del facts.nodes[NODE]
    ctx = _ctx(facts)
    direct = pods._absent(ctx, OPERAND)
    assert direct != before
    assert pods.absent_shared(ctx, OPERAND) == direct


def test_a_reading_that_may_read_more_is_not_shared(facts: ClusterFacts, root: Path) -> None:
    """A component with a DaemonSet (the selector is read against every label), one another
    replaces (the reading names the replacing pod) or a required one (its absence names the
    node) is read on its node."""
    shareable = pods.shareable_components(facts)
    assert "gfd" not in shareable  # its DaemonSet is in falcon-ai
    assert "device-plugin" not in shareable  # required, and HAMi's plugin (and others) replace it
    assert "vfio-manager" in shareable
    plain = load_bundle(root)
    assert plain.daemonsets.get(OPERAND)
    assert OPERAND not in pods.shareable_components(plain)


def test_nodes_of_equal_keys_get_equal_reports(facts: ClusterFacts) -> None:
    """Two GPU nodes alike in what the reading reads, unlike in name and other labels: the
    operand's reading and component report are equal, and equal to those read without the
    memo."""
    _relabelled(facts, _set("example.com/rack", "r7"), OTHER)
    one, two = _ctx(facts), _ctx(facts, OTHER)
    assert pods.absence_key(one) == pods.absence_key(two)
    assert one.node is not None and two.node is not None
    assert one.node.metadata.labels != two.node.metadata.labels
    assert pods.absent_shared(one, OPERAND) == pods.absent_shared(two, OPERAND) == pods._absent(two, OPERAND)
    report = diagnose(facts, read_node_observations)
    by_node = {n.name: {c.component: c for c in n.components} for n in report.nodes}
    assert by_node[NODE][OPERAND] == by_node[OTHER][OPERAND]  # (ok: its metrics are scraped)
    assert by_node[NODE]["vfio-manager"] == by_node[OTHER]["vfio-manager"]


def _unshared(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every reading made on its node: no shared absence, no shared report, no component
    passed over by the signature scans, the facts fit and ``own_words``."""
    monkeypatch.setattr(pods, "absent_shared", pods._absent)
    monkeypatch.setattr(Diagnoser, "_quiet_component", lambda self, here, j: None)
    monkeypatch.setattr(diagnose_module, "voiced", lambda ctx: frozenset(ctx.facts.catalog.by_id))
    monkeypatch.setattr(diagnose_module, "scanning", lambda ctx, ids: frozenset(ids))


@pytest.mark.parametrize("scenario", ["falcon-ai", "falcon-ai-broken", "falcon-ai-vgpu",
                                      "fault-gpu-fallen-off-bus", "fault-device-plugin-zero-gpus",
                                      "fault-containerd-not-patched"])
def test_reports_are_the_same_with_and_without_sharing(
        scenario: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = build_bundle(load_scenario(scenario), tmp_path / "bundle")
    shared = msgspec.json.encode(diagnose(load_bundle(root), read_node_observations))
    _unshared(monkeypatch)
    assert msgspec.json.encode(diagnose(load_bundle(root), read_node_observations)) == shared


def test_voiced_holds_what_own_words_reads_whatever_the_findings(facts: ClusterFacts) -> None:
    ctx = _ctx(facts)
    speaking = decisive.voiced(ctx)
    assert facts.side_logged <= speaking
    assert OPERAND not in speaking
    for cid in facts.catalog.by_id:
        if cid not in speaking:  # no problem among its findings: own_words adds nothing
            findings: list[Finding] = []
            assert decisive.own_words(ctx, cid, findings) == [] and findings == []
