"""Bottom-up diagnosis: component statuses → root causes → blocked components.

A root cause is a failed or degraded component none of whose (transitive)
dependencies is failed or degraded; every problem above it is ``blocked_by``
it. Cluster-wide causes are judged once and blocked node components that an
operator should have deployed point at the operator.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, partial
from itertools import chain, compress, repeat
from operator import attrgetter, call, itemgetter, methodcaller
from typing import Any

import msgspec

from gpunode import limits, nodepool
from gpunode.bundle.kube import Pod
from gpunode.bundle.load import gc_paused
from gpunode.catalog import Catalog, topological_order
from gpunode.checks import base
from gpunode.checks.base import EXPLAINS, node_plan
from gpunode.checks.cluster import CLUSTER_REGISTRY, cluster_components
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import JOURNAL_FILES, cluster_own_words, own_words, voiced, workload_findings
from gpunode.checks.facts_fit import fit_to_facts, refitted_causes
from gpunode.checks.journal_names import journal_findings, silent_state_findings
from gpunode.checks.pod_env import not_asked_for
from gpunode.checks.pods import display_state, plainly_running, ready_ratio
from gpunode.checks.signatures import (
    cluster_event_findings,
    cluster_log_findings,
    scanning,
    signature_findings,
    traced_findings,
)
from gpunode.checks.state_labels import state_label_findings
from gpunode.checks.versions import HOST_VERSIONS, component_version, image_tag
from gpunode.checks.waiting import problems_by_component, waiting_findings
from gpunode.checks.workload_logs import cdi_by_default, workload_log_findings
from gpunode.daemonsets import daemonset_table
from gpunode.decisive import message_of, shown
from gpunode.doubt import cluster_doubts, doubts_of, settle
from gpunode.errors import GpunodeError
from gpunode.facts import ClusterFacts, NodeObservations, StackPod
from gpunode.fleet.analysis import analyse
from gpunode.fleet.profile import Observed, observe
from gpunode.gpucount import READ_STATUSES, usable_gpus
from gpunode.gpucount import count as gpu_count
from gpunode.kb import KnowledgeBase, load_kb, render_steps
from gpunode.lazy import cached_property
from gpunode.model import (
    PROBLEMS,
    STATUS_RANK,
    ClusterReport,
    ComponentReport,
    DecisiveLine,
    Evidence,
    Finding,
    Group,
    MissingInput,
    NodeReport,
    NotGpuNode,
    PodRef,
    Report,
    RootCause,
    SourceInfo,
    Status,
)
from gpunode.since import failing_since
from gpunode.unseen import missing_data, named_needs, unknown_summary
from gpunode.workloads import workload_issues

_MISSING_CAUSES = {"pod_missing", "component_missing", "selector_label_missing", "taint_not_tolerated"}
#: Node causes that say a component is not on the node at all: what a cluster component's
#: line that names it as lacking is explained by (``_lacks_from_nodes``).
_ABSENT = frozenset({"nfd_not_deployed", "pod_missing", "component_missing"})
MAX_EVIDENCE = 6
#: A component's status without problems: the first of these among its findings.
_NO_PROBLEM_ORDER = (Status.OK, Status.UNKNOWN, Status.NOT_DEPLOYED)
#: Statuses of a component that something below it may explain (``blocked_by``).
_BLOCKABLE = frozenset({Status.FAILED, Status.DEGRADED, Status.UNKNOWN})
#: Statuses of a component with nothing to explain, blocked by nothing (``_quiet_component``).
_QUIET = frozenset({Status.OK, Status.NOT_DEPLOYED})
#: ``Diagnoser._quiet_reports`` kept at most (summaries that name a node would grow it).
_QUIET_REPORTS_MAX = 4096


@dataclass
class Judgement:
    """Everything found about one component, and the status it adds up to."""

    component: str
    findings: list[Finding]
    unobserved: list[str] = field(default_factory=list)
    #: Why the unobserved node files are absent, when that was a choice (list-first collection).
    why_unobserved: str = ""

    @cached_property
    def problems(self) -> list[Finding]:
        """Problems, most specific first; non-standalone signatures only refine."""
        found = [f for f in self.findings if f.status in PROBLEMS]
        if not found:  # most components of most nodes
            return found
        state = [f for f in found if "signature" not in f.context]
        signatures = [f for f in found if "signature" in f.context and (state or "standalone" in f.context)]
        return sorted([*signatures, *state], key=lambda f: (-f.specificity, STATUS_RANK[f.status]))

    @cached_property
    def status(self) -> Status:
        """A problem wins; then positive evidence; then unknown; absent is last."""
        findings = self.findings
        if len(findings) == 1 and findings[0].status not in PROBLEMS:  # most components
            return findings[0].status
        present = set(map(_STATUS_OF, findings))
        if not present.isdisjoint(PROBLEMS) and (problems := self.problems):
            return min((f.status for f in problems), key=STATUS_RANK.__getitem__)
        for status in _NO_PROBLEM_ORDER:
            if status in present:
                return status
        return Status.UNKNOWN

    @property
    def primary(self) -> Finding | None:
        if self.status not in PROBLEMS:  # most components: then no problem stands
            return None
        return self.problems[0] if self.problems else None


def judge_node(ctx: NodeContext, catalog: Catalog) -> dict[str, Judgement]:
    """Run every check and signature scan for every node-scoped component."""
    out: dict[str, Judgement] = {}
    plan = node_plan(catalog)
    lacking, ordered, unread = plan.lacking(ctx)  # what this node lacks (read once per set of files)
    named: list[Finding] = []
    speaking, refit, scanned = voiced(ctx), refitted_causes(ctx.kb), scanning(ctx, plan.ids)
    for cid, check_fns, unobserved in plan.runs(lacking, plan.shut(ctx, unread), ordered):
        findings: list[Finding] = []
        out[cid] = Judgement(cid, findings, list(unobserved))
        # each check in turn, its generator run out before the next is called (no Python loop)
        findings.extend(chain.from_iterable(map(call, check_fns, repeat(ctx), repeat(cid))))
        if cid in scanned:  # (most components of most nodes: no scan of theirs may find anything)
            findings.extend(signature_findings(ctx, cid))
        if cid not in speaking and _settled(findings, refit):
            continue  # (most components of a node: nothing to refit, no words of its own to read)
        refitted = fit_to_facts(ctx, findings)  # a cause read from words that the node's record contradicts
        said = len(findings)
        named.extend(own_words(ctx, cid, findings))  # (it only adds to findings)
        if refitted or len(findings) != said:
            fit_to_facts(ctx, findings)  # (the decisive line named as one)
    named.extend(_named_elsewhere(ctx))
    _add_named(ctx, out, named)
    _sandboxes_explain(ctx.kb, out)
    found = dict(zip(out, map(_FINDINGS_OF, out.values()), strict=True))  # (the lists, appended to in place)
    problems = problems_by_component(found)
    if problems:  # (on most nodes nothing fails: no state is silent, and no journal is read)
        for finding in list(silent_state_findings(ctx, found)):
            out[finding.component].findings.append(finding)  # a crash that said nothing: the host's journal
        problems = problems_by_component(found)
    if problems or not speaking.isdisjoint(ctx.components_here):  # (else no pod here has a log)
        for finding in waiting_findings(ctx, problems):  # a running dependency that only waits
            out[finding.component].findings.append(finding)
    for finding in state_label_findings(ctx, set(problems)):
        out[finding.component].findings.append(finding)  # its own label says its last run failed
    settle(out, doubts_of(ctx))  # skipped items, unknown probe values: unknown, not a verdict
    _explain_unobserved(ctx, out)
    return _trace_down(ctx, out)


def _named_elsewhere(ctx: NodeContext) -> Iterator[Finding]:
    """What the node's GPU workloads' errors and logs name, unless the pod's own NVIDIA env
    explains it, then the kubelet's or runtime's journal error naming another layer; each
    reading only on a node with such a workload or journal (few nodes have one)."""
    facts = ctx.facts
    if facts.troubled_workloads_by_node.get(ctx.name):
        yield from not_asked_for(ctx, workload_findings(ctx), cdi_by_default)
    if facts.logged_workloads_by_node.get(ctx.name):
        yield from not_asked_for(ctx, workload_log_findings(ctx), cdi_by_default)
    if not JOURNAL_FILES.isdisjoint(ctx.obs.cmd):
        yield from journal_findings(ctx)


def _add_named(ctx: NodeContext, judged: Mapping[str, Judgement], named: Iterable[Finding]) -> None:
    """Findings read in one component's words that name another layer, added to that one's."""
    for finding in map(partial(_to_replacer, ctx), named):  # the layer a line names
        target = judged.get(finding.component)  # (its judgement exists by now)
        if target is not None and _used_here(ctx, finding.component):
            target.findings.append(finding)


def _settled(findings: Sequence[Finding], refit: frozenset[str]) -> bool:
    """No problem among ``findings`` and no cause ``fit_to_facts`` refits: for a component
    not ``voiced`` on the node, neither it nor ``own_words`` would change or add anything."""
    for finding in findings:  # noqa: SIM110 - no generator: asked for most components of every node
        if finding.status in PROBLEMS or finding.cause in refit:
            return False
    return True


def _used_here(ctx: NodeContext, component: str) -> bool:
    """Whether a line may name ``component`` on this node: not one the platform has no place
    for, unless its pods run here all the same (the GPU Operator's toolkit on GKE, which
    rewrites the containerd config GKE's own stack does without)."""
    return component not in ctx.platform.not_used or bool(ctx.stack_pods(component))


def _to_replacer(ctx: NodeContext, finding: Finding) -> Finding:
    """A line that names a component another one replaces on this node (the kubelet's
    "Allocate failed" where HAMi advertises the GPUs) is about the one that runs here."""
    if ctx.stack_pods(finding.component):
        return finding
    instead = ctx.replaced_by(finding.component)
    if instead is None:
        return finding
    return msgspec.structs.replace(finding, component=instead.component)


#: The component whose state a pod sandbox that cannot be created shows (the kubelet reads
#: the node as not ready when no sandbox starts, the network plugin's included).
_RUNTIME = "container-runtime"
_SANDBOX_EVENT = "reason=FailedCreatePodSandBox"


def _sandboxes_explain(kb: KnowledgeBase, judged: Mapping[str, Judgement]) -> None:
    """A pod sandbox the runtime cannot create because of a layer its error names (the
    runtime handler's binary the toolkit installs) fails for every pod of the node, the
    network plugin's included, so the node reads as not ready: the runtime's state (down,
    network not ready) is that failure, which the named component ``explains``. Only a
    runtime whose problems are all states is explained this way; a catalogued cause of
    its own stands."""
    runtime = judged.get(_RUNTIME)
    if runtime is None or _settled(runtime.findings, frozenset()):  # (every node: the runtime runs)
        return
    states = [f for f in runtime.findings if f.status in PROBLEMS]
    if not all(kb.get(f.cause).state for f in states):
        return
    for cid, judgement in judged.items():
        findings = judgement.findings
        for index, finding in enumerate(findings):
            context = finding.context
            if (cid != _RUNTIME and finding.status in PROBLEMS and EXPLAINS not in context
                    and _SANDBOX_EVENT in context.get(base.SOURCE, "")):
                findings[index] = msgspec.structs.replace(finding, context={**context, EXPLAINS: _RUNTIME})


def _explain_unobserved(ctx: NodeContext, judged: Mapping[str, Judgement]) -> None:
    """Node files left out on purpose (the node was judged from lists and its report)."""
    why = ctx.facts.extras_not_fetched(ctx.name)
    if not why:
        return
    for judgement in judged.values():
        if any(not need.startswith("cluster/") for need in judgement.unobserved):
            judgement.why_unobserved = why


def _trace_down(ctx: NodeContext, judged: dict[str, Judgement]) -> dict[str, Judgement]:
    """Symptoms name another layer: causes read in failing components' pods (``seen_in``).

    Mostly the layer below (an operand without NVML names the toolkit). A cause of a
    higher component seen in a lower one's pod (the validator binary failing inside the
    toolkit's driver-validation init container) explains that lower failure instead:
    the finding says so (context ``explains``) and the lower component is blocked by it.
    """
    catalog = ctx.facts.catalog
    failing = list(_failing(judged))
    traced: dict[str, list[Finding]] = defaultdict(list)
    for finding in traced_findings(ctx, failing):
        target, seen = finding.component, finding.context.get("seen_in", "")
        # Never to a layer the platform does not have (GKE mounts the driver itself),
        # nor past a failure below the target that the finding does not explain.
        below = catalog.dependencies(target)
        unexplained = {
            f for f in below & set(failing) if f != seen and seen not in catalog.dependencies(f)
        }
        if target not in judged or target in ctx.platform.not_used or unexplained:
            continue
        explains = {EXPLAINS: seen} if seen in below else {}
        traced[target].append(msgspec.structs.replace(finding, context={**finding.context, **explains}))
    for cid, found in traced.items():
        old = judged[cid]
        judged[cid] = Judgement(cid, [*old.findings, *found], old.unobserved, old.why_unobserved)
    return judged


def judge_cluster(facts: ClusterFacts, kb: KnowledgeBase) -> dict[str, Judgement]:
    out = {cid: Judgement(cid, []) for cid in cluster_components()}
    for chk in CLUSTER_REGISTRY:
        out[chk.component].findings.extend(chk.fn(facts))
    for cid, judgement in out.items():
        findings = judgement.findings
        findings.extend(cluster_event_findings(facts, kb, cid))
        findings.extend(cluster_log_findings(facts, kb, cid))
        cluster_own_words(facts, kb, cid, findings)
    settle(out, cluster_doubts(facts))
    return out


@dataclass(frozen=True)
class Diagnoser:
    """Turns judgements into reports, using the catalog's dependency graph."""

    facts: ClusterFacts
    kb: KnowledgeBase
    #: ``_quiet_component``'s reports, by component, status and summary.
    _quiet_reports: dict[tuple[str, Status, str], ComponentReport] = field(
        default_factory=dict, init=False, compare=False, repr=False)

    @cached_property
    def catalog(self) -> Catalog:
        return self.facts.catalog

    @cached_property
    def closure(self) -> dict[str, set[str]]:
        """Transitive dependencies of every component."""
        deps = {c.id: set(c.depends_on) for c in self.catalog.components}
        out: dict[str, set[str]] = {}
        for cid in topological_order(self.catalog.components):
            out[cid] = set(deps[cid]).union(*(out[d] for d in deps[cid]))
        return out

    def cluster_report(self, judgements: Mapping[str, Judgement]) -> ClusterReport:
        # a cluster finding may explain another cluster component's failure: NFD's label the
        # operator says it cannot find (checks.label_unfound)
        explained = _explanations(judgements)
        roots = self._roots(judgements, {}, node=None, explained=explained)
        comps = tuple(
            self._component(
                j,
                roots,
                {},
                self._cluster_pods(j.component),
                version=self._cluster_version(j.component),
                explained=explained,
            )
            for j in judgements.values()
        )
        return ClusterReport(self.facts.manifest.cluster_name, tuple(r for _, r in roots.values()), comps)

    def explain_aggregates(self, cluster: ClusterReport, nodes: Sequence[NodeReport]) -> ClusterReport:
        """Drop cluster causes that only sum up node failures which have their own root causes."""
        kept, explained = [], {}
        for rc in cluster.root_causes:
            below = sorted(
                {r.component for n in nodes for r in n.root_causes}
                & set(self.catalog.dependents(rc.component))
            )
            aggregate = self.kb.get(rc.cause).aggregate
            if not aggregate and (lacking := self._lacks_from_nodes(rc, nodes)):
                explained[rc.component] = lacking
                continue
            if aggregate and not below and _logged_why(rc):
                kept.append(rc)  # its own log says why; the short operands follow from it
                continue
            if aggregate and not below:
                below = self._short_daemonsets(rc.component)
            if aggregate and below:
                explained[rc.component] = tuple(below)
            elif aggregate and not self.facts.has("daemonsets"):
                # which operand is short cannot be read without the DaemonSets: say so
                operands = tuple(sorted(self.catalog.dependents(rc.component)))
                kept.append(msgspec.structs.replace(rc, unverified_below=operands))
            else:
                kept.append(rc)
        if not explained:
            return msgspec.structs.replace(cluster, root_causes=tuple(kept))
        comps = tuple(
            msgspec.structs.replace(c, blocked_by=explained[c.component]) if c.component in explained else c
            for c in cluster.components
        )
        return msgspec.structs.replace(cluster, root_causes=tuple(kept), components=comps)

    def _lacks_from_nodes(self, rc: RootCause, nodes: Sequence[NodeReport]) -> tuple[str, ...]:
        """The node root causes' components that a cluster component's decisive line names as
        what it lacks: the GPU Operator that cannot render the driver without the kernel label
        NFD sets (NVIDIA/gpu-operator#149) fails because NFD is not on the nodes, and that
        node cause is the one to fix. Only a component absent on the nodes (``_ABSENT``) counts:
        a line that merely names a component running there explains nothing."""
        line = rc.decisive.line if rc.decisive is not None else ""
        named = set(self.catalog.all_named_in(line)) if line else set()
        return tuple(sorted({r.component for n in nodes for r in n.root_causes
                             if r.component in named and r.cause in _ABSENT}))

    def _short_daemonsets(self, operator: str) -> list[str]:
        """Operands of ``operator`` whose DaemonSet has fewer ready pods than nodes it targets:
        the policy's "notReady" only counts them (a rollout, a node not judged here)."""
        return sorted(
            cid
            for cid in self.catalog.dependents(operator)
            for ds in self.facts.daemonsets.get(cid, [])
            if ds.status.number_ready < ds.status.desired_number_scheduled
        )

    def _cluster_version(self, component: str) -> str | None:
        pods = self.facts.cluster_pods.get(component, [])
        images = [c.image for sp in pods for c in sp.pod.spec.containers]
        return next((tag for tag in map(image_tag, images) if tag), None)

    def _cluster_pods(self, component: str) -> tuple[PodRef, ...]:
        return tuple(_pod_ref(sp.pod) for sp in self.facts.cluster_pods.get(component, []))

    def node_report(
        self, ctx: NodeContext, judgements: Mapping[str, Judgement], cluster_problems: Mapping[str, Status]
    ) -> NodeReport:
        failing = _failing(judgements)
        explained = _explanations(judgements, failing)
        roots = self._roots(judgements, cluster_problems, node=ctx, explained=explained, failing=failing)
        missing = self._missing_data(ctx.name, judgements)
        unseen = (ctx.name, missing)
        here = ctx.components_here
        reports: list[ComponentReport] = []
        for j in judgements.values():  # (a loop: a comprehension is one more code object a node)
            reports.append(self._quiet_component(here, j) or self._component(
                j,
                roots,
                cluster_problems,
                _pod_refs(ctx.stack_pods(j.component)),
                version=component_version(ctx, j.component),
                explained=explained,
                unseen=unseen,
            ))
        comps = tuple(reports)
        statuses = list(map(_STATUS_OF, comps))
        if Status.UNKNOWN in statuses:  # (only an unknown one may count as ok: ``_as_judged``)
            statuses = [_as_judged(j, s) for j, s in zip(judgements.values(), statuses, strict=True)]
        if Status.NOT_DEPLOYED in statuses and self.catalog.unreported_absent:
            comps = _reported(comps, self.catalog.unreported_absent)
        return _node_report(ctx, roots, _node_status(statuses), comps, missing, judgements=judgements)

    def node_verdict(
        self, ctx: NodeContext, judgements: Mapping[str, Judgement], cluster_problems: Mapping[str, Status]
    ) -> NodeReport:
        """``node_report`` without its components and missing data: the node's verdict and
        root causes, for a caller that reads no more (validate's stack check)."""
        failing = _failing(judgements)
        explained = _explanations(judgements, failing)
        roots = self._roots(judgements, cluster_problems, node=ctx, explained=explained, failing=failing)
        status = _node_status(_as_judged(j, j.status) for j in judgements.values())
        return _node_report(ctx, roots, status, (), (), judgements=judgements)

    def _missing_data(self, node: str, judgements: Mapping[str, Judgement]) -> tuple[MissingInput, ...]:
        """What the unknown components of ``node`` lacked, and why, once per kind of data."""
        by_need: dict[str, list[str]] = defaultdict(list)
        unknown = Status.UNKNOWN
        for cid, j in judgements.items():
            if j.unobserved and j.status == unknown:
                for need in named_needs(j.unobserved):
                    by_need[need].append(cid)
        if not by_need:
            return ()
        return missing_data(by_need, node, self.facts.manifest, self.facts.node_dirs,
                            self.facts.extras_not_fetched(node))

    def _roots(
        self,
        judgements: Mapping[str, Judgement],
        cluster_problems: Mapping[str, Status],
        node: NodeContext | None,
        explained: Mapping[str, str],
        failing: Mapping[str, Judgement] | None = None,
    ) -> dict[str, tuple[Judgement, RootCause]]:
        """``failing``: the judgements whose status is a problem, where the caller has them."""
        if failing is None:
            failing = _failing(judgements)
        roots: dict[str, tuple[Judgement, RootCause]] = {}
        if not failing:  # (most nodes)
            return roots
        problems = set(failing)
        recovered = {cid for cid, j in failing.items() if _recovered(j)}
        for cid, j in failing.items():
            below = problems - recovered if j.status == Status.FAILED and not _waits(j) else problems
            if self._blockers(cid, j, below, cluster_problems, explained):
                continue
            unknown_below = sorted(
                d
                for d in self.closure.get(cid, ())
                if d in judgements and judgements[d].status == Status.UNKNOWN
            )
            roots[cid] = (j, self._root_cause(j, node, unknown_below))
        if len(roots) > len(recovered & set(roots)) > 0:  # what fails now before what recovered
            roots = {cid: r for cid, r in roots.items() if cid not in recovered} | {
                cid: r for cid, r in roots.items() if cid in recovered}
        return roots

    def _blockers(
        self,
        cid: str,
        j: Judgement,
        problems: set[str],
        cluster_problems: Mapping[str, Status],
        explained: Mapping[str, str],
    ) -> list[str]:
        """Failing components below ``cid`` (those its own finding explains, and what fails
        on top of them, excepted), plus the component whose finding explains ``cid``."""
        closure = self.closure.get(cid, set())
        mine = {x for x, by in explained.items() if by == cid}
        below = sorted(
            d for d in closure if d in problems and d not in mine and not self.closure.get(d, set()) & mine
        )
        explainers = {explained.get(d, cid) for d in {cid, *closure}}
        below += sorted(e for e in explainers if e != cid and e in problems)
        deployer = self.catalog.get(cid).deployed_by
        missing = j.primary is not None and j.primary.cause in _MISSING_CAUSES
        if deployer and missing and deployer in cluster_problems:
            below.append(deployer)
        return below

    def _root_cause(self, j: Judgement, node: NodeContext | None, unknown_below: list[str]) -> RootCause:
        primary = j.primary
        assert primary is not None
        cause = self.kb.get(primary.cause)
        comp = self.catalog.get(j.component)
        values = {**primary.context, "operator_namespace": _operator_ns(node, self.facts)}
        if node is not None:
            values["node"] = node.name
        evidence = _evidence(j.problems)
        decisive = self._decisive(primary)
        return RootCause(
            component=j.component,
            layer=comp.layer,
            cause=cause.code,
            title=_title(j.component, cause.title, primary,
                         decisive if cause.state or cause.aggregate else None),
            status=primary.status,
            evidence=evidence,
            next_steps=render_steps(cause, values),
            explanation=cause.explanation,
            fix=cause.fix_of(j.component),
            unverified_below=tuple(unknown_below),
            supporting=tuple(dict.fromkeys(f.cause for f in j.problems[1:] if f.cause != cause.code)),
            since=failing_since(node, j.component) if node is not None else None,
            decisive=decisive,
        )

    def _decisive(self, primary: Finding) -> DecisiveLine | None:
        """The decisive line of a root cause: the one its class finding read, or the line a
        catalogued signature matched (put in its class too); None for structural causes."""
        ctx = primary.context
        if base.LINE in ctx:
            return DecisiveLine(ctx[base.SOURCE], ctx[base.LINE], ctx[base.MESSAGE],
                                ctx.get(base.LINE_CLASS, primary.cause), ctx.get(base.STATE))
        if "signature" not in ctx or not primary.evidence:
            return None
        ev = primary.evidence[0]
        message = message_of(ev.excerpt)
        line_class = self.kb.line_class(message)
        return DecisiveLine(ev.source, ev.excerpt, message, line_class.code if line_class else "")

    def _component(
        self,
        j: Judgement,
        roots: Mapping[str, tuple[Judgement, RootCause]],
        cluster_problems: Mapping[str, Status],
        pods: tuple[PodRef, ...],
        *,
        version: str | None,
        explained: Mapping[str, str],
        unseen: tuple[str, tuple[MissingInput, ...]] | None = None,
    ) -> ComponentReport:
        comp = self.catalog.by_id[j.component]
        blocked: tuple[str, ...] = ()
        if j.status in _BLOCKABLE and j.component not in roots:
            problems = set(roots)
            blockers = self._blockers(j.component, j, problems, cluster_problems, explained)
            blocked = tuple(dict.fromkeys(blockers))
        primary = j.primary
        return ComponentReport(
            component=j.component,
            layer=comp.layer,
            title=comp.title,
            status=j.status,
            summary=self._summary(j, unseen, primary),
            blocked_by=blocked,
            cause=primary.cause if primary else None,
            version=version,
            pods=pods,
        )

    def _quiet_component(self, here: frozenset[str], j: Judgement) -> ComponentReport | None:
        """The report of a component whose one finding is an ok or not-deployed reading with
        its summary, with no pod on the node (``here``: those with one) and no version read
        from the host (most of a node's components: not deployed there). ``_component``
        would read it as that status and summary, blocked by nothing, no cause, no version,
        no pods: made once per component, status and summary and shared between nodes
        (reports are immutable). None for any other component."""
        findings, cid = j.findings, j.component
        if len(findings) != 1 or cid in HOST_VERSIONS:
            return None
        status, context = j.status, findings[0].context
        if (status not in _QUIET or findings[0].status is not status or "summary" not in context
                or cid in here):
            return None
        key = (cid, status, context["summary"])
        reports = self._quiet_reports
        known = reports.get(key)
        if known is None:
            if len(reports) >= _QUIET_REPORTS_MAX:
                reports.clear()
            comp = self.catalog.by_id[cid]
            known = reports[key] = ComponentReport(cid, comp.layer, comp.title, status, key[2])
        return known

    def _summary(self, j: Judgement, unseen: tuple[str, tuple[MissingInput, ...]] | None,
                 primary: Finding | None) -> str:
        if primary is not None:
            title = self.kb.get(primary.cause).title
            state = primary.context.get("pod_state")
            return f"{title} ({state})" if state else title
        status = j.status
        own: list[str] = []  # the component's own findings' summaries before its pods'
        pods: list[str] = []
        for f in j.findings:  # (a loop: asked for every component of a node)
            if f.status == status and "summary" in f.context:
                (pods if "pod" in f.context else own).append(f.context["summary"])
        if len(own) + len(pods) == 1:
            return (own or pods)[0]
        if own or pods:
            return "; ".join(dict.fromkeys((own + pods)[:2]))
        if j.unobserved and unseen is not None:  # say what was missing, and why
            return unknown_summary(j.unobserved, *unseen)
        if j.unobserved:
            why = f"; {j.why_unobserved}" if j.why_unobserved else ""
            return "not observed: " + ", ".join(sorted(set(j.unobserved))) + why
        return "no evidence collected"


def _reported(comps: tuple[ComponentReport, ...], unreported: frozenset[str]) -> tuple[ComponentReport, ...]:
    """The node's component reports without those of ``unreported`` components (the catalog's
    ``reported_absent = false``) that are not deployed on it and have no pod there."""
    return tuple(c for c in comps
                 if not (c.component in unreported and c.status == Status.NOT_DEPLOYED and not c.pods))


def _failing(judgements: Mapping[str, Judgement]) -> dict[str, Judgement]:
    """The judgements whose status is a problem (read once per node report)."""
    # (in C: a dict comprehension would be one more code object a node)
    failing = map(PROBLEMS.__contains__, map(_STATUS_OF, judgements.values()))
    return dict(compress(judgements.items(), failing))


def _explanations(judgements: Mapping[str, Judgement],
                  failing: Mapping[str, Judgement] | None = None) -> dict[str, str]:
    """Failing component -> the component whose finding explains that failure (a toolkit
    drop-in that stops containerd, a validator error inside the toolkit pod). The primary
    finding's word comes first; another problem of the same component explains what the
    primary does not claim (NFD not deployed names the cause, NFD's missing PCI label is
    what keeps the operands away): a failure below stays the explaining one's either way."""
    out: dict[str, str] = {}
    if failing is None:
        failing = _failing(judgements)  # only a problem explains
    if not failing:  # (most nodes)
        return out
    for primary in (True, False):
        for cid, j in failing.items():
            for finding in j.problems[:1] if primary else j.problems[1:]:
                targets = finding.context.get(EXPLAINS, "")
                for target in targets.split(","):  # a label NFD never set keeps several operands away
                    if (target and target != cid and (primary or target not in out) and target in judgements
                            and judgements[target].status.is_problem):
                        out[target] = cid
    return out


def _title(component: str, title: str, primary: Finding, state_line: DecisiveLine | None = None) -> str:
    """A catalogued cause's title; for a class, the component's own words quoted. A state (or
    a sum of node states) that carries its component's decisive line (``state_line``) keeps
    its title and quotes the line after it: the state is never the whole answer (issue 20)."""
    message = primary.context.get(base.MESSAGE)
    if state_line is not None and (message is None or base.LINE_CLASS in primary.context):
        return f"{title}: {shown(state_line.message)}"
    if message is None:
        return title
    return f"{component} {primary.context.get(base.VERB, 'reports')}: {shown(message)}"


#: The state of a pod that runs now and restarted in the recent past.
_RESTARTING = "restarting"


def _recovered(j: Judgement) -> bool:
    """A component whose only problem is restarts in the recent past, its pod running now,
    with no line saying why. It is degraded, not down: a component above it that fails now
    (a toolkit whose init image cannot be pulled beside a driver pod with 12 restarts,
    NVIDIA/gpu-operator#560) names its own reason, and that failure is not the restarts'."""
    return j.status == Status.DEGRADED and bool(j.problems) and all(
        f.cause == _RESTARTING for f in j.problems)


#: States that say only that a pod waits on a layer below it (an operand's init container
#: polling for the driver's or the toolkit's validation marker): no reason of their own.
_WAITING = frozenset({"init_blocked"})


def _waits(j: Judgement) -> bool:
    """A component that only waits on a lower layer: the lowest failing dependency owns its
    failure even where that dependency is only restarting (every operand in Init:0/1 beside a
    driver pod Running with restarts, GPU Operator troubleshooting "pods are stuck in Init"),
    unlike a component that fails for a reason of its own (``_recovered``)."""
    return bool(j.problems) and all(f.cause in _WAITING for f in j.problems)


def _operator_ns(node: NodeContext | None, facts: ClusterFacts) -> str:
    if node is not None:
        return node.operator_namespace
    for sp in facts.cluster_pods.get("gpu-operator", []):
        return sp.pod.metadata.namespace
    return "gpu-operator"


def _evidence(problems: Sequence[Finding]) -> tuple[Evidence, ...]:
    """Evidence of the primary finding first; the same excerpt seen twice is shown once."""
    seen: dict[str, Evidence] = {}
    for finding in problems:
        for ev in finding.evidence:
            seen.setdefault(ev.excerpt, ev)
    return tuple(seen.values())[:MAX_EVIDENCE]


def _as_judged(judgement: Judgement, status: Status) -> Status:
    """A component left unknown only because its node files were not fetched on purpose (the
    node was judged healthy from the cluster lists) counts as ok for the node: the node is
    ``ok`` with its missing data as a note (``--deep`` reads it), never ``unknown``."""
    if status == Status.UNKNOWN and judgement.why_unobserved:
        return Status.OK
    return status


def _node_status(statuses: Iterable[Status]) -> Status:
    """The worst status of the node's deployed components (unknown when none is)."""
    present = set(statuses)
    present.discard(Status.NOT_DEPLOYED)
    return min(present, key=STATUS_RANK.__getitem__) if present else Status.UNKNOWN


def _node_report(ctx: NodeContext, roots: Mapping[str, tuple[Judgement, RootCause]], status: Status,
                 components: tuple[ComponentReport, ...], missing: tuple[MissingInput, ...], *,
                 judgements: Mapping[str, Judgement]) -> NodeReport:
    gpus = _gpu_count(ctx)
    labels, allocatable = (ctx.node.metadata.labels, ctx.node.status.allocatable) if ctx.node else ({}, {})
    read: dict[str, Status] = {}
    for c in READ_STATUSES:  # (a loop: a dict comprehension is one more code object a node)
        if c in judgements:
            read[c] = judgements[c].status
    return NodeReport(
        name=ctx.name,
        status=status,
        root_causes=tuple(map(_ROOT, roots.values())),
        components=components,
        roles=_roles(labels),
        gpus=gpus,
        gpu_product=_gpu_product(ctx),
        missing_data=missing,
        gpus_usable=usable_gpus(gpus, labels, allocatable, read, ctx.allocatable_resources),
    )


def _gpu_count(ctx: NodeContext) -> int | None:
    probe = ctx.probe
    return ctx.expected_gpus or (probe.nvml.device_count if probe else None)


def _gpu_product(ctx: NodeContext) -> str | None:
    """GFD's label, else nvidia-smi's or NVML's name for the first GPU."""
    label = ctx.node.metadata.labels.get("nvidia.com/gpu.product") if ctx.node else None
    smi, probe = ctx.nvidia_smi, ctx.probe
    if label:
        return label
    if smi is not None and smi.gpus:
        return smi.gpus[0].product_name
    return probe.nvml.gpus[0].name if probe is not None and probe.nvml.gpus else None


def _roles(labels: Mapping[str, str]) -> tuple[str, ...]:
    prefix = "node-role.kubernetes.io/"
    # (in C: a generator would be one more code object a node)
    roles = filter(methodcaller("startswith", prefix), labels)
    return tuple(sorted(map(itemgetter(slice(len(prefix), None)), roles)))


def _pod_refs(pods: Sequence[StackPod]) -> tuple[PodRef, ...]:
    return tuple(map(_pod_ref, map(_POD_OF, pods))) if pods else ()


#: A finding's or report's status, a stack pod's pod, a root's cause (C readers, not comprehensions).
_STATUS_OF, _POD_OF, _ROOT = attrgetter("status"), attrgetter("pod"), itemgetter(1)
_FINDINGS_OF = attrgetter("findings")


def _pod_ref(pod: Pod) -> PodRef:
    """The pod as the report lists it; a plainly running pod (most pods of most nodes) without
    reading its status again (``_read_pod_ref`` gives the same: tests/core/test_plainly_running.py)."""
    if ready := plainly_running(pod):
        meta = pod.metadata
        return PodRef(meta.namespace, meta.name, "Running", f"{ready}/{ready}", 0,
                      pod.status.reason or "Running")
    return _read_pod_ref(pod)


def _read_pod_ref(pod: Pod) -> PodRef:
    restarts = sum([c.restart_count for c in pod.status.container_statuses])
    return PodRef(
        pod.metadata.namespace,
        pod.metadata.name,
        pod.status.phase,
        ready_ratio(pod),
        restarts,
        display_state(pod),
    )


ObservationReader = Callable[[ClusterFacts, str], NodeObservations]
#: Called with each node's context once the node is judged (validate's node checks); what it
#: returns comes back with the node's report (it may run in a worker process: see nodepool).
NodeVisitor = Callable[[NodeContext], object]


@dataclass(frozen=True)
class Reuse:
    """Node reports judged earlier from the same node facts (live collection judges every
    node from the lists before fetching extras for a few). They stand while the cluster-wide
    problems they were judged under are unchanged; nodes whose facts changed are left out."""

    cluster_problems: Mapping[str, Status]
    nodes: Mapping[str, NodeReport]

    @classmethod
    def of(cls, report: Report, changed: Iterable[str]) -> Reuse:
        problems = {c.component: c.status for c in report.cluster.components if c.status.is_problem}
        skip = set(changed)
        return cls(problems, {n.name: n for n in report.nodes if n.name not in skip})


def diagnose(
    facts: ClusterFacts,
    read_observations: ObservationReader,
    nodes: Sequence[str] = (),
    visit: NodeVisitor | None = None,
    seen: Callable[[str, Any], None] | None = None,
    *,
    reuse: Reuse | None = None,
    visited_as: Any = None,
    node_details: bool = True,
    observed: dict[str, Observed] | None = None,
) -> Report:
    """The whole report: cluster causes once, then every (selected) GPU node.

    ``visit`` sees each node's context after the node is judged, so another view
    (validate) reuses its observations and parsed forms instead of reading them again;
    ``seen`` then receives, in node order, the node's name and what ``visit`` returned.
    ``reuse`` gives node reports already judged from the same facts (not with ``visit``).
    ``visited_as`` is the type of what ``visit`` returns: given, worker processes send it
    back as MessagePack (as they send the reports), otherwise pickled.
    ``node_details=False``: node reports keep their verdict and root causes and drop their
    components and missing data (a caller that reads no more, and shows none of it).
    ``observed``, given, receives what each judged node's files said that the fleet compares
    (``gpunode.fleet.profile.Observed``; ``gpunode diff`` compares it between two bundles).
    """
    with gc_paused():  # everything built here lives until the report is rendered
        return _diagnose(facts, read_observations, nodes, visit, seen, reuse=reuse, visited_as=visited_as,
                         node_details=node_details, observed={} if observed is None else observed)


@dataclass(frozen=True)
class _NodeJudge:
    """One node from files to report (and the visitor's result): all a worker needs."""

    facts: ClusterFacts
    read_observations: ObservationReader
    diagnoser: Diagnoser
    cluster_problems: Mapping[str, Status]
    visit: NodeVisitor | None
    details: bool = True

    def __call__(self, name: str) -> tuple[NodeReport, object, Observed]:
        facts, kb = self.facts, self.diagnoser.kb
        ctx = NodeContext(facts, name, self.read_observations(facts, name), kb)
        report_of = self.diagnoser.node_report if self.details else self.diagnoser.node_verdict
        report = report_of(ctx, judge_node(ctx, facts.catalog), self.cluster_problems)
        # what the node's files say that the fleet compares (gpunode.fleet), read while they are here
        return report, (self.visit(ctx) if self.visit is not None else None), observe(ctx)


def _diagnose(facts: ClusterFacts, read_observations: ObservationReader, nodes: Sequence[str],
              visit: NodeVisitor | None, seen: Callable[[str, Any], None] | None,
              *, reuse: Reuse | None = None, visited_as: Any = None, node_details: bool = True,
              observed: dict[str, Observed]) -> Report:
    kb = load_kb()
    diagnoser = Diagnoser(facts, kb)
    cluster_j = judge_cluster(facts, kb)
    cluster = diagnoser.cluster_report(cluster_j)
    cluster_problems = {c.component: c.status for c in cluster.components if c.status.is_problem}
    reports = []
    asked = nodes or facts.gpu_nodes()
    skipped = tuple(NotGpuNode(n, facts.why_not_gpu_node(n)) for n in asked if not facts.is_gpu_node(n))
    not_gpu = {s.name for s in skipped}
    names = [n for n in asked if n not in not_gpu]
    kept = reuse.nodes if reuse and visit is None and dict(reuse.cluster_problems) == cluster_problems else {}
    judge = _NodeJudge(facts, read_observations, diagnoser, cluster_problems, visit, node_details)
    codec = _REPORTS_CODEC if visit is None else _visited_codec(visited_as)
    fresh = iter(nodepool.judged([n for n in names if n not in kept], judge, codec))
    for name in names:
        if name in kept:
            reports.append(kept[name])
            continue
        report, visited, observed[name] = next(fresh)
        reports.append(report)
        _check_memory(facts, len(reports), len(names))
        if seen is not None:
            seen(report.name, visited)
    cluster = diagnoser.explain_aggregates(cluster, reports)
    return Report(
        cluster=cluster,
        nodes=tuple(reports),
        groups=_groups(reports),
        source=_source(facts),
        not_gpu_nodes=skipped,
        gpu_workloads=workload_issues(facts, kb, reports),
        daemonsets=daemonset_table(facts, reports),
        gpus=gpu_count(reports),
        fleet=analyse(facts, reports, observed),
    )


def _check_memory(facts: ClusterFacts, judged: int, total: int) -> None:
    """Reports of tens of thousands of nodes (node folders cost nothing to make) stop at the
    memory limit (limits.MAX_MEMORY_GROWTH), counting what writing their reports will take,
    with one line; checked every 16 nodes."""
    if judged % 16 or facts.memory is None:
        return
    if not facts.memory.over(reserve=judged * limits.REPORT_BYTES_PER_NODE):
        return
    raise GpunodeError(f"stopped after judging {judged:,} of {total:,} GPU nodes: memory grew by "
                       f"more than {limits.memory_limit_hint(facts.memory.limit)}; or judge fewer "
                       "at once (name the nodes, or --selector)")


_REPORTS_ENCODER = msgspec.msgpack.Encoder()


@cache
def _reports_decoder() -> msgspec.msgpack.Decoder[list[tuple[NodeReport, Observed]]]:
    """The workers' reports' decoder, made where a pool first returns some (building its
    type information for every report Struct is work a serial command never needs)."""
    return msgspec.msgpack.Decoder(list[tuple[NodeReport, Observed]])


def _encode_reports(results: list[tuple[NodeReport, object, Observed]]) -> bytes:
    """Node reports (and what the fleet reads of their files) from a worker process as
    MessagePack (pickling them cost the worker 30 us a node, this 5 us; the visitor's
    results are None when this is used)."""
    return _REPORTS_ENCODER.encode([(report, seen) for report, _, seen in results])


def _decode_reports(data: bytes) -> list[tuple[NodeReport, object, Observed]]:
    return [(report, None, seen) for report, seen in _reports_decoder().decode(data)]


_REPORTS_CODEC: nodepool.Codec = (_encode_reports, _decode_reports)


@cache
def _visited_codec(visited_as: Any) -> nodepool.Codec | None:
    """Node reports with what the visitor returned, as MessagePack when its type is known
    (validate's outcomes: pickling them and the reports cost a worker 35 us a node, this 15)."""
    if visited_as is None:
        return None  # a visitor's results may be anything: pickled
    decoder = msgspec.msgpack.Decoder(list[tuple[NodeReport, visited_as, Observed]])
    return _REPORTS_ENCODER.encode, decoder.decode


def _groups(nodes: Sequence[NodeReport]) -> tuple[Group, ...]:
    by_cause: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for node in nodes:
        for rc in node.root_causes:
            by_cause[(rc.cause, rc.component, rc.title)].append(node.name)
    ordered = sorted(by_cause.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return tuple(Group(cause, comp, title, tuple(names)) for (cause, comp, title), names in ordered)


def _source(facts: ClusterFacts) -> SourceInfo:
    m = facts.manifest
    return SourceInfo(
        kind=m.source,
        location=facts.source.location,
        collected_at=m.collected_at,
        partial=m.partial,
        warnings=m.warnings,
        missing=facts.missing,
    )


def _logged_why(rc: RootCause) -> bool:
    """A cluster cause that its component's own log decides (the operator that cannot find
    a CRD its policy asks for) is more than a sum of node states: the operands it never
    started are short because of it, so they do not explain it away."""
    return rc.decisive is not None and rc.decisive.source.startswith("logs/")
