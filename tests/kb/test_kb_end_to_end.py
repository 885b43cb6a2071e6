"""Every knowledge-base entry whose example is a log line, a pod event or a kernel
message is injected into the healthy simulated Falcon AI cluster on gpu-wk-02 and
must be named by ``diagnose`` as that node's root cause. Log signatures go at the
end of a 10,000-line log of unrelated output (as a crashed container's log looks).

The simulator has no generic "inject a signature" fault yet, so the test edits
the simulated world through the helpers the simulator's own faults use
(``cascade.crash``, ``cascade.pod_event``, ``World.set_log``, the node's kernel
events). Non-standalone signatures only refine a failing component, so its
container is made to crash-loop; standalone ones need nothing else. Causes on
mutually independent components share one simulated cluster to keep it fast.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import msgspec
import pytest
from kb_noise import bury_near_end

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.catalog import Catalog, load_catalog, topological_order
from gpunode.checks.facts_fit import fact_signatures
from gpunode.diagnose import diagnose
from gpunode.kb import Cause, Match, load_kb
from gpunode.model import NodeReport
from gpunode.sim import load_scenario
from gpunode.sim.build import build_world
from gpunode.sim.cascade import crash, no_sandbox, pod_event
from gpunode.sim.faults import FAULTS
from gpunode.sim.finalize import finalize
from gpunode.sim.world import World
from gpunode.sim.writer import write

NODE = "gpu-wk-02"

# Catalog component -> the simulator's operand key for its pod.
OPERAND = {
    "driver": "driver",
    "ofed": "mofed",
    "container-toolkit": "toolkit",
    "rdma-device-plugin": "rdma",
    "device-plugin": "device-plugin",
    "gfd": "gfd",
    "nfd": "nfd-worker",
    "mig-manager": "mig-manager",
    "csi-node": "csi-node",
    "dcgm-exporter": "dcgm-exporter",
    "node-exporter": "node-exporter",
    "logging-agent": "fluent-bit",
    "otel-agent": "otel-agent",
    "validator": "validator",
    "sriov-device-plugin": "sriov-dp",
}
# Components the simulated cluster cannot run, so their signatures cannot be injected.
NOT_IN_FALCON: set[str] = {
    # the other ways to hand out GPUs: the simulated cluster runs NVIDIA's device plugin
    # (tests/core/test_alternatives.py judges them on their own bundles)
    "dra-kubelet-plugin", "compute-domain-daemon", "hami-device-plugin", "volcano-device-plugin",
    "gke-device-plugin",
    # a VM-passthrough node's operand, never on the simulated container nodes (its signatures:
    # tests/kb/test_vfio_manager_host_driver.py, tests/core/test_vm_passthrough.py)
    "vfio-manager",
}

KB = load_kb()
CATALOG = load_catalog()
DMESG = "dmesg.txt"


def injectable(cause: Cause) -> Match | None:
    """The first signature the example satisfies that the simulator can carry."""
    if not cause.match or cause.component in NOT_IN_FALCON or cause.component == "*":
        return None
    if CATALOG.get(cause.component).scope != "node":
        return None
    for m in cause.match:
        # seen_in matches are read in other components' pods (tests/field covers them)
        carried = (m.source in ("log", "event") and not m.seen_in) or (
            m.source == "node_cmd" and m.name == DMESG
        )
        if carried and m.regex.search(_example(cause, m)):
            return m
    return None


def _example(cause: Cause, m: Match) -> str:
    """The line a signature is shown deciding: its own example where it has one (a decisive
    signature of a cause whose example is another source's line), else the cause's."""
    return m.example or cause.example


CAUSES = [c for c in KB.causes if injectable(c) is not None]


def _closure(catalog: Catalog) -> dict[str, set[str]]:
    deps = {c.id: set(c.depends_on) for c in catalog.components}
    out: dict[str, set[str]] = {}
    for cid in topological_order(catalog.components):
        out[cid] = deps[cid].union(*(out[d] for d in deps[cid]))
    return out


def _rounds(causes: Sequence[Cause]) -> list[list[Cause]]:
    """Group causes so no two in a group share a component or depend on each other."""
    closure = _closure(load_catalog())
    rounds: list[list[Cause]] = []
    for cause in causes:
        comp = cause.component
        for group in rounds:
            used = {c.component for c in group}
            if comp not in used and all(comp not in closure[u] and u not in closure[comp] for u in used):
                group.append(cause)
                break
        else:
            rounds.append([cause])
    return rounds


ROUNDS = _rounds(CAUSES)


def _pod_key(world: World, component: str) -> str:
    """The component's pod on the node; host components' events go to the driver pod."""
    key = world.ds_pod_key(OPERAND.get(component, "driver"), NODE)
    assert key is not None, f"no pod for {component} on {NODE}"
    return key


def _container(world: World, key: str, cause: Cause) -> str:
    """The container the signature belongs in: one it names, else the component's main one."""
    names = [c.name for c in world.containers(key)]
    wanted = [n for m in cause.match if m.source == "log" for n in m.containers]
    wanted += list(CATALOG.get(cause.component).containers)
    for name in wanted:
        if name in names:
            return name
    return [c.name for c in world.containers(key) if not c.init][-1]


def _inject(world: World, cause: Cause, seed: int) -> None:
    match = injectable(cause)
    assert match is not None
    if match.source in ("log", "event") and fact_signatures(cause):
        FAULTS[cause.code].apply(world, NODE)  # a fact of the node too (nouveau in lsmod): it holds
    example = _example(cause, match)
    noise = "\n".join(bury_near_end(example, 10_000, seed)) + "\n"
    if match.source == "event":
        reason = match.reasons[0] if match.reasons else "Failed"
        if reason == "FailedCreatePodSandBox":  # a pod whose sandbox is refused never runs
            no_sandbox(world, _pod_key(world, cause.component), world.ago(minutes=49), example)
        else:
            pod_event(world, _pod_key(world, cause.component), reason, example, count=7)
    elif match.source == "node_cmd":
        world.node(NODE).host.kernel_events.append(example)
    if cause.component not in OPERAND:
        return  # host components are judged from node data, not pods
    key = _pod_key(world, cause.component)
    container = _container(world, key, cause)
    log = noise if match.source == "log" else "\n".join(bury_near_end("", 2_000, seed)) + "\n"
    if not cause.standalone:
        crash(world, key, container, restarts=5, log=log)
    elif match.source == "log":
        world.set_log(key, container, log)


@cache
def _falcon() -> object:
    """Falcon AI with the opt-in SR-IOV device plugin, so every node component has a pod."""
    base = load_scenario("falcon-ai")
    cluster = msgspec.structs.replace(
        base.cluster, components=(*base.cluster.components, "sriov-device-plugin")
    )
    return msgspec.structs.replace(base, cluster=cluster)


def _diagnose_round(causes: Sequence[Cause], out: Path) -> dict[str, NodeReport]:
    world = build_world(_falcon())  # type: ignore[arg-type]
    for i, cause in enumerate(causes):
        _inject(world, cause, seed=i + 11)
    finalize(world)
    bundle = write(world, out / "bundle")
    report = diagnose(load_bundle(bundle), read_node_observations, [NODE])
    return {n.name: n for n in report.nodes}


def test_every_log_cause_is_injected() -> None:
    with_logs = {
        c.code
        for c in KB.causes
        if any(m.source == "log" and not m.seen_in for m in c.match) and c.component not in NOT_IN_FALCON
        and CATALOG.get(c.component).scope == "node"  # cluster components: test_cluster_log_cause_*
        # a host unit's own log is its journal or log file on the node, not a pod's log the
        # simulated cluster can be given (tests/field/test_field_collected.py reads those)
        and CATALOG.get(c.component).kind != "host"
    }
    injected = {c.code for r in ROUNDS for c in r}
    assert with_logs <= injected, with_logs - injected
    assert len(injected) >= 60
    pod_components = {c.component for c in CAUSES if CATALOG.get(c.component).kind == "pod"}
    assert pod_components <= set(OPERAND)


def _each_round() -> list[object]:
    """Every round; ``make check`` diagnoses one in three (by a checksum of its first cause's
    code), ``make test`` every one: a round is a simulated cluster built, logs of 10,000 lines
    written and read, and a diagnosis (0.15 s of CPU), 62 rounds."""
    return [pytest.param(r, id="+".join(c.code for c in r),
                         marks=[] if zlib.crc32(r[0].code.encode()) % 3 == 0 else [pytest.mark.slow])
            for r in ROUNDS]


@pytest.mark.parametrize("causes", _each_round())
def test_diagnose_names_each_injected_cause(causes: list[Cause], tmp_path: Path) -> None:
    nodes = _diagnose_round(causes, tmp_path)
    named = {(rc.component, rc.cause) for rc in nodes[NODE].root_causes}
    expected = {(c.component, c.code) for c in causes}
    assert expected <= named, f"missing {expected - named}; diagnose named {sorted(named)}"
    assert named <= expected, f"unexpected root causes {named - expected}"


CLUSTER_LOG_CAUSES = [
    c for c in KB.causes
    if c.component != "*" and CATALOG.get(c.component).scope == "cluster"
    and any(m.source == "log" for m in c.match)
]


def _operator_report(line: str, tmp_path: Path) -> list[tuple[str, str]]:
    """The cluster's root causes with ``line`` buried in the running operator's log."""
    world = build_world(_falcon())  # type: ignore[arg-type]
    key = next(k for k in world.pods if any(c.name == "gpu-operator" for c in world.containers(k)))
    world.set_log(key, "gpu-operator", "\n".join(bury_near_end(line, 10_000, 5)) + "\n")
    finalize(world)
    report = diagnose(load_bundle(write(world, tmp_path / "bundle")), read_node_observations, [NODE])
    return [(rc.component, rc.cause) for rc in report.cluster.root_causes]


@pytest.mark.parametrize("cause", CLUSTER_LOG_CAUSES, ids=lambda c: c.code)
def test_cluster_log_cause_in_a_running_operator_is_a_cluster_root(cause: Cause, tmp_path: Path) -> None:
    assert any(m.while_running for m in cause.match), "a running operator's log decides only while_running"
    assert _operator_report(cause.example, tmp_path / "example") == [(cause.component, cause.code)]
    assert _operator_report(cause.near_miss, tmp_path / "near") == []
