"""Run the active checks: create labelled test objects, wait, judge, and always clean up.

Clean-up runs at the end, on failure, on timeout and on Ctrl-C or SIGTERM
(try/finally, SIGTERM turned into KeyboardInterrupt, further interrupts ignored
while deleting). Objects of a run that was killed outright are found by label
and removed by the next run before it creates its own.
"""

from __future__ import annotations

import secrets
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import msgspec

from gpunode.bundle.load import read_node_observations
from gpunode.errors import SourceUnreachable
from gpunode.facts import ClusterFacts
from gpunode.model import Evidence
from gpunode.validate.active import manifests as m
from gpunode.validate.active.checks import CLEANUP, GPU_SMOKE, NCCL, PVC_WRITE
from gpunode.validate.active.judge import Observed, judge_gpu_smoke, judge_nccl, judge_pvc_write
from gpunode.validate.active.keys import ssh_keypair
from gpunode.validate.active.plan import Target, plan_targets
from gpunode.validate.active.rated import Rating, node_links, pair_rating

if TYPE_CHECKING:
    # the API client is imported only when active checks run: offline validate loads no HTTP client
    from gpunode.collect.access import ClusterAccess
    from gpunode.validate.active.cluster import ClusterApi

from gpunode.validate.defaults import (
    DEFAULT_IMAGE,
    DEFAULT_NCCL_FLOOR_GBPS,
    DEFAULT_NCCL_IMAGE,
    DEFAULT_TIMEOUT_S,
)
from gpunode.validate.registry import Validation, failed, passed, to_result, unknown, worst_of_nodes
from gpunode.validation import CheckResult, Outcome, Verdict

# Objects outlive the wait by this much, so the kubelet (not gpunode) ends them at worst.
DEADLINE_MARGIN_S = 60


@dataclass(frozen=True)
class ActiveOptions:
    """What to run, where, and how long to wait."""

    kubeconfig: Path | None = None
    context: str | None = None
    image: str = DEFAULT_IMAGE
    timeout_s: float = DEFAULT_TIMEOUT_S
    poll_s: float = 2.0
    gpu_smoke: bool = True
    pvc: bool = True
    pvc_size: str = "1Gi"
    nccl: bool = False
    nccl_image: str = DEFAULT_NCCL_IMAGE
    nccl_min_busbw: float = DEFAULT_NCCL_FLOOR_GBPS
    expect_gpus: int | None = None
    run_id: str | None = None
    #: ``--request-timeout``: one API request's bound (None: ClusterApi's default)
    request_timeout_s: float | None = None
    on_created: Callable[[str], None] | None = None  # test hook: called after each create


@dataclass
class _Run:
    """This run's ids, API handle and everything it created (in creation order)."""

    ids: m.RunIds
    api: ClusterApi
    options: ActiveOptions
    created: list[tuple[str, str]] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)

    def create(self, manifest: m.Json) -> bool:
        kind, name = manifest["kind"], manifest["metadata"]["name"]
        error = self.api.create(manifest)
        if error:
            self.errors[name] = error
            return False
        self.created.append((kind, name))
        if self.options.on_created is not None:
            self.options.on_created(name)
        return True


def run_active(
    facts: ClusterFacts, options: ActiveOptions, categories: Sequence[str] = (),
    access: ClusterAccess | None = None,
) -> list[CheckResult]:
    """Run the chosen active checks against the live cluster; results carry ``active=True``.
    ``access``: the command's cluster, when it was resolved already (a live validate's
    collection); None: the one ``options`` names."""
    from gpunode.deadline import cut_short, out_of_time, outside_run  # live only: an HTTP client

    chosen = _chosen(options, categories)
    ids = m.RunIds(options.run_id or secrets.token_hex(3), int(options.timeout_s) + DEADLINE_MARGIN_S, _now())
    from gpunode.validate.active.cluster import ClusterApi

    if access is None:
        from gpunode.collect.access import ClusterAccess

        access = ClusterAccess(options.kubeconfig, options.context, options.request_timeout_s)
    server = access.config().cluster.server
    if cut_short():  # --timeout passed in the collection: no test object is made after it
        out_of_time(server, "the active checks (no test object was created)")
    with ClusterApi(access) as api, _terminate_as_interrupt():
        try:
            removed, leftover_errors = _remove_leftovers(api)
        except SourceUnreachable:
            if cut_short():  # the deadline passed while earlier runs' leftovers were looked for
                out_of_time(server, "the active checks (no test object was created)")
            raise
        run = _Run(ids, api, options)
        try:
            outcomes = _exercise(run, facts, chosen)
        finally:
            with _interrupts_ignored(), outside_run():  # clean-up runs past --timeout too
                cleanup_errors = _cleanup(run)
                if cut_short():  # a create whose answer the deadline cut may have landed
                    cleanup_errors += _remove_leftovers(api)[1]
    outcomes[CLEANUP.id] = _cleanup_outcome(run, removed, [*leftover_errors, *cleanup_errors])
    _judged_in_time(server, chosen, outcomes)
    return [to_result(v, outcomes[v.id], active=True) for v in (*chosen, CLEANUP) if v.id in outcomes]


def _judged_in_time(server: str, chosen: Sequence[Validation], outcomes: dict[str, Outcome]) -> None:
    """A check left unknown once the run's ``--timeout`` passed (its objects could not be made
    or read in time) ends the run with exit 3 naming it, never a pass by omission; test pods
    that ran until the deadline failed as not finished and stand."""
    from gpunode.deadline import cut_short, out_of_time

    if not cut_short():
        return
    unread = [v.id for v in chosen if v.id in outcomes and outcomes[v.id].verdict == Verdict.UNKNOWN]
    if unread:
        out_of_time(server, f"the active checks {', '.join(unread)} (their test objects were deleted)")


def _chosen(options: ActiveOptions, categories: Sequence[str]) -> list[Validation]:
    wanted = [(GPU_SMOKE, options.gpu_smoke), (PVC_WRITE, options.pvc), (NCCL, options.nccl)]
    return [v for v, on in wanted if on and (not categories or v.category in categories)]


def _now() -> datetime:
    return datetime.now(UTC)


def _remove_leftovers(api: ClusterApi) -> tuple[list[str], list[str]]:
    """Delete every namespace (and our objects in it) left by an earlier, interrupted run."""
    removed, errors = [], []
    for namespace in api.leftover_namespaces():
        for kind, name in api.objects_in(namespace):
            if err := api.delete(kind, name, namespace):
                errors.append(err)
        err = api.delete("Namespace", namespace)
        (errors.append(err) if err else removed.append(namespace))
    return removed, errors


def _cleanup(run: _Run) -> list[str]:
    """Delete what this run created, newest first, the namespace last."""
    errors = []
    for kind, name in reversed(run.created):
        namespace = None if kind == "Namespace" else run.ids.namespace
        if err := run.api.delete(kind, name, namespace):
            errors.append(err)
    return errors


def _cleanup_outcome(run: _Run, removed: list[str], errors: list[str]) -> Outcome:
    evidence = [Evidence("leftover namespace", name) for name in removed]
    evidence += [
        Evidence(f"namespace {run.ids.namespace}", f"{len(run.created)} objects created and deleted")
    ]
    if errors:
        return failed(
            f"could not delete: {'; '.join(errors[:3])}", *evidence, *(Evidence("delete", e) for e in errors)
        )
    note = f"; removed leftovers of an interrupted run: {', '.join(removed)}" if removed else ""
    return passed(f"{len(run.created)} test objects deleted{note}", *evidence)


def _exercise(run: _Run, facts: ClusterFacts, chosen: Sequence[Validation]) -> dict[str, Outcome]:
    if not run.create(m.namespace(run.ids)):
        error = run.errors[run.ids.namespace]
        return {v.id: unknown(f"could not create namespace {run.ids.namespace}: {error}") for v in chosen}
    targets = plan_targets(facts, run.options.expect_gpus)
    ready = [t for t in targets if not t.skip_reason]
    ids = {v.id for v in chosen}
    pods: dict[str, m.Json] = {}
    if GPU_SMOKE.id in ids:
        pods.update(_start_smoke(run, ready))
    if PVC_WRITE.id in ids and ready:
        pods.update(_start_pvc(run, ready[0]))
    observed = _wait(run, pods, None)
    nccl = _NcclPlan(run, ready, facts) if NCCL.id in ids else None
    if nccl is not None:  # after the single-node pods: both want all GPUs of the same nodes
        observed.update(_wait(run, {}, nccl))
    return _judge(run, chosen, targets, observed, nccl)


def _start_smoke(run: _Run, targets: Sequence[Target]) -> dict[str, m.Json]:
    out = {}
    for target in targets:
        pod = m.gpu_smoke_pod(run.ids, target.placement, target.gpus, run.options.image)
        if run.create(pod):
            out[pod["metadata"]["name"]] = pod
    return out


def _start_pvc(run: _Run, target: Target) -> dict[str, m.Json]:
    claim = m.pvc(run.ids, run.options.pvc_size)
    if not run.create(claim):
        return {}
    pod = m.pvc_writer_pod(run.ids, target.placement, run.options.image, claim["metadata"]["name"])
    return {pod["metadata"]["name"]: pod} if run.create(pod) else {}


class _NcclPlan:
    """Disjoint pairs of ready GPU nodes (an odd last node sits out), all run at once: the
    worker (sshd) starts first; each launcher once its worker has a host address."""

    def __init__(self, run: _Run, targets: Sequence[Target], facts: ClusterFacts) -> None:
        self.run = run
        self.pairs = [(targets[i], targets[i + 1]) for i in range(0, len(targets) - 1, 2)]
        self.left_out = targets[-1].node if len(targets) % 2 and len(targets) > 1 else ""
        self.secret = ""
        self.launched: set[int] = set()
        self.facts = facts

    def workers(self) -> dict[str, int]:
        return {m.nccl_pod_name(i, "worker"): i for i in range(len(self.pairs))}

    def start(self) -> dict[str, m.Json]:
        if not self.pairs:
            return {}
        private, public = ssh_keypair()
        secret = m.ssh_secret(self.run.ids, private, public)
        if not self.run.create(secret):
            return {}
        self.secret = secret["metadata"]["name"]
        out = {}
        for i, (_, worker) in enumerate(self.pairs):
            pod = m.nccl_worker_pod(self.run.ids, _side(i, worker), self.run.options.nccl_image, self.secret)
            if self.run.create(pod):
                out[pod["metadata"]["name"]] = pod
        return out

    def waiting(self) -> bool:
        """Some worker still waits for its launcher (it was created and has no address yet)."""
        return bool(self.secret) and len(self.launched) < len(self.pairs)

    def maybe_launch(self, latest: dict[str, Observed]) -> dict[str, m.Json]:
        out: dict[str, m.Json] = {}
        for name, i in self.workers().items():
            worker = latest.get(name)
            if i in self.launched or worker is None or not worker.host_ip:
                continue
            self.launched.add(i)
            launcher, _ = self.pairs[i]
            pod = m.nccl_launcher_pod(self.run.ids, _side(i, launcher), self.run.options.nccl_image,
                                      self.secret, worker.host_ip)
            if self.run.create(pod):
                out[pod["metadata"]["name"]] = pod
        return out

    def ratings(self) -> list[Rating | None]:
        """Each pair's rated link speed from its nodes' collected files."""
        links = {t.node: node_links(read_node_observations(self.facts, t.node))
                 for pair in self.pairs for t in pair if t.node in self.facts.node_dirs}
        return [pair_rating(links[a.node], links[b.node]) if a.node in links and b.node in links else None
                for a, b in self.pairs]


def _side(pair: int, target: Target) -> m.NcclSide:
    return m.NcclSide(pair, target.placement, target.gpus, target.rdma)


def _wait(run: _Run, pods: dict[str, m.Json], nccl: _NcclPlan | None) -> dict[str, Observed]:
    """Poll until every test pod finished or the timeout passed; then read the logs. NCCL
    workers (sshd, never finishing by themselves) are watched until their launcher starts."""
    from gpunode.deadline import within_run

    watched: set[str] = set()
    if nccl is not None:
        watched = set(nccl.start())
    started = time.monotonic()
    latest: dict[str, Observed] = {}
    pending = set(pods)
    while True:
        waited = time.monotonic() - started
        for name in sorted(pending | watched):
            pod, host_ip, error = run.api.pod(run.ids.namespace, name)
            if error and name in latest and _run_over():  # cut by --timeout: the last look stands
                continue
            latest[name] = Observed(name, pod, error=error, waited_s=waited, host_ip=host_ip)
            if pod is not None and pod.status.phase in ("Succeeded", "Failed"):
                pending.discard(name)
                watched.discard(name)
        if nccl is not None:
            new = nccl.maybe_launch(latest)
            pods.update(new)
            pending.update(new)
            watched -= {w for w, i in nccl.workers().items() if i in nccl.launched}
        if (not pending and not watched) or waited >= run.options.timeout_s or _run_over():
            break
        time.sleep(within_run(run.options.poll_s))
    return {name: _with_log(run, obs) for name, obs in latest.items()}


def _with_log(run: _Run, obs: Observed) -> Observed:
    if obs.phase not in ("Succeeded", "Failed"):
        return obs
    return replace(obs, log=run.api.log(run.ids.namespace, obs.name))


def _judge(
    run: _Run,
    chosen: Sequence[Validation],
    targets: Sequence[Target],
    observed: dict[str, Observed],
    nccl: _NcclPlan | None,
) -> dict[str, Outcome]:
    out: dict[str, Outcome] = {}
    ids = {v.id for v in chosen}
    if GPU_SMOKE.id in ids:
        out[GPU_SMOKE.id] = _judge_smoke(run, targets, observed)
    if PVC_WRITE.id in ids:
        out[PVC_WRITE.id] = _judge_pvc(run, targets, observed)
    if nccl is not None:
        out[NCCL.id] = _judge_nccl(run, nccl, observed)
    return out


def _observed(run: _Run, observed: dict[str, Observed], name: str) -> Observed:
    return observed.get(name) or Observed(name, None, error=run.errors.get(name, "not created"))


def _judge_smoke(run: _Run, targets: Sequence[Target], observed: dict[str, Observed]) -> Outcome:
    per_node = []
    for target in targets:
        if target.skip_reason:
            per_node.append((target.node, unknown(f"not tested: {target.skip_reason}")))
            continue
        name = m.dns_name("gpu-smoke", target.node, limit=253)
        per_node.append((target.node, judge_gpu_smoke(_observed(run, observed, name), target.gpus)))
    if not per_node:
        return unknown("no GPU node to test")
    return worst_of_nodes(None, per_node)


def _judge_pvc(run: _Run, targets: Sequence[Target], observed: dict[str, Observed]) -> Outcome:
    if not any(not t.skip_reason for t in targets):
        return unknown("no schedulable GPU node to write from")
    claim = "gpunode-validate-pvc"
    if claim in run.errors:
        return failed(f"could not create the claim: {run.errors[claim]}")
    phase = run.api.claim_phase(run.ids.namespace, claim)
    return judge_pvc_write(phase, _observed(run, observed, "pvc-writer"), m.token(run.ids), claim)


def _judge_nccl(run: _Run, nccl: _NcclPlan, observed: dict[str, Observed]) -> Outcome:
    """Each pair's bus bandwidth against its links' rated speed (else the floor)."""
    if not nccl.pairs:
        return unknown("needs two schedulable GPU nodes")
    if nccl.pairs and not nccl.secret:
        error = run.errors.get("gpunode-validate-nccl-ssh", "not created")
        return unknown(f"could not create the run's SSH key secret: {error}")
    per_pair = []
    for i, ((a, b), rating) in enumerate(zip(nccl.pairs, nccl.ratings(), strict=True)):
        launcher = _observed(run, observed, m.nccl_pod_name(i, "launcher"))
        worker = _observed(run, observed, m.nccl_pod_name(i, "worker"))
        outcome = judge_nccl(launcher, run.options.nccl_min_busbw, rating, worker)
        per_pair.append((f"{a.node}+{b.node}", outcome))
    outcome = worst_of_nodes(None, per_pair)
    if nccl.left_out:
        outcome = msgspec.structs.replace(
            outcome, summary=f"{outcome.summary} ({nccl.left_out} not paired: odd node count)")
    return outcome


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM takes the same clean-up path as Ctrl-C."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _raise_interrupt(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextmanager
def _interrupts_ignored() -> Iterator[None]:
    """A second Ctrl-C must not abandon the clean-up half way."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _run_over() -> bool:
    """The whole run's ``--timeout`` passed: the pods still running fail as not finished."""
    from gpunode.deadline import run_deadline

    deadline = run_deadline()
    return deadline is not None and deadline.passed()
