"""``collect_bundle``: read a live cluster once and save it as a bundle (format v1).

Order: probe ``/version`` (unreachable ends here, exit 3), discover API
groups, list each resource kind cluster-wide in pages, then fetch the
node-scoped extras the plan asks for, ``concurrency`` at a time (the commands a
node needs in one pod run as one batched exec). On a GPU node with a
running gpunode agent, the agent's facts are fetched and folded in first and
only the execs they do not make unnecessary follow. Permission errors and
exhausted retries become warnings in the manifest (``partial: true``);
nothing raises past here except an unreachable server or bad usage.

A list that cannot be read is left out of the bundle (never written empty) and
named in the manifest's ``missing`` with the reason, so the checks that need it
say ``unknown``. Without a cluster-wide pod list, pods are listed per namespace
of the GPU stack (then by each DaemonSet's selector); the manifest's ``scoped``
names the namespaces such a list covers.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import tarfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeAlias
from urllib.parse import parse_qsl

import msgspec
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from gpunode import __version__
from gpunode.agent.fold import (
    AGENT_NAMESPACE,
    AGENT_SELECTOR,
    HISTORY_FILE,
    agent_pods_by_node,
    facts_proxy_path,
    fold_agent_facts,
    history_proxy_path,
    node_dir_name,
)
from gpunode.agent.nodereport import REPORT_MAX_AGE_S
from gpunode.bounded import release_held
from gpunode.bundle import kube
from gpunode.bundle.load import gc_paused
from gpunode.bundle.projection import project_configmap, project_item
from gpunode.collect import batch
from gpunode.collect.access import ClusterAccess
from gpunode.collect.agents import (
    AGENT_FACTS_LIMIT_BYTES,
    AGENT_FACTS_MAX_AGE_S,
    agent_pods_on_page,
    folded_files,
    supplied,
)
from gpunode.collect.classify import component_of, workload_component
from gpunode.collect.kube import (
    ApiFailure,
    BodyCut,
    ExecOutput,
    KubeApi,
    ListCut,
)
from gpunode.collect.plan import (
    LOG_LIMIT_BYTES,
    LOG_TAIL_LINES,
    ExecTarget,
    LogTarget,
    ScrapeTarget,
    by_node,
    containerd_targets,
    exec_targets,
    exporter_log,
    gpu_nodes,
    link_nodes,
    log_targets,
    mofed_targets,
    nccl_log_targets,
    nccl_verbose,
    nfd_label_gaps,
    nfd_master_logs,
    plugin_config_maps,
    scrape_targets,
    short_nodes,
    stack_pods,
    state_failed_owners,
)
from gpunode.collect.reports import (
    LINKS_REASON,
    ExtrasPlan,
    ExtrasPolicy,
    ReportItem,
    decode_reports,
    plan_extras,
    reports_by_node,
)
from gpunode.collect.slim import (
    Node,
    NodePage,
    Pod,
    PodPage,
    PolicyPage,
    RawPage,
    Workload,
    WorkloadPage,
)
from gpunode.collect.writer import BundleWriter, ListFile, ensure_typemeta
from gpunode.deadline import out_of_time, run_deadline
from gpunode.diagnose import Reuse
from gpunode.errors import GpunodeError, SourceUnreachable, UsageError
from gpunode.leftout import PRODUCT_LABEL, left_out
from gpunode.model import LeftOutNode, Report
from gpunode.probe import ProbeResult
from gpunode.redact import redact_bytes, redact_item
from gpunode.safety import inside
from gpunode.selector import parse_selector, select_nodes
from gpunode.unread import VERDICT_LISTS

#: Calls in flight at once (lists, execs, proxy GETs, logs); ``--concurrency`` overrides.
CONCURRENCY = 32
PAGE_SIZE = 500
#: An exporter's scrape read at most this far (a DCGM scrape of 8 GPUs is about 100 KiB);
#: past it the reading stops, its whole lines are kept and the cut is a warning.
METRICS_LIMIT_BYTES = 8 * 1024 * 1024
#: A container log read at most this far: ``limitBytes`` asks the API server for
#: LOG_LIMIT_BYTES, and one that ignores it is cut here, its head kept and the cut a warning.
LOG_BODY_BYTES = 4 * LOG_LIMIT_BYTES

#: A unit of work for the pool; it may return follow-up jobs (an agent's facts
#: decide which execs on its node still run).
Job: TypeAlias = Callable[[], "list[Job] | None"]


@dataclass(frozen=True)
class ListKind:
    """One resource kind read cluster-wide into ``cluster/<plural>.json``."""

    plural: str
    group_version: str
    kind: str
    redact: Callable[[bytes], bytes] | None = None
    #: read only where the API serves it, first served version of the plural wins (DRA's
    #: resource.k8s.io: v1 from Kubernetes 1.34, v1beta2 1.33, v1beta1 1.32)
    if_served: bool = False

    @property
    def path(self) -> str:
        prefix = "/api" if "/" not in self.group_version else "/apis"
        return f"{prefix}/{self.group_version}/{self.plural}"

    @property
    def builtin(self) -> bool:
        group = self.group_version.rpartition("/")[0]
        return not self.if_served and ("." not in group or group.endswith(".k8s.io"))


def served_kinds(kinds: Iterable[ListKind], present: set[str]) -> list[ListKind]:
    """The kinds to list: built-in ones always (a refusal is recorded), the others where
    discovery shows their group version, one version per plural (the first listed)."""
    chosen: list[ListKind] = []
    plurals: set[str] = set()
    for kind in kinds:
        if (kind.builtin or kind.group_version in present) and kind.plural not in plurals:
            chosen.append(kind)
            plurals.add(kind.plural)
    return chosen


LIST_KINDS: tuple[ListKind, ...] = (
    ListKind("nodes", "v1", "Node"),
    ListKind("pods", "v1", "Pod"),
    ListKind("events", "v1", "Event"),
    ListKind("services", "v1", "Service"),
    ListKind("persistentvolumeclaims", "v1", "PersistentVolumeClaim"),
    ListKind("daemonsets", "apps/v1", "DaemonSet"),
    ListKind("deployments", "apps/v1", "Deployment"),
    ListKind("storageclasses", "storage.k8s.io/v1", "StorageClass"),
    ListKind("csidrivers", "storage.k8s.io/v1", "CSIDriver"),
    ListKind("csinodes", "storage.k8s.io/v1", "CSINode"),
    ListKind("runtimeclasses", "node.k8s.io/v1", "RuntimeClass"),
    ListKind("clusterpolicies", "nvidia.com/v1", "ClusterPolicy"),
    ListKind("nvidiadrivers", "nvidia.com/v1alpha1", "NVIDIADriver"),
    ListKind("nicclusterpolicies", "mellanox.com/v1alpha1", "NicClusterPolicy"),
    ListKind("servicemonitors", "monitoring.coreos.com/v1", "ServiceMonitor"),
    ListKind("gpunodereports", "gpunode.io/v1alpha1", "GPUNodeReport"),
    # Dynamic Resource Allocation: what the DRA driver published per node, and its ComputeDomains
    ListKind("resourceslices", "resource.k8s.io/v1", "ResourceSlice", if_served=True),
    ListKind("resourceslices", "resource.k8s.io/v1beta2", "ResourceSlice", if_served=True),
    ListKind("resourceslices", "resource.k8s.io/v1beta1", "ResourceSlice", if_served=True),
    ListKind("computedomains", "resource.nvidia.com/v1beta1", "ComputeDomain"),
    # the SR-IOV Network Operator's verdict on each SR-IOV node (its config daemon's last sync)
    ListKind("sriovnetworknodestates", "sriovnetwork.openshift.io/v1", "SriovNetworkNodeState"),
)
CONFIGMAPS = ListKind("configmaps", "v1", "ConfigMap")
#: The manifest's ``projected``: cluster objects hold only the fields gpunode reads
#: (bundle/projection.py, docs/bundle-format.md).
PROJECTED = "fields read by gpunode only (docs/bundle-format.md#projection)"
#: Where GPU-stack pods usually run, listed when pods cannot be listed cluster-wide
#: (besides the namespaces of the stack's own DaemonSets and Deployments).
STACK_NAMESPACES = ("gpu-operator", "nvidia-gpu-operator", "nvidia-network-operator",
                    "network-operator", "node-feature-discovery", "kube-system", AGENT_NAMESPACE)


@dataclass(frozen=True)
class CollectResult:
    """What ``collect_bundle`` wrote and how it went."""

    path: Path
    partial: bool
    warnings: tuple[str, ...]
    notes: tuple[str, ...]
    api_calls: int
    retries: int
    objects: dict[str, int]
    extras: int
    seconds: float
    agent_nodes: tuple[str, ...] = ()
    #: API calls by kind (``list``, ``get``, ``log``, ``proxy``, ``exec``), retries included.
    calls_by_kind: dict[str, int] = field(default_factory=dict)
    #: GPU nodes whose extras were fetched, and why (manifest ``extras_nodes``/``extras_reasons``).
    extras_reasons: dict[str, str] = field(default_factory=dict)
    #: GPU nodes whose facts came from their GPUNodeReport (manifest ``report_nodes``).
    report_nodes: tuple[str, ...] = ()
    #: Node reports judged from the lists, for nodes whose facts did not change after
    #: (no extras, no logs): ``build_report(path, reuse=...)`` need not judge them again.
    reuse: Reuse | None = None
    #: With a selector: the GPU nodes it left out, sick-looking first (manifest ``left_out``).
    left_out: tuple[LeftOutNode, ...] = ()


@dataclass
class _Run:
    """Mutable state of one collection, shared by its worker threads."""

    api: KubeApi
    writer: BundleWriter
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    objects: dict[str, int] = field(default_factory=dict)
    pods: list[Pod] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    agent_pods: list[kube.Pod] = field(default_factory=list)
    reports: list[ReportItem] = field(default_factory=list)
    plan: ExtrasPlan | None = None
    lists_report: Report | None = None
    changed: set[str] = field(default_factory=set)
    #: logs fetched anyway (a short DCGM scrape adds its exporter's log unless it is one)
    logs_planned: frozenset[LogTarget] = frozenset()
    selector: str | None = None
    #: with ``selector``: the nodes it left out, and the GPU nodes among them (gpunode.leftout)
    unselected: list[kube.Node] = field(default_factory=list)
    left_out: tuple[LeftOutNode, ...] = ()
    pods_listed: bool = False
    #: pod lists got no answer at all (the fallback gave up): no further pod list is tried
    pods_unanswered: bool = False
    agent_nodes: list[str] = field(default_factory=list)
    workloads: list[Workload] = field(default_factory=list)
    plugin_configs: list[str] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)
    redacted: list[str] = field(default_factory=list)
    scoped: dict[str, list[str]] = field(default_factory=dict)
    extras: int = 0
    concurrency: int = CONCURRENCY
    lock: threading.Lock = field(default_factory=threading.Lock)

    def lost(self, rel: str, reason: str) -> None:
        """Record that ``rel`` is not in the bundle, and why (the manifest's ``missing``)."""
        with self.lock:
            self.missing.setdefault(rel, reason)

    def saved(self, rel: str, data: bytes) -> None:
        """Write one extra into the bundle (secrets removed) and count it."""
        self.writer.write(rel, redact_bytes(data, rel, self.redacted))
        self.counted(1)

    def counted(self, files: int) -> None:
        with self.lock:
            self.extras += files

    def warn(self, message: str) -> None:
        with self.lock:
            if message not in self.warnings:
                self.warnings.append(message)


def collect_bundle(out: Path, *, kubeconfig: Path | None = None, context: str | None = None,
                   nodes: Sequence[str] = (), quiet: bool = False,
                   concurrency: int = CONCURRENCY, selector: str | None = None,
                   extras: ExtrasPolicy | str = ExtrasPolicy.SUSPECT,
                   request_timeout_s: float | None = None,
                   access: ClusterAccess | None = None) -> CollectResult:
    """Read the cluster the kubeconfig points at and write a bundle to ``out``.

    ``out`` ending in .tar.gz/.tgz gives a tarball, anything else a directory.
    Lists first, then node extras (execs, scrapes, agent facts) for the GPU nodes
    the lists and GPUNodeReports do not settle (``extras``: ``suspect``), for
    every chosen node (``deep``) or every GPU node (``all-nodes``); see
    ``gpunode.collect.reports``. ``nodes`` and ``selector`` choose the nodes (the
    selector goes to the API with the node list); named nodes always get extras.
    ``request_timeout_s`` bounds every request and exec (``--request-timeout``; see
    ``kube.Timeouts``): what does not answer in time is missing, with the reason.
    ``access``: the command's cluster, resolved once for every phase of the command
    (gpunode.collect.access); without it, the one ``kubeconfig``, ``context`` and
    ``request_timeout_s`` name. Raises SourceUnreachable (exit 3) or UsageError; every other problem is a
    warning in the result and in the bundle's manifest.
    """
    if concurrency < 1:
        raise UsageError(f"--concurrency must be at least 1, not {concurrency}")
    policy = ExtrasPolicy(extras)
    if policy is ExtrasPolicy.ALL_NODES and (nodes or selector):
        raise UsageError("--all-nodes fetches every GPU node's extras; for chosen nodes use --deep")
    if selector is not None:
        parse_selector(selector)  # a malformed selector is bad usage, before any call
    started = time.monotonic()
    api = (access or ClusterAccess(kubeconfig, context, request_timeout_s)).api()
    try:
        version = api.probe()
        writer = BundleWriter(out)
        run = _Run(api, writer, concurrency=concurrency, selector=selector)
        try:
            with _progress(quiet) as progress:
                nodes = _collect(run, version, nodes, policy, progress)
        except BaseException:
            writer.abort()
            raise
        return _finish(run, nodes, started)
    finally:
        api.close()


def _progress(quiet: bool) -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=Console(stderr=True), transient=True,
                    disable=quiet)


def _warm_types() -> None:
    """Build msgspec's type information for what worker threads decode, before they exist.

    Several threads decoding into a Struct type for the first time at once can crash
    CPython (msgspec 0.22: 16 threads on ``ProbeResult``, the agent facts, segfaulted
    in 20 of 30 runs; none once its decoder had been built first).
    """
    for struct in (RawPage, PodPage, NodePage, WorkloadPage, kube.Pod, ProbeResult):
        msgspec.json.Decoder(struct)
    component_of(Pod())  # loads the catalog once


def _collect(run: _Run, version: bytes, nodes: Sequence[str], policy: ExtrasPolicy,
             progress: Progress) -> Sequence[str]:
    """Every list, then the node extras the plan asks for; returns the nodes chosen."""
    _warm_types()
    run.writer.write("cluster/version.json", version)
    present = _served_group_versions(run)
    kinds = served_kinds(LIST_KINDS, present)
    with _worker_pool(run.concurrency) as pool:
        task = progress.add_task("listing resources", total=len(kinds))
        with gc_paused():  # bulk decoding; the extras phase makes cyclic garbage (sessions)
            _run_all(pool, [partial(_list_kind, run, k) for k in kinds], progress, task,
                     run.concurrency)
            if "cluster/pods.json" in run.missing:
                _pods_by_namespace(run)
        _in_time(run, "the node extras")
        _something_read(run)
        named = nodes
        nodes = _selected(run, nodes, run.selector)
        if run.selector is not None:
            run.left_out = _left_out(run)
        if not run.pods_listed and not run.pods_unanswered:
            _list_agent_pods(run)
        jobs = _extra_jobs(run, nodes, named, policy)
        task = progress.add_task("node extras", total=len(jobs))
        _run_all(pool, jobs, progress, task, run.concurrency)
    _in_time(run)
    return nodes


def _in_time(run: _Run, after: str = "") -> None:
    """The run's ``--timeout`` passed, or a call was given up on because it would pass (its
    retries would outlast it), and left something unread: RunTimedOut (exit 3), one line naming
    what was not read; the partial bundle is then removed like an interrupted one. A run that
    read everything before its deadline goes on."""
    deadline = run_deadline()
    if deadline is None:
        return
    with run.lock:
        lost = sorted((rel for rel, why in run.missing.items() if deadline.reason in why),
                      key=lambda rel: (rel not in VERDICT_LISTS, rel))  # what every verdict rests on first
        # a call the deadline cut that lost no file of its own (its checks unaffected) still says
        # the run did not read everything it set out to
        said = [line for line in (*run.warnings, *run.notes) if deadline.reason in line]
    if not lost and not said and (not after or not deadline.passed()):
        return
    named = _grouped(lost) or [line.split(": ", 1)[0] for line in said[:1]]
    shown = ", ".join(named[:6]) + (f" and {len(named) - 6} more" if len(named) > 6 else "")
    out_of_time(run.api.server, "; ".join(part for part in (shown, after) if part) + " (nothing written)")


def _grouped(paths: Sequence[str]) -> list[str]:
    """Bundle paths as one line names them: a node's files as its folder with their count."""
    counts: dict[str, int] = {}
    for rel in paths:
        parts = rel.split("/")
        key = f"nodes/{parts[1]}/" if parts[0] == "nodes" and len(parts) > 2 else rel
        counts[key] = counts.get(key, 0) + 1
    return [f"{key} ({n} files)" if key.endswith("/") and n > 1 else key for key, n in counts.items()]


@contextmanager
def _worker_pool(size: int) -> Iterator[ThreadPoolExecutor]:
    """The collection's threads. On Ctrl-C or an error the queued jobs are cancelled and
    the calls still running are not waited for (each ends at its own deadline, and the
    command exits first): an interrupted collection ends at once."""
    pool = ThreadPoolExecutor(size, thread_name_prefix="gpunode-collect")
    try:
        yield pool
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def _something_read(run: _Run) -> None:
    """Neither the node list nor any pod list could be read (an HTML login page, a redirect,
    a stall, errors to the last retry, refused): nothing can be judged, and an empty report
    would read as a healthy cluster. SourceUnreachable (exit 3), naming both and why."""
    nodes, pods = (run.missing.get(rel) for rel in VERDICT_LISTS)
    if not nodes or not pods:
        return
    said = f"{nodes}; {pods}"
    (head, _, why), (pods_head, _, pods_why) = nodes.partition(" ("), pods.partition(" (")
    same = re.sub(r"[\d.]+", "#", why) == re.sub(r"[\d.]+", "#", pods_why)  # but for counts and times
    if same and head.replace(" nodes ", " pods ", 1) == pods_head:  # one reason for both
        said = f"{head.replace(' nodes ', ' nodes or pods ', 1)} ({why}"
    raise SourceUnreachable(f"cannot read the cluster at {run.api.server}: {said}")


def _verdict_lists_first(warnings: list[str]) -> list[str]:
    """Warnings about the node and pod lists before the rest (what a reader must see first:
    every verdict rests on them), otherwise in the order they came."""
    def rank(warning: str) -> int:
        for i, plural in enumerate(("nodes", "pods")):
            if warning.startswith((f"cannot list {plural} ", f"listing {plural} ",
                                   f"{plural} were listed only")):
                return i
        return 2
    return sorted(warnings, key=rank)


def _selected(run: _Run, nodes: Sequence[str], selector: str | None) -> Sequence[str]:
    """The named nodes narrowed by ``--selector`` (the rule diagnose and stack apply).

    The API applied the selector to the node list already, so a named node missing
    from it either does not exist or does not match.
    """
    if selector is None:
        _unknown_nodes(run, nodes)
        return nodes
    labels = {n.metadata.name: n.metadata.labels for n in run.nodes}
    if not run.objects.get("nodes"):
        if "cluster/nodes.json" in run.missing:
            return nodes
        raise UsageError(f"cluster: no node matches --selector {selector!r}")
    listed = [n for n in nodes if n in labels]
    if nodes and not listed:
        raise UsageError(f"cluster: no node matches --selector {selector!r} among "
                         f"{', '.join(nodes)}")
    return select_nodes(labels, listed, selector, "cluster")


def _left_out(run: _Run) -> tuple[LeftOutNode, ...]:
    """The GPU nodes ``--selector`` left out, with what makes them look sick in the lists."""
    chosen = {n.metadata.name for n in run.nodes}
    return left_out(run.unselected, by_node(stack_pods(run.pods)), chosen,
                    gfd_in_use=any(PRODUCT_LABEL in n.metadata.labels for n in run.nodes))


def _run_all(pool: ThreadPoolExecutor, jobs: Iterable[Job], progress: Progress,
             task: TaskID, limit: int) -> None:
    """Run every job on the pool, at most ``limit`` in flight; follow-up jobs a job
    returns join the queue. Bounding what is submitted keeps each wait cheap (a
    wait scans every pending future) and memory flat on fleets of thousands of nodes."""
    queue = deque(jobs)
    total = len(queue)
    progress.update(task, total=total)
    pending: set[Future[list[Job] | None]] = set()
    while queue or pending:
        while queue and len(pending) < limit:
            pending.add(pool.submit(_releasing, queue.popleft()))
        done, pending = wait(pending, return_when=FIRST_COMPLETED)
        for future in done:
            follow = future.result() or []
            queue.extend(follow)
            total += len(follow)
        progress.update(task, total=total, advance=len(done))


def _releasing(job: Job) -> list[Job] | None:
    """``job``, then the pool shares of the outputs it read and held (bounded.Capped.held)."""
    try:
        return job()
    finally:
        release_held()


class _Groups(msgspec.Struct):
    groups: list[dict[str, Any]] = []


def _served_group_versions(run: _Run) -> set[str]:
    try:
        doc = msgspec.json.decode(run.api.get("/apis"), type=_Groups)
    except (ApiFailure, msgspec.DecodeError, msgspec.ValidationError) as exc:
        run.notes.append(f"API group discovery failed ({exc}); custom resources skipped")
        return set()
    return {v["groupVersion"] for g in doc.groups for v in g.get("versions", [])}


def _list_kind(run: _Run, kind: ListKind, namespace: str = "") -> None:
    """Stream every page of one kind into its bundle file; permission errors are warnings."""
    path = kind.path if not namespace else f"/api/v1/namespaces/{namespace}/{kind.plural}"
    rel = f"cluster/{kind.plural}.json"
    sink = run.writer.open_list(rel)
    slim: list[Any] = []
    agents: list[kube.Pod] = []
    failure: ApiFailure | None = None
    narrow = kind.plural == "nodes" and run.selector is not None
    left: list[kube.Node] = []  # with --selector: the nodes it leaves out (gpunode.leftout)
    try:
        for body, page in run.api.list_pages(path, {}, PAGE_SIZE):
            if not body:
                sink.reset()
                slim.clear()
                agents.clear()
                left.clear()
                continue
            items = ensure_typemeta([bytes(i) for i in page.items], kind.group_version, kind.kind)
            if narrow:
                items = _chosen_nodes(run, items, left)
            sink.add(redact_item(project_item(kind.plural, i), rel, run.redacted) for i in items)
            slim.extend(_slim_items(kind.plural, body) if not narrow else _slim_nodes(items))
            if kind.plural == "pods":
                agents.extend(agent_pods_on_page(body, page))
    except ApiFailure as exc:
        failure = exc
        _list_failed(run, kind, namespace, exc)
    else:
        if kind.plural == "pods" and not namespace:
            run.agent_pods, run.pods_listed = agents, True
        if narrow:
            run.unselected = left
    finally:
        sink.close()
    if failure is not None and failure.code != 404:  # 404: not served, truly none
        run.writer.remove(rel)
        run.lost(rel, _failure_reason(kind.plural, namespace, failure))
        return
    _keep_slim(run, kind.plural, slim, sink.count)


def _failure_reason(plural: str, namespace: str, exc: ApiFailure) -> str:
    where = f"in {namespace}" if namespace else "cluster-wide"
    code = f"{exc.code} " if exc.code else ""
    verb = "forbidden to list" if exc.code in (401, 403) else "could not list"
    return f"{verb} {plural} {where} ({code}{exc.message})"


def _chosen_nodes(run: _Run, items: list[bytes], left: list[kube.Node]) -> list[bytes]:
    """The nodes ``--selector`` matches. The node list is read whole (one list call, as
    cheap as the narrowed one: bench/live/selector.py) and narrowed here, so the GPU nodes
    the selector leaves out can be named in the manifest (a driver failure removes the very
    labels a selector is often written with); those are added to ``left``."""
    assert run.selector is not None
    matches = parse_selector(run.selector)
    kept = []
    for item in items:
        node = _NODE_DECODER.decode(item)
        if matches(node.metadata.labels):
            kept.append(item)
        else:
            left.append(node)
    return kept


def _slim_nodes(items: list[bytes]) -> list[Node]:
    return [_SLIM_NODE_DECODER.decode(i) for i in items]


_NODE_DECODER = msgspec.json.Decoder(kube.Node)
_SLIM_NODE_DECODER = msgspec.json.Decoder(Node)


def _slim_items(plural: str, body: bytes) -> list[Any]:
    """Slim objects the extras plan needs; of pods only the GPU stack's are kept."""
    if plural == "pods":
        return [p for p in msgspec.json.decode(body, type=PodPage).items
                if component_of(p) or nccl_verbose(p)]
    if plural == "nodes":
        return list(msgspec.json.decode(body, type=NodePage).items)
    if plural in ("daemonsets", "deployments"):
        return [w for w in msgspec.json.decode(body, type=WorkloadPage).items
                if workload_component(w)]
    if plural == "gpunodereports":
        return decode_reports(body)
    if plural == "clusterpolicies":
        return [p.plugin_config for p in msgspec.json.decode(body, type=PolicyPage).items
                if p.plugin_config]
    return []


def _keep_slim(run: _Run, plural: str, slim: list[Any], count: int) -> None:
    run.objects[plural] = run.objects.get(plural, 0) + count
    if plural == "pods":
        run.pods = slim
    elif plural == "nodes":
        run.nodes = slim
    elif plural in ("daemonsets", "deployments"):
        with run.lock:
            run.workloads.extend(slim)
    elif plural == "gpunodereports":
        run.reports = slim
    elif plural == "clusterpolicies":
        run.plugin_configs = slim


def _list_failed(run: _Run, kind: ListKind, namespace: str, exc: ApiFailure) -> None:
    where = f"in {namespace}" if namespace else "cluster-wide"
    if exc.code in (401, 403):
        run.warn(f"cannot list {kind.plural} {where} ({exc.message}): what needs "
                 f"{kind.plural} is unknown")
    elif exc.code == 404:
        run.notes.append(f"{kind.plural} not served by this cluster")
    elif isinstance(exc, ListCut):  # a bound of docs/limits.md: said before anything else
        with run.lock:
            run.warnings.insert(0, f"listing {kind.plural} {where} was cut ({exc.message}, "
                                   f"docs/limits.md): what needs {kind.plural} is unknown")
    else:
        run.warn(f"listing {kind.plural} {where} failed ({exc.message}): what needs "
                 f"{kind.plural} is unknown")


def _pods_by_namespace(run: _Run) -> None:
    """Pods of the GPU stack's namespaces, when they cannot be listed cluster-wide.

    A namespace whose list is refused too is read through its stack DaemonSets' and
    Deployments' selectors. The bundle's pod list then covers only the namespaces
    read (manifest ``scoped``); components elsewhere stay unknown. A list that gets no
    answer at all (timeouts, server errors to the last retry) ends the fallback: each
    further list would cost the same wait for nothing.
    """
    rel = "cluster/pods.json"
    namespaces = sorted({w.metadata.namespace for w in run.workloads} | set(STACK_NAMESPACES))
    sink = run.writer.open_list(rel)
    collected = _PodsRead()
    try:
        for namespace in namespaces:
            if collected.unanswered:
                run.notes.append(f"pods not listed in {namespace}: the API did not answer pod lists")
                continue
            if _list_pods_in(run, sink, collected, namespace, ""):
                collected.namespaces.append(namespace)
                continue
            selectors = [s for w in run.workloads if w.metadata.namespace == namespace
                         if (s := _selector(w))]
            answered = [not collected.unanswered and _list_pods_in(run, sink, collected, namespace, sel)
                        for sel in selectors]
            if answered and all(answered):
                collected.namespaces.append(namespace)
    finally:
        sink.close()
    run.pods_unanswered = collected.unanswered
    if not collected.namespaces:
        run.writer.remove(rel)
        return
    run.scoped[rel] = collected.namespaces
    run.pods = collected.slim
    if AGENT_NAMESPACE in collected.namespaces:
        run.agent_pods, run.pods_listed = collected.agents, True
    run.objects["pods"] = sink.count
    reason = run.missing.pop(rel, "")
    code = reason.partition("(")[2].split(" ", 1)[0]
    why = f"refused ({code})" if code in ("401", "403") else f"failed ({code or 'no answer'})"
    if code == "cut":  # a bound of docs/limits.md (kube.ListCut)
        why = f"was {reason.partition('(')[2].removesuffix(')')}"
    with run.lock:  # the fallback worked: say what it covers, not that pods are unknown
        run.warnings[:] = [w for w in run.warnings if not _cluster_wide_pods_warning(w)]
        run.warnings.insert(0, f"pods were listed only in {', '.join(collected.namespaces)} "
                               f"(listing them cluster-wide {why}): components whose pods run "
                               "elsewhere are unknown")


def _cluster_wide_pods_warning(warning: str) -> bool:
    return warning.startswith(("cannot list pods cluster-wide", "listing pods cluster-wide"))


@dataclass
class _PodsRead:
    namespaces: list[str] = field(default_factory=list)
    slim: list[Pod] = field(default_factory=list)
    agents: list[kube.Pod] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    #: a list got no answer (code 0): the rest of the fallback is skipped
    unanswered: bool = False


def _selector(workload: Workload) -> str:
    labels = workload.spec.selector.match_labels
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def _list_pods_in(run: _Run, sink: ListFile, read: _PodsRead, namespace: str,
                  selector: str) -> bool:
    """Add one namespace's pods (or one selector's) to the list; False when refused."""
    params = {"labelSelector": selector} if selector else {}
    try:
        for body, page in run.api.list_pages(f"/api/v1/namespaces/{namespace}/pods", params,
                                             PAGE_SIZE):
            if not body:
                continue
            pods = msgspec.json.decode(body, type=PodPage).items
            fresh = [(raw, pod) for raw, pod in zip(page.items, pods, strict=False)
                     if f"{namespace}/{pod.metadata.name}" not in read.seen]
            read.seen.update(f"{namespace}/{pod.metadata.name}" for _, pod in fresh)
            items = ensure_typemeta([bytes(raw) for raw, _ in fresh], "v1", "Pod")
            sink.add(redact_item(project_item("pods", i), "cluster/pods.json", run.redacted)
                     for i in items)
            read.slim.extend(pod for _, pod in fresh if component_of(pod) or nccl_verbose(pod))
            read.agents.extend(agent_pods_on_page(body, page))
    except ApiFailure as exc:
        where = f"{namespace} ({selector})" if selector else namespace
        run.notes.append(f"pods not listed in {where}: {exc.code} {exc.message}")
        read.unanswered = read.unanswered or exc.code == 0
        return False
    return True


def _unknown_nodes(run: _Run, nodes: Sequence[str]) -> None:
    known = {n.metadata.name for n in run.nodes}
    missing = [n for n in nodes if n not in known]
    if missing and run.objects.get("nodes"):
        raise UsageError(f"no such node(s) in the cluster: {', '.join(missing)}")


def _list_agent_pods(run: _Run) -> None:
    """Without a cluster-wide pod list, the agents' own namespace may still be readable."""
    path = f"/api/v1/namespaces/{AGENT_NAMESPACE}/pods"
    agents: list[kube.Pod] = []
    try:
        for body, page in run.api.list_pages(path, {"labelSelector": AGENT_SELECTOR}, PAGE_SIZE):
            if not body:
                agents.clear()
                continue
            agents.extend(agent_pods_on_page(body, page))
    except ApiFailure as exc:
        run.notes.append(f"gpunode agent pods not listed in {AGENT_NAMESPACE}: "
                         f"{exc.code} {exc.message}")
        return
    run.agent_pods = agents


def _extra_jobs(run: _Run, only: Sequence[str], named: Sequence[str],
                policy: ExtrasPolicy) -> list[Job]:
    """ConfigMaps, logs of troubled GPU-stack containers, and the extras of the nodes the
    plan picks (``gpunode.collect.reports``)."""
    stack = stack_pods(run.pods)
    table = by_node(stack)
    agents = agent_pods_by_node(run.agent_pods)
    candidates = [n for n in sorted({*gpu_nodes(run.nodes, table), *agents})
                  if not only or n in only]
    plan = run.plan = _plan(run, candidates, named, policy, agent_pods=bool(agents),
                            links=link_nodes(run.nodes, table))
    jobs: list[Job] = [partial(_configmaps, run, stack)]
    logs = log_targets(stack, only, short_nodes(run.nodes), state_failed_owners(run.nodes))
    nfd = [t for t in nfd_master_logs(stack, nfd_label_gaps(run.nodes, candidates)) if t not in logs]
    jobs += [partial(_fetch_log, run, t) for t in logs + nfd]
    run.logs_planned = frozenset(logs + nfd)
    # nfd-master's log is every GPU node's evidence: none keeps its verdict from the lists
    run.changed = {*plan.nodes, *(t.node for t in logs), *(candidates if nfd else ())}
    jobs += [partial(_fetch_log, run, t) for t in nccl_log_targets(run.pods, plan.nodes)]
    for node in plan.nodes:
        components = table.get(node, {})
        node_jobs = partial(_node_jobs, run, node, components)
        if node in agents:
            jobs.append(partial(_agent_facts, run, node, agents[node], node_jobs))
        else:
            jobs += node_jobs(frozenset())
        jobs += [partial(_scrape, run, t) for t in scrape_targets(node, components)]
    return jobs


def _lists_verdicts(root: Path, nodes: Sequence[str]) -> Report:
    """Diagnose ``nodes`` from what the bundle at ``root`` holds so far (lists, report facts)."""
    from gpunode.bundle.load import load_bundle, read_node_observations
    from gpunode.diagnose import diagnose

    return diagnose(load_bundle(root), read_node_observations, nodes)


def _plan(run: _Run, candidates: Sequence[str], named: Sequence[str], policy: ExtrasPolicy, *,
          agent_pods: bool, links: Mapping[str, str]) -> ExtrasPlan:
    """Fold fresh GPUNodeReports in, judge every candidate from the lists, pick the suspects."""
    reports = reports_by_node(run.reports, dt.datetime.now(dt.UTC))
    fresh = {n: reports[n].facts for n in candidates if n in reports and reports[n].fresh}
    if fresh:
        with run.writer.writing() as root:
            outcome = fold_agent_facts(root, fresh, max_age_s=REPORT_MAX_AGE_S)
        run.counted(len(outcome.folded))
        run.notes.extend(f"node {n}: GPUNodeReport facts not used: {why}"
                         for n, why in sorted(outcome.skipped.items()))
        reports = {n: r for n, r in reports.items() if n not in outcome.skipped}
    verdicts = {}
    if policy is ExtrasPolicy.SUSPECT and "cluster/pods.json" in run.missing:
        run.notes.append("pods were not listed: no node can be judged healthy from the lists; "
                         "every GPU node's extras are fetched")
        policy = ExtrasPolicy.DEEP
    if policy is ExtrasPolicy.SUSPECT and candidates:
        # What judging needs of the manifest (scoped lists, missing ones), and every node
        # as judged without extras: the reports of nodes that get none stay valid.
        folded = sorted(n for n in fresh if n in reports)
        run.plan = ExtrasPlan(ExtrasPolicy.SUSPECT, from_reports=folded)
        run.writer.write("manifest.json", _manifest_bytes(run, named))
        try:
            run.lists_report = _lists_verdicts(run.writer.root, candidates)
            verdicts = {n.name: n for n in run.lists_report.nodes}
        except GpunodeError as exc:  # cannot judge from the lists: visit every node instead
            run.notes.append(f"could not judge nodes from the lists ({exc}); every GPU node's "
                             "extras are fetched")
            policy = ExtrasPolicy.DEEP
    plan = plan_extras(candidates, policy=policy, named=set(named), reports=reports,
                       agents_deployed=bool(reports) or agent_pods, verdicts=verdicts, links=links)
    settled = len(candidates) - len(plan.reasons)
    if settled:
        run.notes.append(f"{settled} of {len(candidates)} GPU nodes judged from the cluster lists"
                         f"{' and their GPUNodeReports' if plan.from_reports else ''} without "
                         "node extras (--deep fetches them)")
    linked = [n for n, why in plan.reasons.items() if why.startswith(LINKS_REASON)]
    if linked:
        run.notes.append(f"{len(linked)} GPU node(s) healthy in the cluster lists read on the node for "
                         "their NVLink/InfiniBand links, which no list shows (a gpunode agent's "
                         "GPUNodeReport carries them)")
    if plan.stale:
        run.notes.append(f"{len(plan.stale)} GPUNodeReport(s) stale (facts older than "
                         f"{REPORT_MAX_AGE_S / 60:.0f} min): {', '.join(plan.stale[:10])}"
                         f"{' …' if len(plan.stale) > 10 else ''}")
    return plan


def _node_jobs(run: _Run, node: str, components: dict[str, list[Pod]],
               covered: frozenset[str]) -> list[Job]:
    """The execs on ``node`` whose answers are not already ``covered`` by an agent."""
    targets = exec_targets(node, components)
    if not targets and not covered and "cluster/pods.json" in run.missing:
        run.lost(f"nodes/{node}/cmd/nvidia-smi-q.xml", "no pod to run it in: the pod list was not read")
    wanted = [t for t in targets if not supplied(t, covered)]
    jobs: list[Job] = [partial(_run_execs, run, wanted)] if wanted else []
    # ibstat/ibv_devinfo only where no agent's probe facts already hold the ports
    mofed = [] if covered else mofed_targets(node, components)
    if mofed:
        jobs.append(partial(_run_execs, run, mofed))
    toolkit = containerd_targets(node, components)
    if toolkit and not all(supplied(t, covered) for t in toolkit):
        jobs.append(partial(_containerd, run, toolkit, covered))
    return jobs


_AGENT_IMPACT = "node facts were not taken from the gpunode agents; execs were used where allowed"


def _agent_facts(run: _Run, node: str, pod: str,
                 node_jobs: Callable[[frozenset[str]], list[Job]]) -> list[Job]:
    """Fold the agent's facts for ``node`` in, then return the execs still needed."""
    body = _fetch_agent_facts(run, pod)
    covered = _fold(run, node, body) if body is not None else frozenset()
    if covered:
        _agent_history(run, node, pod)
    return node_jobs(covered)


#: An agent's history file is at most 64 KiB; a larger answer is not one.
AGENT_HISTORY_LIMIT_BYTES = 1024 * 1024


def _agent_history(run: _Run, node: str, pod: str) -> None:
    """The agent's history of ``node`` beside its facts (what ``diagnose --since`` reads); an
    agent that keeps none (older, or ``--history-dir ''``) leaves a note and no file."""
    try:
        body = run.api.get(history_proxy_path(pod), retry_503=False, max_bytes=AGENT_HISTORY_LIMIT_BYTES)
    except BodyCut as cut:
        run.notes.append(f"agent history {AGENT_NAMESPACE}/{pod}: {cut.message}; not used")
        return
    except ApiFailure as exc:
        if exc.code != 404:  # 404: an agent that keeps none (older, or --history-dir '')
            run.notes.append(f"agent history {AGENT_NAMESPACE}/{pod}: not read ({exc})")
        return
    run.writer.write(f"nodes/{node_dir_name(node)}/{HISTORY_FILE}", body)


def _fetch_agent_facts(run: _Run, pod: str) -> bytes | None:
    path, _, query = facts_proxy_path(pod).partition("?")
    try:
        return run.api.get(path, dict(parse_qsl(query)), retry_503=False,
                           max_bytes=AGENT_FACTS_LIMIT_BYTES)
    except BodyCut as cut:
        run.notes.append(f"agent facts {AGENT_NAMESPACE}/{pod}: {cut.message}; not used")
    except ApiFailure as exc:
        if not _denied(run, exc, "reach gpunode agents (pods/proxy get)", AGENT_NAMESPACE,
                       _AGENT_IMPACT):
            _failed(run, exc, f"agent facts {AGENT_NAMESPACE}/{pod}", lost=False)
    return None


def _fold(run: _Run, node: str, body: bytes) -> frozenset[str]:
    """Write the agent's facts into the bundle; the node-relative paths it supplied."""
    with run.writer.writing() as root:
        outcome = fold_agent_facts(root, {node: body}, max_age_s=AGENT_FACTS_MAX_AGE_S)
    for warning in outcome.warnings():
        run.warn(warning)
    if node not in outcome.folded:
        return frozenset()
    covered = folded_files(run.writer.root, node)
    run.counted(len(covered))
    with run.lock:
        run.agent_nodes.append(node)
    return covered


def _configmaps(run: _Run, stack: Iterable[Any]) -> None:
    """ConfigMaps of the GPU-stack namespaces only, merged into one list file; the device
    plugin's config ConfigMaps (named by the ClusterPolicy or mounted by its pods) keep
    their device-plugin configs whatever their name."""
    stack = list(stack)
    namespaces = sorted({entry.pod.metadata.namespace for entry in stack})
    plugin = frozenset(plugin_config_maps(stack, run.plugin_configs))
    sink = run.writer.open_list("cluster/configmaps.json")
    try:
        for namespace in namespaces:
            path = f"/api/v1/namespaces/{namespace}/configmaps"
            try:
                for body, page in run.api.list_pages(path, {}, PAGE_SIZE):
                    if body:
                        items = ensure_typemeta([bytes(i) for i in page.items], "v1", "ConfigMap")
                        sink.add(redact_item(project_configmap(i, plugin), "cluster/configmaps.json",
                                             run.redacted) for i in items)
            except ApiFailure as exc:
                _list_failed(run, CONFIGMAPS, namespace, exc)
    finally:
        sink.close()
    run.objects["configmaps"] = sink.count


def _denied(run: _Run, exc: ApiFailure, permission: str, namespace: str, impact: str) -> bool:
    """Record a 401/403 as one warning per permission and namespace."""
    if exc.code not in (401, 403):
        return False
    run.warn(f"cannot {permission} in {namespace}: {impact}")
    return True


def _fetch_log(run: _Run, target: LogTarget) -> None:
    params: dict[str, Any] = {"container": target.container, "limitBytes": LOG_LIMIT_BYTES}
    if not target.head:
        params["tailLines"] = LOG_TAIL_LINES
    if target.previous:
        params["previous"] = "true"
    path = f"/api/v1/namespaces/{target.namespace}/pods/{target.pod}/log"
    try:
        text = run.api.get(path, params, max_bytes=LOG_BODY_BYTES)
    except BodyCut as cut:  # a server that ignores limitBytes: the head is the log asked for
        run.warn(f"log {target.namespace}/{target.pod}/{target.container}: {cut.message}")
        text = cut.head[:cut.head.rfind(b"\n") + 1]
    except ApiFailure as exc:
        run.lost(target.bundle_path, _call_reason("pods/log get", exc))
        if not _denied(run, exc, "read pod logs (pods/log get)", target.namespace,
                       "container logs were not collected"):
            _failed(run, exc, f"log {target.namespace}/{target.pod}/{target.container}",
                    lost=exc.code not in _NO_SUCH_THING)
        return
    run.saved(target.bundle_path, text)


def _call_reason(permission: str, exc: ApiFailure) -> str:
    if exc.code in (401, 403):
        return f"{permission} forbidden ({exc.code})"
    return f"{permission} failed ({exc.code or 'no answer'}: {exc.message[:200]})"


#: A log the API says does not exist: no previous container (400), the pod deleted
#: since it was listed (404). Nothing is lost; the pod's state says the rest.
_NO_SUCH_THING = (400, 404)


def _failed(run: _Run, exc: ApiFailure, what: str, *, lost: bool = True) -> None:
    """A call refused for another reason than permission: a warning when data the checks
    need is lost with it (they will say unknown), a note when nothing is (``lost=False``:
    execs stand in for agent facts; a log that does not exist; an exec into a container
    that is not running or a scrape of an exporter that does not answer, whose state the
    pod list and node already show)."""
    if lost or exc.code == 0:
        run.warn(f"{what}: {exc.code} {exc.message}" if exc.code else f"{what}: {exc.message}")
    else:
        run.notes.append(f"{what}: {exc.code} {exc.message}")


_EXEC_IMPACT = "nvidia-smi, dmesg and the containerd config were not read; diagnosis of " \
               "layer 1 will use pod status only"
_EXEC_IMPACT_AGENT = "nvidia-smi was not read on nodes whose gpunode agent supplied the " \
                     "other node facts"


def _exec_impact(run: _Run, node: str) -> str:
    with run.lock:
        return _EXEC_IMPACT_AGENT if node in run.agent_nodes else _EXEC_IMPACT


def _exec_call(run: _Run, target: ExecTarget, argv: list[str]) -> ExecOutput | None:
    """Run ``argv`` in the target's container; None when the API refused (warned or noted)."""
    try:
        result = run.api.exec(target.namespace, target.pod, target.container, argv, hold=True)
    except ApiFailure as exc:
        run.lost(target.bundle_path, _call_reason("pods/exec create", exc))
        if not _denied(run, exc, "exec into pods (pods/exec create)", target.namespace,
                       _exec_impact(run, target.node)):
            _failed(run, exc, f"exec {' '.join(argv[:1] if len(argv) > 2 else argv)} in "
                              f"{target.namespace}/{target.pod}", lost=exc.code != 400)
        return None
    if result.cut:  # the command's output was endless (a 300 MB dmesg line): named once
        run.warn(f"exec {argv[0]} in {target.namespace}/{target.pod}: {result.cut}; "
                 "what came after the cut was not read")
    return result


def _exec_many(run: _Run, targets: Sequence[ExecTarget]) -> list[ExecOutput | None]:
    """Every target's result from ONE exec of a framed ``sh`` script (same pod and container).

    Without a shell in the container (nothing framed comes back) each command runs
    in its own exec, as before batching. None marks a command without a result.
    """
    if len(targets) == 1:
        return [_exec_call(run, targets[0], list(targets[0].argv))]
    token = batch.new_token()
    argv = ["sh", "-c", batch.script([t.argv for t in targets], token)]
    result = _exec_call(run, targets[0], argv)
    if result is None:
        reason = run.missing.get(targets[0].bundle_path, "pods/exec failed")
        for target in targets[1:]:
            run.lost(target.bundle_path, reason)
        return [None] * len(targets)
    framed = batch.unframe(result.stdout, result.stderr, token, len(targets))
    if not any(framed):
        return [_exec_call(run, t, list(t.argv)) for t in targets]
    outputs: list[ExecOutput | None] = []
    for target, one in zip(targets, framed, strict=True):
        if one is None:
            run.notes.append(f"exec {' '.join(target.argv)} in {target.namespace}/{target.pod}: "
                             f"not reached (the batch exited {result.exit_code})")
        outputs.append(ExecOutput(one.stdout, one.stderr, one.exit_code) if one else None)
    return outputs


def _accepted(run: _Run, target: ExecTarget, result: ExecOutput | None) -> bytes | None:
    """stdout of the command when it is worth keeping, else None (failure noted)."""
    if result is None:
        return None
    if result.exit_code == 0 or (target.keep_failed_output and result.stdout):
        return result.stdout
    detail = result.stderr.decode(errors="replace").strip()[:200]
    run.notes.append(f"exec {' '.join(target.argv)} in {target.namespace}/{target.pod} exited "
                     f"{result.exit_code}: {detail}")
    return None


def _exec_output(run: _Run, target: ExecTarget) -> bytes | None:
    """stdout of one command run on its own, or None (failure noted or warned)."""
    return _accepted(run, target, _exec_call(run, target, list(target.argv)))


def _run_exec(run: _Run, target: ExecTarget) -> None:
    _store(run, target, _exec_output(run, target))


def _run_execs(run: _Run, targets: Sequence[ExecTarget]) -> None:
    """A node's commands in one pod, as one batched exec."""
    for target, result in zip(targets, _exec_many(run, targets), strict=True):
        _store(run, target, _accepted(run, target, result))


def _store(run: _Run, target: ExecTarget, output: bytes | None) -> None:
    if output is None:
        return
    if not target.unpack_tar:
        run.saved(target.bundle_path, output)
        return
    try:
        files = untar_flat(output)
    except tarfile.TarError as exc:
        run.notes.append(f"{' '.join(target.argv)} in {target.pod}: unreadable tar ({exc})")
        return
    for name, data in files.items():
        run.saved(f"{target.bundle_path}/{name}", data)


def untar_flat(data: bytes) -> dict[str, bytes]:
    """Regular files at the top of a tar stream, by plain name (nothing else is trusted)."""
    files: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
        for member in tar:
            name = member.name.removeprefix("./")
            if member.isfile() and name and "/" not in name and name not in (".", ".."):
                handle = tar.extractfile(member)
                files[name] = handle.read() if handle else b""
    return files


def _containerd(run: _Run, targets: list[ExecTarget],
                covered: frozenset[str] = frozenset()) -> None:
    """The main config, then the NVIDIA drop-in only if the config imports drop-ins.

    Either may already be in the bundle from the node's agent (``covered``). When
    neither is, both are read in one batched exec and the drop-in kept only if the
    config imports drop-ins.
    """
    main, *drop_in = targets
    if drop_in and not supplied(main, covered) and not supplied(drop_in[0], covered):
        config_result, drop_result = _exec_many(run, [main, drop_in[0]])
        config = _accepted(run, main, config_result)
        if config is None:
            return
        run.saved(main.bundle_path, config)
        if b"imports" in config:
            _store(run, drop_in[0], _accepted(run, drop_in[0], drop_result))
        return
    config = _containerd_config(run, main, covered)
    if config is None:
        return
    if b"imports" in config and drop_in and not supplied(drop_in[0], covered):
        _run_exec(run, drop_in[0])


def _containerd_config(run: _Run, target: ExecTarget, covered: frozenset[str]) -> bytes | None:
    if supplied(target, covered):
        return inside(run.writer.root, target.bundle_path).read_bytes()
    config = _exec_output(run, target)
    if config is not None:
        run.saved(target.bundle_path, config)
    return config


def _scrape(run: _Run, target: ScrapeTarget) -> None:
    path = f"/api/v1/namespaces/{target.namespace}/pods/{target.pod}:{target.port}/proxy/metrics"
    try:
        body = run.api.get(path, retry_503=False, max_bytes=METRICS_LIMIT_BYTES)
    except BodyCut as cut:  # an exporter streaming without end: its whole lines are kept
        run.warn(f"scrape {target.namespace}/{target.pod}:{target.port}: {cut.message}")
        body = cut.head[:cut.head.rfind(b"\n") + 1]
    except ApiFailure as exc:
        run.lost(target.bundle_path, _call_reason("pods/proxy get", exc))
        if not _denied(run, exc, "reach pod metrics (pods/proxy get)", target.namespace,
                       "exporter metrics were not scraped; metric-based checks will be unknown"):
            # 503: the exporter (or its node) does not answer; its pod and node say why
            _failed(run, exc, f"scrape {target.namespace}/{target.pod}:{target.port}",
                    lost=exc.code != 503)
        return
    run.saved(target.bundle_path, body)
    log = exporter_log(target, body)
    if log is not None and log not in run.logs_planned:  # a short scrape: the exporter's log says why
        _fetch_log(run, log)


def _manifest_bytes(run: _Run, nodes: Sequence[str]) -> bytes:
    partial = bool(run.warnings)
    plan = run.plan
    manifest = {
        "format": "gpunode-bundle/v1",
        "collected_at": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "source": "live", "cluster_name": run.api.cluster_name, "api_server": run.api.server,
        "partial": partial, "warnings": run.warnings, "notes": run.notes,
        "missing": [{"path": p, "reason": r} for p, r in sorted(run.missing.items())],
        "redacted": sorted(set(run.redacted)),
        "projected": PROJECTED,
        "scoped": [{"path": p, "namespaces": ns} for p, ns in sorted(run.scoped.items())],
        "collector": f"gpunode {__version__}", "nodes": list(nodes),
        "api_calls": run.api.stats.calls, "api_calls_by_kind": run.api.stats.kinds(),
        "agent_facts": sorted(run.agent_nodes),
    }
    if run.selector is not None:
        manifest["node_selector"] = run.selector
        manifest["left_out"] = [msgspec.to_builtins(n) for n in run.left_out]
    if plan is not None:
        manifest["extras_policy"] = str(plan.policy)
        manifest["extras_nodes"] = plan.nodes
        manifest["extras_reasons"] = dict(sorted(plan.reasons.items()))
        manifest["report_nodes"] = sorted(plan.from_reports)
    return msgspec.json.format(msgspec.json.encode(manifest))


def _finish(run: _Run, nodes: Sequence[str], started: float) -> CollectResult:
    run.warnings[:] = _verdict_lists_first(run.warnings)
    run.writer.write("manifest.json", _manifest_bytes(run, nodes))
    path = run.writer.finish()
    plan = run.plan
    reuse = Reuse.of(run.lists_report, run.changed) if run.lists_report else None
    return CollectResult(path, bool(run.warnings), tuple(run.warnings), tuple(run.notes),
                         run.api.stats.calls, run.api.stats.retries, dict(run.objects),
                         run.extras, time.monotonic() - started, tuple(sorted(run.agent_nodes)),
                         run.api.stats.kinds(), dict(plan.reasons) if plan else {},
                         tuple(sorted(plan.from_reports)) if plan else (), reuse, run.left_out)
