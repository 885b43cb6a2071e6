"""Wedges: controllers that stopped moving, named with age, owner and the unwedging command.

A state that belongs to a transition (a driver upgrade step, a MIG change, a pod being
deleted, validation markers after a driver reload, GFD labels after the hardware changed)
is a finding only once it has been held longer than that transition normally takes
(``NORMAL``), or when the controller itself says it gave up (``upgrade-failed``, MIG state
``failed``, a node left paused for a MIG change that ended). Age comes only from what the
API or the node recorded: the upgrade controller's Node events ("Successfully updated node
state label to …"), the MIG manager's own log time, a pod's ``deletionTimestamp``, the
driver's load time, GFD's ``gfd.timestamp`` label. Where no such time exists and the events
kept reach back further than the normal time, the state is at least as old as the oldest
event ("over 2h"); otherwise its age is unknown and it is not a finding.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from functools import cached_property
from itertools import chain
from typing import NamedTuple

from gpunode.bundle.kube import Node, Pod
from gpunode.facts import ClusterFacts
from gpunode.fleet.model import Wedge
from gpunode.fleet.profile import MIG_CHANGING, MIG_STATE_LABEL, Observed
from gpunode.gpus import physical_gpus_labelled
from gpunode.relazy import lazy_compile

UPGRADE_STATE_LABEL = "nvidia.com/gpu-driver-upgrade-state"
GFD_TIMESTAMP_LABEL = "nvidia.com/gfd.timestamp"
PAUSED_FOR_MIG = "paused-for-mig-change"
DEPLOY_PREFIX = "nvidia.com/gpu.deploy."
_MINUTE = 60
#: How long each transition normally takes before it is a wedge (seconds).
NORMAL: dict[str, int] = {
    "cordon-required": 10 * _MINUTE,
    "wait-for-jobs-required": 60 * _MINUTE,
    "pod-deletion-required": 15 * _MINUTE,
    "drain-required": 30 * _MINUTE,
    "node-maintenance-required": 60 * _MINUTE,
    "post-maintenance-required": 30 * _MINUTE,
    "pod-restart-required": 30 * _MINUTE,  # a driver compiled on the node takes minutes
    "validation-required": 30 * _MINUTE,
    "uncordon-required": 10 * _MINUTE,
    "mig": 20 * _MINUTE,  # a MIG change with a GPU reset or reboot
    "terminating": 5 * _MINUTE,  # beyond the pod's own grace period
    "markers": 15 * _MINUTE,  # the validator rewrites its markers after a driver reload
    "labels": 10 * _MINUTE,  # GFD relabels every minute by default
}
#: upgrade-required waits its turn (maxParallelUpgrades); upgrade-done and "" are at rest.
_UPGRADE_AT_REST = frozenset({"", "upgrade-required", "upgrade-done"})
_STATE_EVENT = lazy_compile(r"node state label to (\S+)")


class Clock:
    """The collection's time and, read once when first asked, how far back the kept events
    reach (both Unix seconds)."""

    def __init__(self, facts: ClusterFacts) -> None:
        self.now = stamp(facts.manifest.collected_at)
        self._facts = facts

    @cached_property
    def events_from(self) -> float | None:
        stamps = [stamp(e.first_timestamp or e.event_time or e.last_timestamp)
                  for events in self._facts.events_by_object.values() for e in events]
        known = [s for s in stamps if s is not None]
        return min(known) if known else None

    def age(self, since: float | None, *, bounded: bool = False) -> tuple[int | None, bool]:
        """Seconds since ``since``; else, ``bounded``, the lower bound the kept events give
        (True: a bound)."""
        if self.now is None:
            return None, False
        if since is not None:
            return max(0, int(self.now - since)), False
        if bounded and self.events_from is not None:
            return max(0, int(self.now - self.events_from)), True
        return None, False


def find(facts: ClusterFacts, nodes: Sequence[str], observed: Mapping[str, Observed],
         failing: Collection[str] = (), labelled: Mapping[str, int | None] | None = None) -> list[Wedge]:
    """Every wedge on the reported nodes, node by node; ``failing`` nodes have a root cause
    that explains labels no longer matching their GPUs (a GPU lost is not a stale label).
    ``labelled``: each node's ``physical_gpus_labelled``, where the caller has read it."""
    clock = Clock(facts)
    deleting = _deleting(facts)
    out: list[Wedge] = []
    for name in nodes:
        node = facts.nodes.get(name)
        if node is None:
            continue
        seen = observed.get(name)
        out.extend(_upgrade(facts, node, clock))
        out.extend(_mig(facts, node, seen, clock))
        out.extend(_terminating(deleting.get(name, ()), name, clock))
        if seen is not None:
            out.extend(_markers(facts, name, seen, clock))
            if name not in failing:
                count = labelled[name] if labelled is not None and name in labelled else \
                    physical_gpus_labelled(node.metadata.labels)
                out.extend(_labels(facts, node, seen, clock, count))
    return out


# --- driver upgrade (k8s-operator-libs' state label) ----------------------------------


def _upgrade(facts: ClusterFacts, node: Node, clock: Clock) -> Iterator[Wedge]:
    name = node.metadata.name
    state = node.metadata.labels.get(UPGRADE_STATE_LABEL, "")
    if state in _UPGRADE_AT_REST:
        return
    since = _state_event(facts, name, state)
    age, bound = clock.age(stamp(since), bounded=True)
    owner = "GPU Operator (driver upgrade controller)"
    ns = _namespace(facts, name)
    relabel = f"kubectl label node {name} {UPGRADE_STATE_LABEL}=upgrade-required --overwrite"
    look = f"kubectl get events --field-selector involvedObject.kind=Node,involvedObject.name={name}"
    if state == "upgrade-failed":
        operator_log = f"kubectl -n {ns} logs deploy/gpu-operator --tail=200 | grep {name}"
        yield _wedge("driver_upgrade_failed", name, f"node/{name}", state, When(since, age, bound),
                     owner=owner,
                     text=f"the driver upgrade failed on {name} and stays failed until relabelled",
                     unwedge=(operator_log, look, relabel))
        return
    normal = NORMAL.get(state)
    if normal is None or age is None or age <= normal:
        return  # a step in progress (or one this version does not know)
    steps = [look]
    if state in {"drain-required", "pod-deletion-required", "wait-for-jobs-required"}:
        steps.insert(0, f"kubectl get pods -A --field-selector spec.nodeName={name} -o wide")
    steps.append(relabel)
    yield _wedge("driver_upgrade_stuck", name, f"node/{name}", state, When(since, age, bound), owner=owner,
                 text=f"the driver upgrade has held {name} in {state} for {_words(age, bound)}",
                 unwedge=tuple(steps))


def _state_event(facts: ClusterFacts, node: str, state: str) -> str | None:
    """When the upgrade controller last set this state (its Node event), if kept."""
    found: str | None = None
    for event in facts.events_for("Node", "", node):
        match = _STATE_EVENT.search(event.message)
        if match is None or match.group(1) != state:
            continue
        when = event.last_timestamp or event.event_time or event.first_timestamp
        if when and (found is None or when > found):
            found = when
    return found


# --- MIG manager ------------------------------------------------------------------------


def _mig(facts: ClusterFacts, node: Node, seen: Observed | None, clock: Clock) -> Iterator[Wedge]:
    name = node.metadata.name
    labels = node.metadata.labels
    state = labels.get(MIG_STATE_LABEL)
    if state != "failed" and state not in MIG_CHANGING and PAUSED_FOR_MIG not in labels.values():
        return  # (most nodes: no MIG change, none failed, no operand paused for one)
    ns = _namespace(facts, name)
    pod = _pod_name(facts, name, "mig-manager")
    logs = f"kubectl -n {ns} logs {pod} -c nvidia-mig-manager --tail=50" if pod else \
        f"kubectl -n {ns} get pods -l app=nvidia-mig-manager -o wide"
    owner = "MIG manager"
    config = labels.get("nvidia.com/mig.config", "")
    if state == "failed":
        relabel = f"kubectl label node {name} nvidia.com/mig.config=<a config the GPUs accept> --overwrite"
        yield _wedge("mig_config_failed", name, f"node/{name}", state, When(), owner=owner,
                     text=f"the MIG manager failed to apply {config or 'the MIG config'} on {name}",
                     unwedge=(logs, relabel))
    elif state in MIG_CHANGING:
        since = seen.mig_since if seen else None
        age, bound = clock.age(stamp(since))
        if since is not None and age is not None and age > NORMAL["mig"]:
            restart = f"kubectl -n {ns} delete pod {pod}" if pod else logs
            yield _wedge("mig_config_stuck", name, f"node/{name}", state, When(since, age, bound),
                         owner=owner,
                         text=f"the MIG change to {config or 'a new config'} on {name} has been {state} for "
                         f"{_words(age, bound)}", unwedge=(logs, restart))
    paused = sorted(k for k, v in labels.items() if k.startswith(DEPLOY_PREFIX) and v == PAUSED_FOR_MIG)
    if paused and state not in MIG_CHANGING:
        relabel = f"kubectl label node {name} " + " ".join(f"{k}=true" for k in paused) + " --overwrite"
        held = f"{state or 'no MIG state'}, {len(paused)} operands {PAUSED_FOR_MIG}"
        yield _wedge("paused_for_mig_change", name, f"node/{name}", held, When(), owner=owner,
                     text=f"{', '.join(k.removeprefix(DEPLOY_PREFIX) for k in paused)} left paused on {name} "
                     f"after the MIG change ended ({state or 'no state'})", unwedge=(logs, relabel))


# --- pods stuck Terminating ---------------------------------------------------------------


def _deleting(facts: ClusterFacts) -> dict[str, list[Pod]]:
    """The stack's pods and GPU workloads being deleted, by node (one pass over them all)."""
    out: dict[str, list[Pod]] = {}
    stack = (sp.pod for by_component in facts.pods_by_node.values()
             for sps in by_component.values() for sp in sps)
    for pod in chain(stack, facts.workload_pods):
        if pod.metadata.deletion_timestamp:
            out.setdefault(pod.spec.target_node, []).append(pod)
    return out


def _terminating(pods: Sequence[Pod], node: str, clock: Clock) -> Iterator[Wedge]:
    for pod in pods:
        deleted = pod.metadata.deletion_timestamp or ""
        age, _ = clock.age(stamp(deleted))
        grace = pod.metadata.deletion_grace_period_seconds or 0
        if age is None or age <= grace + NORMAL["terminating"]:
            continue
        yield _stuck_pod(pod, node, deleted, age)


def _stuck_pod(pod: Pod, node: str, deleted: str, age: int) -> Wedge:
    ns, name = pod.metadata.namespace, pod.metadata.name
    return _wedge(
        "pod_stuck_terminating", node, f"pod/{ns}/{name}", "Terminating", When(deleted, age),
        owner=f"kubelet on {node}",
        text=f"pod {ns}/{name} has been Terminating for {_words(age, False)} (deleted {deleted})",
        unwedge=(f"kubectl -n {ns} get pod {name} -o jsonpath='{{.metadata.finalizers}}'",
         f"kubectl get node {node} -o wide",
         f"kubectl -n {ns} delete pod {name} --grace-period=0 --force"))


# --- what the node files say: markers, labels -------------------------------------------


def _markers(facts: ClusterFacts, node: str, seen: Observed, clock: Clock) -> Iterator[Wedge]:
    if not seen.stale_markers:
        return
    age, _ = clock.age(seen.driver_loaded_at)
    if age is not None and age <= NORMAL["markers"]:
        return
    ns = _namespace(facts, node)
    pod = _pod_name(facts, node, "validator")
    restart = f"kubectl -n {ns} delete pod {pod}" if pod else \
        f"kubectl -n {ns} delete pod -l app=nvidia-operator-validator --field-selector spec.nodeName={node}"
    since = _iso(seen.driver_loaded_at)
    markers = ", ".join(seen.stale_markers)
    yield _wedge("validation_marker_stale", node, f"node/{node}", markers, When(since, age),
                 owner="GPU Operator validator",
                 text=f"validation markers {markers} on {node} predate the driver loaded "
                 f"{_words(age, False)} ago",
                 unwedge=(f"ssh {node} ls -l --time-style=full-iso /run/nvidia/validations", restart))


def _labels(facts: ClusterFacts, node: Node, seen: Observed, clock: Clock,
            count: int | None) -> Iterator[Wedge]:
    """GFD's labels describing GPUs the node no longer has (NVML says otherwise); ``count``:
    ``physical_gpus_labelled`` of its labels (None where gpu.count counts MIG devices)."""
    labels = node.metadata.labels
    name = node.metadata.name
    differs: list[str] = []
    if count is not None and seen.nvml_gpus is not None and count != seen.nvml_gpus:
        differs.append(f"gpu.count={count}, NVML sees {seen.nvml_gpus}")
    product = labels.get("nvidia.com/gpu.product")
    if product and seen.product and " / " not in seen.product and not _same_product(product, seen.product):
        differs.append(f"gpu.product={product}, NVML sees {seen.product}")
    if not differs:
        return
    written = labels.get(GFD_TIMESTAMP_LABEL, "")
    since = float(written) if written.isdigit() else None
    age, _ = clock.age(since)
    if age is None or age <= NORMAL["labels"]:
        return
    ns = _namespace(facts, name)
    pod = _pod_name(facts, name, "gfd")
    restart = f"kubectl -n {ns} delete pod {pod}" if pod else \
        f"kubectl -n {ns} get pods -l app=gpu-feature-discovery -o wide"
    yield _wedge("labels_stale", name, f"node/{name}", "; ".join(differs), When(_iso(since), age),
                 owner="GPU Feature Discovery",
                 text=f"GFD last labelled {name} {_words(age, False)} ago and its labels no longer match its "
                 f"GPUs ({'; '.join(differs)})",
                 unwedge=(f"kubectl get node {name} -L nvidia.com/gpu.count,nvidia.com/gpu.product", restart))


def _same_product(label: str, nvml: str) -> bool:
    """GFD writes NVML's name with dashes for spaces (and a MIG or SHARED suffix)."""
    return label.startswith(nvml.replace(" ", "-"))


# --- helpers --------------------------------------------------------------------------------


class When(NamedTuple):
    """When a state began (where recorded), its age in seconds, and whether that age is
    only a lower bound."""

    since: str | None = None
    age: int | None = None
    bound: bool = False


def _wedge(kind: str, node: str, obj: str, state: str, when: When, *, owner: str, text: str,
           unwedge: tuple[str, ...]) -> Wedge:
    return Wedge(kind=kind, node=node, object=obj, state=state, since=when.since,
                 age=_words(when.age, when.bound) if when.age is not None else "", age_seconds=when.age,
                 owner=owner, text=text, unwedge=unwedge)


def _namespace(facts: ClusterFacts, node: str) -> str:
    for sps in facts.pods_by_node.get(node, {}).values():
        for sp in sps:
            if sp.pod.metadata.namespace:
                return sp.pod.metadata.namespace
    return "gpu-operator"


def _pod_name(facts: ClusterFacts, node: str, component: str) -> str | None:
    pods = facts.pods_by_node.get(node, {}).get(component, ())
    return pods[0].pod.metadata.name if pods else None


def stamp(value: str | None) -> float | None:
    """RFC 3339 (the API's times) as Unix seconds; None when absent or not a time."""
    if not value:
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


def _iso(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _words(age: int | None, bound: bool) -> str:
    """3d 4h, 2h 5m, 45m, 30s; "over …" for a lower bound."""
    if age is None:
        return "an unknown time"
    days, rest = divmod(age, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    if days:
        text = f"{days}d {hours}h" if hours else f"{days}d"
    elif hours:
        text = f"{hours}h {minutes}m" if minutes else f"{hours}h"
    elif minutes:
        text = f"{minutes}m"
    else:
        text = f"{seconds}s"
    return f"over {text}" if bound else text
