"""The decisive line of a failing component: its own words, read where it left them.

A component whose only problem is a state (crash loop, init failing, no GPUs
advertised, no pod) is explained by what it said itself: the previous log of the
container that ended, the init container's log, the terminated state's message,
the events about its pod or DaemonSet, its current log while it runs. The
decisive line is picked by general rules (``gpunode.decisive``) and put in a
class of the knowledge base; the finding replaces the state as the named cause,
and a catalogued signature of the component, when one matched, still wins.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache, partial
from itertools import pairwise

import msgspec

from gpunode.bundle.kube import ContainerStatus, CustomResource, Event, Pod
from gpunode.catalog import Catalog
from gpunode.checks.admission import (
    DRA_PLUGIN,
    NodeServing,
    admission_names,
    claimed_device_refused,
    dra_prepare,
    kubelet_count,
    owned,
)
from gpunode.checks.base import EXPLAINS, LINE, LINE_CLASS, MESSAGE, SOURCE, STATE, VERB
from gpunode.checks.board import memory_reading_without_device_memory, switch_module_without_switches
from gpunode.checks.context import NodeContext
from gpunode.checks.driver_service import cli_view_of_driver
from gpunode.checks.image_store import image_store_full
from gpunode.checks.job_words import job_cause, job_names
from gpunode.checks.named import (
    hook_layer,
    host_driver,
    named_on_node,
    nvidia_tool_absent,
    plugin_spec_owner,
    runtime_own_error,
    sharing_spec_owner,
    spec_device_owner,
)
from gpunode.checks.seccomp_spec import operand_errno_dropped, spec_errno_dropped
from gpunode.decisive import (
    MAX_LINE,
    Decisive,
    clipped,
    decisive_line,
    is_advice,
    last_words,
    lenient_line,
    message_of,
    reports_xid,
    severity,
)
from gpunode.facts import ClusterFacts, LogFile
from gpunode.job_errors import job_error
from gpunode.kb import Cause, KnowledgeBase
from gpunode.model import PROBLEMS, Evidence, Finding, Status
from gpunode.relazy import lazy_compile


@dataclass(frozen=True)
class Text:
    """Lines a component wrote, where they are, and what reading them means."""

    where: str  # a bundle path, or an object and field
    lines: Sequence[str]
    verb: str  # "exits", "init container X fails", "cannot start", "reports"
    numbered: bool = True  # a log file: cite the line number
    reason: str = ""  # the event's or the pod status's reason, where the text is one
    #: Read only where nothing the component wrote says more (a signal's exit code): its line
    #: counts as an error word, never as an explicit error that would pass over one.
    fallback: bool = False


def own_words(ctx: NodeContext, component: str, findings: list[Finding]) -> list[Finding]:
    """Add to ``findings`` what the component's own words on this node say: a controller
    serving the node that keeps failing (nfd-master), the decisive line that replaces a
    state. Returns the findings that belong to another component the line names."""
    logged = component in ctx.facts.side_logged
    if not logged and _quiet(ctx, component, findings):  # most components of most nodes
        return []

    def controller_logs() -> Iterator[LogFile]:
        return (log for sp in ctx.cluster_side_pods(component) for log in ctx.logs_of(sp.pod))

    said = _said(ctx.kb, component, findings, controller_logs if logged else None,
                 lambda state: node_texts(ctx, component, state))
    if said is None and not _standing(findings):
        logs = tuple(_running_logs(ctx, component))  # (most pods of most nodes: no log collected)
        stuck = running_finding(ctx.kb, component, logs, partial(named_on_node, ctx), _answering_peers(ctx),
                                deleting=_being_deleted(ctx, component)) if logs else None
        if stuck is not None and switch_module_without_switches(ctx, stuck.context.get(LINE, "")):
            stuck = None  # a poll of NVSwitches this board does not have (checks.board)
        if stuck is not None and memory_reading_without_device_memory(
                ctx, stuck.context.get(LINE, ""), (line for log in logs for line in log.lines)):
            stuck = None  # a memory reading a GPU without memory of its own does not give
        refused = _refused_config(ctx, component) if stuck is None else None
        refused = refused or (_went_on_without(ctx, component) if stuck is None else None)
        if refused is not None:  # the runtime's own configuration: whatever it names, the runtime's
            findings.append(refused)
            return []
        if stuck is not None:
            findings.append(stuck)
            said = stuck
    named = operand_errno_dropped(ctx.facts.catalog, component, [sp.pod for sp in ctx.stack_pods(component)],
                                  partial(named_on_node, ctx))
    moved = blamed(ctx.facts.catalog, ctx.kb, component, said, named) if said is not None else None
    if moved is None and said is None:
        moved = _job_blamed(ctx, component, findings) or _unkillable(ctx, component, named)
    if moved is None and said is None and _standing(findings):
        _quote_state(ctx.kb, component, findings, _running_logs(ctx, component))
    return [moved] if moved is not None else []


def _quote_state(kb: KnowledgeBase, component: str, findings: list[Finding], logs: Iterable[LogFile]) -> None:
    """A standing state of the node's facts with no line of its own (a device plugin that
    advertises no GPUs while its pod runs) quotes the decisive line of the component's running
    log (``logs``) where one reads as an error (issue 20: a state is never the whole answer
    while that log holds an error line). The state stays the cause: a catalogued state says
    more than the line's class; the line says why, and its class rides along (``LINE_CLASS``).
    A pod's own state (a crash loop, a failing init container) is read by ``_said`` instead."""
    if any(LINE in f.context for f in findings):
        return  # a line already said why
    index = next((i for i, f in enumerate(findings) if f.status in PROBLEMS and kb.get(f.cause).state
                  and "pod_state" not in f.context), None)
    if index is None:
        return
    state = findings[index]
    for log in logs:
        found = decisive_line(log.lines, kb.class_of)
        if found is None:
            continue
        where = f"{log.path}:{found.line_no}"
        quoted = line_finding(kb, component, state.status, found, where, verb="reports")
        said = {key: quoted.context[key] for key in (LINE, MESSAGE, SOURCE, VERB)}
        findings[index] = msgspec.structs.replace(
            state, evidence=(*state.evidence, *quoted.evidence), context={**state.context, **said,
                                                                          LINE_CLASS: quoted.cause})
        return


def _quiet(ctx: NodeContext, component: str, findings: Sequence[Finding]) -> bool:
    """Nothing of the component's own on this node to read: no problem among its findings,
    no pod here (no running log, no pod being killed) and no host journal. ``own_words``
    then finds nothing, whatever it reads; it stops before reading."""
    if component in HOST_JOURNALS or ctx.stack_pods(component):
        return False
    for finding in findings:  # noqa: SIM110 - no generator: asked for every component of every node
        if finding.status in PROBLEMS:
            return False
    return True


def voiced(ctx: NodeContext) -> frozenset[str]:
    """The components ``own_words`` may add to on this node whatever their findings: those
    with a host journal collected here, those with a pod here that has a log or is being
    deleted, and those with a cluster-wide pod that logged. Any other, none of whose
    findings is a problem, has nothing of its own to say: ``own_words`` reads no running
    log, no journal and no pod it cannot kill for it, and adds nothing. Asked once per node,
    so the node pass passes over such components without a call each."""
    found = set(ctx.facts.side_logged)
    cmd = ctx.obs.cmd
    for component, journal in HOST_JOURNALS.items():
        if journal in cmd:
            found.add(component)
    logs, cluster_logs = ctx.obs.logs, ctx.facts.cluster_logs
    for component, pods in ctx._pods_here.items():
        for sp in pods:
            meta = sp.pod.metadata
            key = meta.namespace, meta.name
            if meta.deletion_timestamp or logs.get(key) or cluster_logs.get(key):
                found.add(component)
                break
    return frozenset(found)


#: Components whose own check is a GPU job (catalog ids): the GPU Operator's validator proves
#: the stack by running CUDA programs (its cuda-validation vectorAdd, the plugin validation's).
JOB_RUNNERS = frozenset({"validator"})


def _job_blamed(ctx: NodeContext, component: str, findings: Sequence[Finding]) -> Finding | None:
    """A job runner's failed GPU job moved to the layer its library's error names, with the
    cause the job-error table (``data/job_errors.toml``) gives that error: the CUDA error the
    validator's sample prints is a library's verdict on a lower layer (the driver too old for
    the job's CUDA, forward compatibility attempted on a GPU without it, the driver's libraries
    missing from the container), and the validator only suffered it. An error the table does
    not read (CUDA's shared "initialization error") or that names no layer under the validator
    stays the validator's own."""
    named = _job_named(ctx, component, findings)
    if named is None:
        return None
    finding, target = named
    moved = blamed(ctx.facts.catalog, ctx.kb, component, finding, lambda _line: target)
    code = job_cause(finding.context[LINE], target) if moved is not None else None
    if moved is None or code is None or code == moved.cause or code not in ctx.kb.by_code:
        return moved
    known = ctx.kb.get(code)
    return msgspec.structs.replace(moved, cause=known.code, status=known.severity,
                                   specificity=max(known.specificity, moved.specificity))


def _job_named(ctx: NodeContext, component: str, findings: Sequence[Finding]) -> tuple[Finding, str] | None:
    """The first problem of ``component`` (a job runner) whose line the job-error table reads
    as naming a layer ``component`` depends on, with that layer's id, the finding carrying its
    line as a decisive one; None otherwise."""
    if component not in JOB_RUNNERS:
        return None
    below = ctx.facts.catalog.dependencies(component)
    for finding in findings:
        if finding.status not in PROBLEMS:
            continue
        if LINE in finding.context:
            line, where = finding.context[LINE], finding.context.get(SOURCE, "")
        elif finding.evidence:
            line, where = finding.evidence[0].excerpt, finding.evidence[0].source
        else:
            continue
        found = job_error(line)
        if found is not None and found.component in below:
            said = {LINE: line, SOURCE: where, MESSAGE: message_of(line)}
            return msgspec.structs.replace(finding, context={**finding.context, **said}), found.component
    return None


#: The kubelet's event for a pod it cannot stop: killing its containers or its sandbox failed
#: (k8s.io/kubernetes pkg/kubelet/events FailedKillPod), and it tries again at every sync.
_KILL_FAILED = "FailedKillPod"
#: CRI-O's words for a runtime handler it does not have (cri-o internal/oci: 'failed to find
#: runtime handler %s from runtime list %v'). On a sandbox it must kill, the handler was there
#: when the sandbox was created with it: an NVIDIA handler removed since is the toolkit's doing,
#: which writes and removes it (its drop-in). At creation the same words may be a pod asking
#: for a handler the node never had by design (CRI-O with the toolkit's hook), so only a kill
#: reads them so.
_HANDLER_GONE = lazy_compile(r"\bfailed to find runtime handler \\?\"?nvidia[\w-]*\\?\"? from runtime list")
_HANDLER_WRITER = "container-toolkit"


def _unkillable(ctx: NodeContext, component: str, named: Callable[[str], str | None]) -> Finding | None:
    """A pod of the component being deleted that the kubelet cannot kill, where its words
    name another layer: CRI-O's 'failed to find runtime handler nvidia from runtime list
    ...' after the toolkit removed the handler the pod's sandbox was created with
    (NVIDIA/nvidia-container-toolkit#1360, ``_HANDLER_GONE``) is the toolkit's failure, and the pod stays
    Terminating until the layer is fixed. A kill that fails in words naming no other layer
    (a timeout) may heal at the next sync, and is left to the pod's own state."""
    for sp in ctx.stack_pods(component):
        pod = sp.pod
        meta = pod.metadata
        if not meta.deletion_timestamp:
            continue
        for text in _event_texts(f"pod {meta.namespace}/{meta.name}", ctx.events_for_pod(pod)):
            found = decisive_line(text.lines, ctx.kb.class_of) if text.reason == _KILL_FAILED else None
            if found is None:
                continue
            finding = line_finding(ctx.kb, component, Status.DEGRADED, found, text.where,
                                   verb="cannot be killed", namespace=meta.namespace, pod=meta.name)
            gone = _HANDLER_GONE.search(found.line) is not None
            moved = blamed(ctx.facts.catalog, ctx.kb, component, finding,
                           (lambda _line: _HANDLER_WRITER) if gone else named)
            if moved is not None:
                verb = f"keeps {component}'s pod {meta.namespace}/{meta.name} from being killed"
                return msgspec.structs.replace(moved, context={**moved.context, VERB: verb})
    return None


def cluster_own_words(facts: ClusterFacts, kb: KnowledgeBase, component: str,
                      findings: list[Finding]) -> None:
    """``own_words`` for a cluster component (the operators): read in its own pods."""
    def controller_logs() -> Iterator[LogFile]:
        pods = facts.cluster_side.get(component, [])
        return (log for sp in pods for log in facts.cluster_logs.get(sp.key, ()))

    applied = policy_finding(kb, facts, component)
    if applied is not None:
        findings.append(applied)
    _said(kb, component, findings, controller_logs, lambda _state: cluster_texts(facts, component))


def policy_finding(kb: KnowledgeBase, facts: ClusterFacts, component: str) -> Finding | None:
    """A state of the operator's policy that the operator itself could not apply: the
    Network Operator marks an applied state ``error`` (not ``notReady``, which waits for
    pods on nodes) when rendering or creating its objects failed, and says why in its
    message. That is the operator's own failure, not a sum of node states."""
    for policy in _policies(facts, component):
        for state in policy.status.applied_states:
            message = _one_line(str(state.get("message") or ""))
            if state.get("state") != "error" or not message:
                continue
            found = decisive_line([message], kb.class_of) or Decisive(1, message, 1)
            name = state.get("name", "")
            where = f"nicclusterpolicy/{policy.metadata.name} status.appliedStates[{name}].message"
            return as_catalogued(kb, line_finding(kb, component, Status.FAILED, found, where,
                                                  verb=f"cannot apply {name}", standalone="true"))
    return None


def _policies(facts: ClusterFacts, component: str) -> tuple[CustomResource, ...]:
    """The policies whose applied states ``component`` reports (the Network Operator's)."""
    return facts.nic_policies if component == "network-operator" else ()


def _said(kb: KnowledgeBase, component: str, findings: list[Finding],
          controller_logs: Callable[[], Iterable[LogFile]] | None,
          texts: Callable[[Finding], Iterable[Text]]) -> Finding | None:
    """The two steps of ``own_words``: a healthy-looking controller that keeps failing,
    then the decisive line that replaces a state; the latter is returned (and added)."""
    if not _problems(findings) or _only_aggregate(kb, findings):  # most components of most nodes
        stuck = controller_finding(kb, component, controller_logs()) if controller_logs else None
        if stuck is not None:
            findings.append(stuck)
        elif not _problems(findings):
            return None
    state = state_to_explain(kb, findings)
    said = decisive_finding(kb, component, state, texts(state)) if state is not None else None
    if said is not None:
        findings.append(said)
    return said


def _problems(findings: Sequence[Finding]) -> bool:
    for finding in findings:  # noqa: SIM110 - no generator: asked twice per component read
        if finding.status in PROBLEMS:
            return True
    return False


def _standing(findings: Sequence[Finding]) -> bool:
    """Whether a problem stands by itself: a signature that is not ``standalone`` only
    refines a state (``diagnose.Judgement.problems``), so alone it makes no problem."""
    for f in findings:  # (no generator: asked for every component read)
        if f.status in PROBLEMS and ("signature" not in f.context or "standalone" in f.context):
            return True
    return False


def _only_aggregate(kb: KnowledgeBase, findings: Sequence[Finding]) -> bool:
    """The component's problems only sum up node states (a policy not ready): its controller
    may still be the one failing, which its own log says."""
    problems = [f for f in findings if f.status in PROBLEMS]
    return bool(problems) and all(kb.get(f.cause).aggregate for f in problems)


def state_to_explain(kb: KnowledgeBase, findings: Sequence[Finding]) -> Finding | None:
    """The component's top problem when all its problems are states, else None (a
    catalogued cause, signature or structural, already says why)."""
    problems = [f for f in findings if f.status in PROBLEMS]
    if not problems or not all(kb.get(f.cause).state and "said" not in f.context for f in problems):
        return None  # ``said``: the state already quotes a catalogued line of the component's own
    return max(problems, key=lambda f: (f.specificity, f.status == Status.FAILED))


def decisive_finding(kb: KnowledgeBase, component: str, state: Finding,
                     texts: Iterable[Text]) -> Finding | None:
    """The first text (most telling first) with a decisive line, as a finding of its class
    that replaces ``state``; None when the component said nothing that reads as an error."""
    weak: tuple[Text, Decisive] | None = None
    ended: tuple[Text, Decisive] | None = None
    for text in texts:
        found = decisive_line(text.lines, kb.class_of)
        if found is None:
            if ended is None and _ended(text):
                words = last_words(text.lines, kb.class_of)
                ended = (text, words) if words is not None else None
            continue
        if found.strength == 2 and not text.fallback:
            return _finding(kb, component, state, text, found)
        weak = weak or (text, found)
    weak = weak or ended  # the words a container ended on, where nothing reads as an error
    return None if weak is None else _finding(kb, component, state, *weak)


def _ended(text: Text) -> bool:
    """The text is the log of a container that ended (``pod_texts``: one that exits, an init
    container that fails): its last line is its last word."""
    verb = text.verb
    init_failed = verb.startswith("init container ") and verb.endswith(" fails")
    return text.numbered and (verb == "exits" or init_failed)


def _finding(kb: KnowledgeBase, component: str, state: Finding, text: Text, found: Decisive) -> Finding:
    where = f"{text.where}:{found.line_no}" if text.numbered else text.where
    finding = as_catalogued(kb, line_finding(kb, component, state.status, found, where, verb=text.verb,
                                             specificity=state.specificity + 1, evidence=state.evidence,
                                             **state.context, **{STATE: state.cause}))
    if kb.get(finding.cause).component != "*" or not _states_own(kb, state.cause, found):
        return finding  # a catalogued cause of the component, or the line's class
    return msgspec.structs.replace(finding, cause=state.cause)


def _states_own(kb: KnowledgeBase, code: str, found: Decisive) -> bool:
    """The line is the state's own catalogued wording and says nothing its example does not:
    a pull that failed because the image or tag is not there ('Failed to pull image "x": ...
    not found', the example's class) is the image pull state, which says what to check; one
    that failed on the registry's certificate or credentials ('... x509: certificate signed
    by unknown authority', '... 401 Unauthorized') falls in a more specific class than its
    example and is that class (the cause's facts must fit, as ``KnowledgeBase.fits``)."""
    cause = kb.get(code)
    said = (found.message, found.line)
    if not cause.example or not any(m.source in ("event", "waiting") and m.regex.search(text)
                                    for m in cause.match for text in said):
        return False
    own, line = kb.class_of(cause.example), kb.class_of(found.message)
    return own is None or line is None or line == own or kb.class_rank(line) > kb.class_rank(own)


#: A GPU device node a program looked up and the file system said is not there (ENOENT):
#: nvidia-container-cli's 'stat failed: /dev/nvidia-modeset: no such file or directory', a
#: runtime's 'lstat /dev/nvidiactl: no such file or directory' applying a device spec, under a
#: driver root too. The driver does not register its nodes with devtmpfs; userspace makes them
#: on demand (nvidia-modprobe, /dev/nvidia-modeset only with -m), so a node can be absent while
#: the driver serves the GPUs (NVIDIA/libnvidia-container#388; a Jetson CSV listing
#: /dev/nvidiactl, NVIDIA/nvidia-container-runtime#123).
_DEVICE_NODE_ABSENT = lazy_compile(r'/dev/nvidia[\w-]*\\?"?: no such file or directory\b')
#: The component that makes the GPU device nodes: for it an absent node is the device's.
_NODES_MAKER = "driver"


def _node_file_absent(kb: KnowledgeBase, component: str, message: str) -> bool:
    """The line reports a GPU device node absent and another component than the driver is
    at fault: that component asked for, mounted or was handed a path that is not there (a
    capability asking for a node never made, a stale device spec), the file-state class,
    not the device answering with an error."""
    return (component != _NODES_MAKER and "/dev/nvidia" in message
            and _DEVICE_NODE_ABSENT.search(message) is not None
            and kb.class_of(message) == "error_device")


def dmesg_device_finding(ctx: NodeContext, component: str, lines: Sequence[str], index: int,
                         status: Status, *, verb: str) -> Finding:
    """A finding of the device-error class quoting the kernel log's line ``index`` (the first of
    a kind whose later lines repeat it), with its file and line number."""
    line = lines[index].strip()[:MAX_LINE]
    where = f"{ctx.obs.path_of('cmd', 'dmesg.txt')}:{index + 1}"
    return line_finding(ctx.kb, component, status, Decisive(index + 1, line, 1), where,
                        verb=verb, standalone="true", line_class="error_device")


def line_finding(kb: KnowledgeBase, component: str, status: Status, found: Decisive, where: str, *,
                 verb: str, specificity: int | None = None, evidence: tuple[Evidence, ...] = (),
                 line_class: str | None = None, **context: str) -> Finding:
    """A finding whose cause is the class of a decisive line, quoting it (``where`` it is,
    ``verb`` for the title); ranked as its class unless ``specificity`` says otherwise.
    ``line_class``: the class a value's format gives a line that has no words of its own
    (a label with no value), instead of the one its words fall in."""
    if line_class is None and _node_file_absent(kb, component, found.message):
        line_class = "error_file_state"
    cls = kb.get(line_class) if line_class is not None else kb.line_class(found.message)
    assert cls is not None  # the last class matches any line
    line = clipped(found.line)
    quoted = {LINE: line, MESSAGE: clipped(found.message), SOURCE: where, VERB: verb}
    return Finding(component, status, cls.code, (*_context_evidence(found, where), Evidence(where, line),
                                                 *evidence),
                   {**context, **quoted}, cls.specificity if specificity is None else specificity)


def _context_evidence(found: Decisive, where: str) -> tuple[Evidence, ...]:
    """The line a content-free decisive line is read with (``decisive.in_context``), quoted
    before it: the reader sees what was attempted, then that it failed."""
    if not found.context:
        return ()
    own = f":{found.line_no}"
    at = f"{where[:-len(own)]}:{found.context_no}" if where.endswith(own) else where
    return (Evidence(at, clipped(found.context)),)


#: Host components and the journal of their units in the bundle (gpunode.probe.journal).
HOST_JOURNALS = {"kubelet": "journal-kubelet.txt", "container-runtime": "journal-runtime.txt"}
#: The host journals' file names (``cmd/<name>``).
JOURNAL_FILES = frozenset(HOST_JOURNALS.values())


#: Components judged only by their own facts: a GPU is lost when nvidia-smi, NVML, the
#: kernel or DCGM say so, not because another component's message says "GPU is lost"
#: (when those facts are missing, the GPUs stay unknown).
OWN_FACTS_ONLY = frozenset({"gpu-hardware"})


def blamed(catalog: Catalog, kb: KnowledgeBase, component: str, finding: Finding,
           named: Callable[[str], str | None] | None = None) -> Finding | None:
    """The decisive finding moved to the component its line names (the toolkit's hook
    failing while the device plugin's container is created), or None when the line names
    no other: an error raised while creating a container belongs to the layer it names,
    not to the pod that suffered it. A named component above ``component`` explains its
    failure (``EXPLAINS``). A catalogued cause of the named component whose signature
    the line matches is the cause; else the line's class stays. ``named`` reads the line
    with the node's facts too (``gpunode.checks.named``); the catalog alone otherwise."""
    line = finding.context.get(LINE, "")
    target = (named or catalog.named_in)(line)
    if target is None or target == component or target in OWN_FACTS_ONLY:
        return None
    context = {**finding.context, VERB: f"fails starting {component}", "standalone": "true",
               "seen_in": component}
    if target not in catalog.dependencies(component):
        context[EXPLAINS] = component  # a higher layer (the toolkit's hook) breaks a lower pod
    return as_catalogued(kb, msgspec.structs.replace(finding, component=target, context=context))


def as_catalogued(kb: KnowledgeBase, finding: Finding, *whole: str) -> Finding:
    """``finding`` (a class) as its component's catalogued cause when the quoted line
    matches one of that cause's message signatures; unchanged otherwise. The catalogued
    cause ranks at least as the class did (it replaces a state the class outranked).
    ``whole``: the line as read, before the finding clipped its middle for the report (a
    runtime's journal line relays a hook's whole error chain, and the words a signature
    needs may fall in the part clipped), tried first."""
    quoted = (*whole, *(finding.context.get(key, "") for key in (MESSAGE, LINE)))  # unescaped first
    cause = next((c for text in quoted if (c := kb.catalogued_in(finding.component, text))), None)
    if cause is None:
        cause = _tabled(kb, finding.component, quoted)
    if cause is None:
        return finding
    rank = max(cause.specificity, finding.specificity)
    return msgspec.structs.replace(finding, cause=cause.code, specificity=rank)


def _tabled(kb: KnowledgeBase, component: str, quoted: Sequence[str]) -> Cause | None:
    """The cause the job-error table gives a quoted line where it names ``component``
    (CUDA's 'CUDA driver version is insufficient for CUDA runtime version' is the driver's
    cuda_driver_too_old wherever it is printed: a validator's init container as a job): a
    library's documented error says more than the class its words fall in. A table entry
    that gives only a class (NVML's Insufficient Permissions: error_device) does not replace
    the class the line's own words fall in."""
    code = next((c for text in quoted if text and (c := job_cause(text, component))), None)
    cause = kb.by_code.get(code) if code is not None else None
    return cause if cause is not None and cause.component != "*" else None  # a class: the line's own stays


#: A certificate one end of a TLS connection does not trust: the peer's alert, as a Go server
#: logs it for every caller that rejects the certificate it serves ('http: TLS handshake error
#: from <addr>: remote error: tls: bad certificate', a webhook serving a certificate replaced
#: since), or the client's own verification (Go's 'tls: failed to verify certificate: x509:
#: ...', the 'x509: certificate ...' it wraps). The same certificate is refused on every retry,
#: for a controller (``_PERSISTENT``) as for any running component (``_UNREACHABLE_FOR_GOOD``).
_CERT_REFUSED = (r"\bremote error: tls: (?:bad certificate|unknown certificate(?: authority)?|"
                 r"(?:certificate )?(?:expired|revoked)(?: certificate)?|certificate unknown)\b|"
                 r"\btls: failed to verify certificate\b|"
                 r"\bx509: (?:certificate |cannot validate certificate\b)")


#: A controller's errors that do not heal by retrying: an RBAC rule or an API (a CRD) it
#: lacks stays missing until someone acts, so its every reconcile fails. An object that
#: is not found (a node deleted since) is not one of them.
_PERSISTENT = lazy_compile(
    r"(?i:\bforbidden\b|\bunauthori[sz]ed\b|permission denied|could not find the requested resource|"
    r"\bcannot (?:get|list|watch|create|update|patch|delete) resource\b|"
    r"the server doesn.t have a resource type|"
    # the API server's validation of an object the controller writes: it refuses the same
    # object on every retry ('NVIDIADriver.nvidia.com "x" is invalid: state: Unsupported value')
    r"\bis invalid: [\w.\[\]]+: (?:Unsupported|Required|Invalid|Duplicate) value|"
    # a certificate one end of a TLS connection does not trust (_CERT_REFUSED)
    rf"{_CERT_REFUSED})")
#: A line that begins a log record (JSON, a timestamp, a klog, logrus or logfmt header): one
#: that does not is the rest of the record before it, wrapped, and says nothing of its own.
_RECORD = lazy_compile(r"^\s*(?:\{\"|\d{4}-\d\d-\d\d|[A-Z][a-z]{2} [ \d]\d |[IWEF]\d{4} |time=|level=|"
                       r"(?:INFO|WARN|ERRO|FATA|DEBU)\[)")
#: A controller's last lines within which such an error must stand (nothing after it).
_RECENT_LINES = 3
#: Errors that heal by retrying, ending a controller's log or not: an object deleted since
#: (the API's NotFound names the resource in the plural: 'nodes "x" not found', unlike a
#: program's 'device "issm" not found'), a write that lost a race (a conflict); and a kind
#: the cluster does not serve ('no matches for kind'), which operators meet for the optional
#: APIs they watch (NFD's rules before NFD is installed): a removed Kubernetes API is a
#: catalogued cause of its own.
_TRANSIENT = lazy_compile(
    r'(?i:\b[a-z][\w-]*s(?:\.[\w.-]+)? \\?"[^"\\]{1,253}\\?" not found\b|the object has been modified|'
    r"Operation cannot be fulfilled|no matches for kind)")


def controller_finding(kb: KnowledgeBase, component: str, logs: Iterable[LogFile]) -> Finding | None:
    """A running controller (the operators, nfd-master) whose current log ends in an
    error of a persistent class (the API server's refusal, in its own words): degraded,
    with that line as its cause. Its pod runs and is ready, so no state shows; a
    transient error (a timeout, a conflict) is not read this way."""
    for log in logs:
        if log.previous:
            continue
        tail = [line for line in log.lines[-_RECENT_LINES * 4:] if line.strip()][-_RECENT_LINES:]
        found = decisive_line(tail, kb.class_of)
        after = [line for line in tail[found.line_no:] if _RECORD.match(line)] if found else []
        if found is None or not all(map(severity, after)):
            continue  # no error, or a line after it that is no error (it recovered)
        ends = found.line_no if _traced_crash(found, tail) else len(tail)
        if not _PERSISTENT.search(found.message) and not _lasting(kb, component, found, ends):
            continue  # the API's own words for a refusal are explicit at any log level
        line_no = len(log.lines) - (len(tail) - found.line_no)
        where = f"{log.path}:{line_no}"
        return as_catalogued(kb, line_finding(
            kb, component, Status.DEGRADED, found, where, verb="keeps failing",
            namespace=log.namespace, pod=log.pod, container=log.container, standalone="true"))
    return None


#: A Go runtime panic or fatal error: what follows it is its trace, not more log records.
_GO_CRASH = lazy_compile(r"^(?:panic: |fatal error: )")


def _traced_crash(found: Decisive, tail: Sequence[str]) -> bool:
    """The line is a Go panic and every line after it is its trace (frames, no new log
    record): the panic is the controller's last word, as if it ended the log (a reconciler's
    panic that controller-runtime recovers comes back on every reconcile)."""
    return bool(_GO_CRASH.match(found.message)) and not any(map(_RECORD.match, tail[found.line_no:]))


def _running_logs(ctx: NodeContext, component: str) -> Iterator[LogFile]:
    """The current logs of the component's running main containers on this node (an init
    container's log is what it said before it completed)."""
    for sp in ctx.stack_pods(component):
        running = {cs.name for cs in sp.pod.status.container_statuses
                   if cs.state.running is not None}
        for log in ctx.logs_of(sp.pod):
            if not log.previous and log.container in running:
                yield log


#: What a running component may log for ever about the host without failing its job: an
#: attribute of one of the host's network interfaces it cannot read (the kernel answers
#: EINVAL for the speed of a virtual or down link; RDMA ports are under /class/infiniband;
#: its PCI function's SR-IOV settings, device/sriov_*, are what an SR-IOV plugin configures),
#: or a device class directory that is absent because the host has no such devices; and
#: the node exporter's collectors of host subsystems the stack does not own (hwmon, thermal
#: zones, NFS, …), which it names in its "collector failed" lines or in the logfmt key of its
#: per-collector logger ("collector=diskstats msg=\"Failed to open directory, disabling udev
#: device properties\"": one item of one collector disabled, the rest still served). The
#: textfile collector is none of those: it reads the directory the exporter's own flag names
#: (--collector.textfile.directory), where GPU jobs and scripts drop their .prom files, so its
#: failure is the exporter's own configuration or input, like the RDMA and GPU collectors.
#: And a GPU's fan that NVML will not read: it reads a fan speed only "for all discrete products
#: with dedicated fans" (nvmlDeviceGetFanSpeed, NVML API reference), so a passively cooled board
#: (a Tesla T4, cooled by the server's fans) answers Not Supported on every scrape while every
#: other metric is served ("FanSpeed() error: nvml: Not Supported",
#: mindprince/nvidia_gpu_prometheus_exporter#16, #21): a part the board does not have.
#: And a file of one process under /proc that the kernel no longer serves because the process
#: exited between the agent's listing (NVML's compute processes, a scan of /proc) and its read:
#: ESRCH ("no such process"), or ENOENT for a process other than init (leptonai/gpud#1238, the
#: accelerator-nvidia-processes check turned Unhealthy by "open /proc/<pid>/environ: no such
#: process" of a short-lived CUDA process, fixed in PR #1239 by skipping the vanished PID as
#: ENOENT already was; util-linux/util-linux#3087 for lsns): a race with a job, not a failure.
_OTHER_COLLECTOR = r"(?!infiniband\b|textfile\b|nvidia|gpu|rdma)"
_NOT_THE_STACKS = lazy_compile(
    r"sys/class/net/(?![^/\s]+/device/sriov_)|\bopen \S*sys/class/[\w-]+\\?\"?: no such file or directory|"
    r"\bopen (?:/host)?/proc/(?:\d+/[\w/.-]{1,60}\\?\"?: no such process|(?!1/)\d+/[\w/.-]{1,60}\\?\"?: "
    r"no such file or directory)\b|"
    r"(?i:\bfan ?speed\b[^\n]{0,80}?\bnot ?supported\b)|"
    rf"collector failed\\?\"? .{{0,20}}\bname={_OTHER_COLLECTOR}\w|"
    rf"\b{_OTHER_COLLECTOR}\w+ collector failed after|"
    rf"\bcollector={_OTHER_COLLECTOR}\w")

#: The host refusing the component access to a path it reads (EACCES: SELinux, an SCC
#: without hostPath access): unlike a subsystem the host lacks, the refusal lasts until the
#: pod's security context changes, so such a collector's failure is the component's own
#: (the filesystem collector's "open /host/proc/1/mounts: permission denied" under SELinux
#: enforcing, poseidon/typhoon#1198, openshift/cluster-monitoring-operator's node-exporter).
_ACCESS_REFUSED = lazy_compile(r"(?i:: permission denied\b)")


def running_finding(kb: KnowledgeBase, component: str, logs: Iterable[LogFile],
                    names: Callable[[str], str | None] | None = None,
                    answering: re.Pattern[str] | None = None,
                    *, deleting: Container[tuple[str, str]] = ()) -> Finding | None:
    """A running node component whose current log ends in an error it did not recover
    from: its last line is an error that does not heal by retrying (as a controller's,
    ``_lasting``), so it runs without doing its job; degraded with that line. Hints to the
    reader printed after the error (``is_advice``) are not a later word: the device plugin
    that idles after "Failed to initialize NVML" and its "You can check the prerequisites
    at: ..." lines (NVIDIA/k8s-device-plugin#170). ``names``: the layer a line names on the
    node; a last error that names a lower layer in its words is kept though the knowledge
    base catalogues it there (``_names_below``), for ``blamed`` to move it to that layer.
    ``answering``: the peers the node's facts show answering (``_answering_peers``); a
    connection to one of them that fails is no peer down for now (``_to_answering``).
    ``deleting``: the (namespace, pod) of the component's pods being deleted, whose last
    error in a step of their own shutdown is not retried (``_shutdown_failed``)."""
    for log in logs:
        lines = log.lines
        found, last = _ended_on(kb, lines, _last_word(lines))
        if found is None and last is not None:
            found = _wrapped_error(kb, lines, last)
        if found is None and last is not None:
            found = _own_catalogued(kb, component, lines[last])
        if found is None and (again := _recurring(kb, lines)) is not None:
            found, last = again
        refused = (_refused_watch(kb, lines) or _start_failed(lines) or _part_exited(kb, lines)
                   if found is None else None)
        if refused is not None:
            found, last = refused
        fell = _fell_back(lines, dropped=bool(log.pod)) if found is None else None
        withdrawn = _withdrew(kb, lines) if found is None and fell is None else None
        if withdrawn is not None:
            found, last = withdrawn
            return as_catalogued(kb, line_finding(
                kb, component, Status.DEGRADED, found, f"{log.path}:{last + 1}", verb="withdraws a device",
                line_class=_WITHDRAWN_CLASS, namespace=log.namespace, pod=log.pod, container=log.container,
                standalone="true"))
        if fell is not None:
            found, last = fell
        elif found is None or (_NOT_THE_STACKS.search(found.line) and not _ACCESS_REFUSED.search(found.line)):
            continue
        elif (refused is None and not _lasting(kb, component, found, 1)
              and kb.catalogued_in(component, found.line) is None
              and not _names_below(kb, component, found, names)
              and not _to_answering(kb, found, lines, last, answering)
              and not _shutdown_failed(found, (log.namespace, log.pod) in deleting)):
            continue  # a failure that heals by retrying, unless the catalog knows it as this one's
        where = f"{log.path}:{last + 1}" if last is not None else log.path
        return as_catalogued(kb, line_finding(
            kb, component, Status.DEGRADED, found, where, verb="keeps running after",
            namespace=log.namespace, pod=log.pod, container=log.container, standalone="true"))
    return None


#: A frame of the Go stack trace a structured logger prints after an error record (zap's
#: ``stacktrace``: the function, then its file and line indented under it), as a report or a
#: container log keeps it: "go.opentelemetry.io/collector/receiver/scraperhelper.ScrapeFunc.Scrape",
#: "<TAB>go.opentelemetry.io/collector/receiver@v0.95.0/scraperhelper/scraper.go:20".
_TRACE_FRAME = lazy_compile(r"^(?:[\w.@-]+/)+[\w.@-]+\.(?:\(\*?\w+\)\.)?[\w.]+(?:\([^)]*\))?$|"
                            r"^\s+\S+\.go:\d+(?: \+0x[0-9a-f]+)?$")


#: A list or watch of the Kubernetes API refused for authorization, in any agent's words:
#: client-go's "failed to list *v1.Namespace: namespaces is forbidden: ...", kube-rs's "watch
#: list error with 403: Api(...)", Vector's "Watcher error. error=BadStatus { status: 403 }",
#: fluentd's kubeclient "thread exited ... title=:watch_pods ... HTTP status code 403, Forbidden".
_WATCH_WORD = r"\b(?:watch(?:er|ing|es)?|list(?:ing|s)?|reflector|informer)\b|:watch_"
_WATCH_REFUSED = lazy_compile(rf"(?i:(?:{_WATCH_WORD}).{{0,400}}?(?:\b403\b|\bforbidden\b)|"
                              rf"(?:\b403\b|\bforbidden\b).{{0,400}}?(?:{_WATCH_WORD}))")
#: A cache filled after the refusal: the access was granted since (client-go's "Caches are
#: synced", "Caches populated"), so the watch runs.
_WATCH_SYNCED = lazy_compile(r"(?i:\bcaches? (?:are |is |have been )?(?:synced|populated)\b)")


def _refused_watch(kb: KnowledgeBase, lines: Sequence[str]) -> tuple[Decisive, int] | None:
    """The last list or watch of the API that the API server refused (403, forbidden) with
    no synced cache after it: authorization does not heal by retrying, so the agent runs
    without the objects it watches until its role is granted them, whether it retries at
    every interval or gave the watch up and logs progress after (Vector 0.16's namespace
    reflector, vectordotdev/vector#8999). A connection that failed stays the retry rules'."""
    for index in range(len(lines) - 1, max(-1, len(lines) - _RECUR_TAIL - 1), -1):
        line = lines[index]
        if _WATCH_SYNCED.search(line):
            return None
        if ("403" in line or "orbidden" in line) and _WATCH_REFUSED.search(line) and severity(line):
            found = _last_error(kb, line) or lenient_line([line])
            if found is not None and kb.class_of(found.message) == "error_permission_denied":
                return Decisive(index + 1, found.line, found.strength), index
    return None


#: A server, engine or daemon of the program's own that it could not start ("Failed to start
#: host engine server": the DCGM exporter's nv-hostengine, NVIDIA/gpu-monitoring-tools#54,
#: "failed to start metrics server"), and the words of a later start or of one serving.
_START_FAILED = lazy_compile(r"(?i:\b(?:failed|unable|could not|couldn.t|cannot) (?:to )?start(?:ing)? "
                             r"(?:the |its |an? )?(?:[\w-]+ ){0,3}(?:server|engine|daemon|listener)\b)")
_STARTED = lazy_compile(r"(?i:\b(?:started|starting|restarting|listening|serving|is running|now running|"
                        r"is up|ready to accept)\b)")


def _start_failed(lines: Sequence[str]) -> tuple[Decisive, int] | None:
    """The last line of a running component's log that says a server or engine of its own
    failed to start, with no start tried or serving said after it: the program runs on
    without it (a metrics loop with no host engine behind it) rather than retrying, so the
    failure does not heal by itself. A start tried again, or a server serving, after it
    is a retry that the later lines judge."""
    for index in range(len(lines) - 1, max(-1, len(lines) - _RECUR_TAIL - 1), -1):
        line = lines[index]
        if _STARTED.search(line) and not _START_FAILED.search(line):
            return None
        if "start" in line.lower() and _START_FAILED.search(line) and severity(line):
            found = lenient_line([line])
            return (Decisive(index + 1, found.line, found.strength), index) if found is not None else None
    return None


#: A part of the program's own (a task, loop, worker, reflector or watcher) that ended on an
#: error: "Reflector process exited with an error. error=streaming error" (Vector's
#: kubernetes_logs source, vectordotdev/vector#7401, which then stops shipping logs).
_PART_EXITED = lazy_compile(
    r"(?i:\b(?:process|task|worker|loop|reflector|watcher|informer|thread|goroutine)\b.{0,40}?"
    r"\b(?:exited|terminated|stopped|died|ended)\b.{0,20}?\b(?:with|due to|because of|on)\b "
    r"(?:an? )?(?:error|failure)\b)")
#: Lines before the exit within which the error that ended the part stands.
_EXIT_REASON_LINES = 3


def _part_exited(kb: KnowledgeBase, lines: Sequence[str]) -> tuple[Decisive, int] | None:
    """The last line of a running component's log that says a part of its own ended on an
    error, with no start said after it: the program runs on without that part instead of
    retrying, so the failure does not heal by itself. The error just before it that falls in
    a class says why (the watch that broke); else the exit line itself. A part started again
    after it is a retry that the later lines judge."""
    for index in range(len(lines) - 1, max(-1, len(lines) - _RECUR_TAIL - 1), -1):
        line = lines[index]
        if _STARTED.search(line) or _WATCH_SYNCED.search(line):
            return None  # started again, or a watch whose cache synced since: the part works
        if _PART_EXITED.search(line) and severity(line):
            for before in range(index - 1, max(-1, index - _EXIT_REASON_LINES - 1), -1):
                reason = _last_error(kb, lines[before]) if severity(lines[before]) else None
                if reason is not None and kb.class_of(reason.message) is not None:
                    return Decisive(before + 1, reason.line, reason.strength), before
            found = lenient_line([line])
            return (Decisive(index + 1, found.line, found.strength), index) if found is not None else None
    return None


def _last_word(lines: Sequence[str]) -> int | None:
    """The index of a running component's last word: its last line that is neither a hint to
    the reader (``is_advice``) nor a frame of the stack trace its logger printed after an
    error record (``_TRACE_FRAME``: the trace belongs to the record above it, open-telemetry/
    opentelemetry-helm-charts#1069's kubeletstats "call to /pods endpoint failed" followed by
    its scraper's frames), nor only the closing quotes and brackets of a record whose quoted
    value spans lines (a JSON error list holding a Python traceback, whose exception line
    before them is the word: DataDog/integrations-extras#612's '"}]')."""
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        if (line.strip() and not is_advice(line) and not _TRACE_FRAME.match(line)
                and not _CLOSERS_ONLY.match(line)):
            return index
    return None


#: A line of closing quotes and brackets alone: the end of a record's quoted value or list.
_CLOSERS_ONLY = lazy_compile(r"^\s*[\"'\]})]+[,;]?\s*$")


#: Words with which a program says a step of its own shutdown failed: "Failed to remove node
#: from ComputeDomain during shutdown: ...", "error during cleanup", "failed to ... on exit".
_SHUTDOWN_STEP = lazy_compile(
    r"(?i:\b(?:during|on|at|while|in) (?:the )?(?:graceful )?(?:shutdown|shutting down|exit(?:ing)?|"
    r"termination|terminating|teardown|tearing down|clean ?up|cleaning up|stop(?:ping)?)\b)")


def _shutdown_failed(found: Decisive, deleting: bool) -> bool:
    """A pod being deleted whose last error is a step of its own shutdown that failed (the
    node it should take out of a shared object, the state it should undo): the process is
    ending and does not retry, so even a conflict a running loop would retry next time is its
    last word, and what it was to undo stays behind. The same line from a pod not being
    deleted is a loop that tries again."""
    return deleting and _SHUTDOWN_STEP.search(found.message) is not None


def _being_deleted(ctx: NodeContext, component: str) -> frozenset[tuple[str, str]]:
    """The (namespace, pod) of the component's pods on the node that are being deleted."""
    return frozenset((sp.pod.metadata.namespace, sp.pod.metadata.name)
                     for sp in ctx.stack_pods(component) if sp.pod.metadata.deletion_timestamp)


#: The peers every node component may call that the node's own facts show answering: the
#: kubelet (its port 10250) while it posts the node Ready, and the API server (the
#: kubernetes Service's name, its port 6443), which serves that status and the bundle itself.
_KUBELET_PEER = r"\bkubelet\b|:10250\b"
_APISERVER_PEER = r"\b(?:kube-)?api ?server\b|\bkubernetes\.default\b|:6443\b"
#: A list or watch of Kubernetes objects, which only the API server serves: kube-rs's watcher
#: errors (Debug "InitialListFailed(Service(Closed))", Display "failed to perform initial
#: object list: ServiceError: ...") and client-go's reflector ("failed to list *v1.Pod: ...").
_APISERVER_CALL = (r"\b(?:InitialListFailed|WatchStartFailed|WatchFailed)\(|"
                   r"\bfailed to (?:perform initial object list|start watching object)\b|"
                   r"\bfailed to (?:list|watch) \*?[\w.]+: ")


@cache
def answering_peers(*, kubelet_ready: bool) -> re.Pattern[str]:
    """The words that name a peer the node's facts show answering: the API server always
    (the node's objects were read from it), the kubelet where it posts the node Ready. Two
    patterns in all, built once (every component of every node asks)."""
    peers = [_APISERVER_PEER, _APISERVER_CALL, *([_KUBELET_PEER] if kubelet_ready else [])]
    return re.compile(f"(?i:{'|'.join(peers)})")


def _answering_peers(ctx: NodeContext) -> re.Pattern[str]:
    """``answering_peers`` on this node (read once per node: every component asks)."""
    known = ctx.memo.get(_ANSWERING)
    if known is None:
        node = ctx.node
        ready = next((c for c in node.status.conditions if c.type == "Ready"), None) if node else None
        kubelet_ready = ready is not None and ready.status == "True"
        known = ctx.memo[_ANSWERING] = answering_peers(kubelet_ready=kubelet_ready)
    assert isinstance(known, re.Pattern)
    return known


_ANSWERING = "answering_peers"


def _to_answering(kb: KnowledgeBase, found: Decisive, lines: Sequence[str], last: int | None,
                  answering: re.Pattern[str] | None) -> bool:
    """A running component's lasting connection failure: its last error (or the one it repeats
    at every interval) fails to reach a peer that the node's facts show answering, named in
    the line or in the component's own line just before its run of errors ('testing
    connectivity with API server...', then 'upstream connection error'). The peer is up,
    so what fails is this component's way to it (an address, a port, a network namespace
    without the host's loopback) and no retry heals it; a peer the facts do not show up
    may be down for now, and stays transient."""
    if answering is None or last is None or kb.class_of(found.message) != "error_unreachable":
        return False
    if _TRANSIENT.search(found.message):
        return False
    if answering.search(found.line):
        return True
    start = last
    while start > 0 and (severity(lines[start - 1]) or not lines[start - 1].strip()):
        start -= 1  # the run of errors the found one ends
    return start > 0 and answering.search(lines[start - 1]) is not None


def _names_below(kb: KnowledgeBase, component: str, found: Decisive,
                 names: Callable[[str], str | None] | None) -> bool:
    """A running component's last error that names another layer in its own words (NVML's
    "Failed to initialize NVML: Unknown Error" in a device plugin that idles after it, the
    toolkit's device access; "Driver/library version mismatch", the driver's), and that no
    retry heals: the layer it names fails for this component on every try, though the
    knowledge base catalogues the words as that layer's symptom (``_lasting`` leaves those
    to the layer's own checks, which see nothing where its pods run). Not a layer judged by
    its own facts only (the GPUs), nor a connection failing for now."""
    target = names(found.line) if names is not None else None
    if target is None or target == component or target in OWN_FACTS_ONLY:
        return False
    return (not _TRANSIENT.search(found.message) and kb.class_of(found.message) != "error_unreachable"
            and kb.catalogued_elsewhere(component, found.message) is not None)


#: How far back a running component's log is read for an error it repeats at every interval.
_RECUR_TAIL = 30
#: How many times the same error must stand in that tail to be the component's lasting state.
_RECUR_MIN = 3
#: What varies between two logs of the same error: numbers, addresses, times.
_VARIES = lazy_compile(r"\b0x[0-9a-fA-F]+\b|\d+")


def _maybe_error(line: str) -> bool:
    """A cheap test before the general rules, asked of every line of a running component's log
    tail (most hold none of this): a klog ``E``/``F`` header, or the words nearly every error
    line holds somewhere (its level, 'failed', an ``error`` field: "ERRO[0002] ...",
    "level=error", "E0627 ...", "... endpoint failed {"error": ...}")."""
    if line[:1] in ("E", "F") and line[1:5].isdigit():
        return True
    low = line.lower()
    return "err" in low or "fail" in low


def _recurring(kb: KnowledgeBase, lines: Sequence[str]) -> tuple[Decisive, int] | None:
    """The error a running component logs at every interval with other lines between (each
    scrape that fails, then the exporter's own progress line): the same message at least
    ``_RECUR_MIN`` times in the log's tail and again within one interval of its end (no more
    lines after its last time than between two of its times), so it has not healed. A single
    error followed by lines that are no error is a failure that healed; an error that stopped
    recurring long before the end, one that no longer fails. Returns the error's last time."""
    start = max(0, len(lines) - _RECUR_TAIL)
    maybe = [index for index in range(start, len(lines)) if _maybe_error(lines[index])]
    if len(maybe) < _RECUR_MIN:
        return None  # most logs: too few lines that may be errors to hold one that recurs
    times: dict[str, list[int]] = {}
    for index in maybe:
        if severity(lines[index]):
            times.setdefault(_VARIES.sub("#", message_of(lines[index])), []).append(index)
    end = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].strip()), -1)
    for at in sorted(times.values(), key=lambda a: -a[-1]):
        if len(at) < _RECUR_MIN or end - at[-1] > max(b - a for a, b in pairwise(at)):
            continue
        found = _last_error(kb, lines[at[-1]])
        if found is not None:
            return found, at[-1]
    return None


#: A device plugin's words for a device its health check withdrew from the kubelet (NVIDIA's
#: plugin and its forks, HAMi's among them: "... Marking it unhealthy.", "'nvidia.com/gpu' device
#: marked unhealthy: GPU-..."), and for one it gives back ("device marked healthy", "healthy
#: again"): a withdrawn device stays off the node's allocatable until one of those.
_MARKS_UNHEALTHY = lazy_compile(
    r"(?i:\bmarking (?:it|the device|device \S{1,80}) (?:as )?unhealthy|\bdevices? marked (?:as )?unhealthy)")
_MARKS_HEALTHY = lazy_compile(r"(?i:\bmark(?:ing|ed) (?:it |the device |devices? |\S{1,80} )?(?:as )?healthy|"
                              r"\bhealthy again\b)")
#: The class of a withdrawn device, whatever words give the reason: the plugin's health check
#: failed for that device, a device's failure as the plugin sees it.
_WITHDRAWN_CLASS = "error_device"
#: How far before a bare "device marked unhealthy" the plugin's line with the reason may stand.
_REASON_BEFORE = 3


def _withdrew(kb: KnowledgeBase, lines: Sequence[str]) -> tuple[Decisive, int] | None:
    """The last device a running plugin withdrew and did not give back (``_MARKS_UNHEALTHY``
    with no ``_MARKS_HEALTHY`` after it), wherever the line stands: the plugin keeps
    registering and serving the rest, so its last line is progress, yet the device stays
    off the node until the plugin restarts or says it is healthy. Where the last such line
    only names the device, the one just before it that says why is the line. A withdrawal
    for an Xid is the Xid catalog's to judge (an application's Xid is no device failure)."""
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        low = line.lower()
        if "healthy" not in low:
            continue
        if _MARKS_UNHEALTHY.search(line) is None:
            if _MARKS_HEALTHY.search(line) is not None:
                return None  # given back since
            continue
        if reports_xid(line):  # the Xid catalog judges it: an application Xid withdraws nothing
            continue
        at = next((before for before in range(index - 1, max(-1, index - _REASON_BEFORE - 1), -1)
                   if _MARKS_UNHEALTHY.search(lines[before])
                   and kb.class_of(message_of(lines[before])) is not None), index)
        return Decisive(at + 1, lines[at].strip()[:MAX_LINE], 1), at
    return None


#: A JSON object that is a console record's fields, not a record: no level, no message.
_FIELDS_ONLY = lazy_compile(r'^\s*\{"(?!.*"(?:level|lvl|severity|msg|message)"\s*:)')


def _wrapped_error(kb: KnowledgeBase, lines: Sequence[str], last: int) -> Decisive | None:
    """A last line that begins no record (``_RECORD``) is the end of the record before it,
    wrapped: a zap record whose header ('<time> error <caller>'), message and JSON fields
    landed on lines of their own (open-telemetry/opentelemetry-collector-contrib#26481).
    A JSON object with no level or message of its own is such a record's fields. The
    record read whole is the last word."""
    if _RECORD.match(lines[last]) and not _FIELDS_ONLY.match(lines[last]):
        return None
    for start in range(last - 1, max(-1, last - _RECENT_LINES - 1), -1):
        if _RECORD.match(lines[start]):
            return _last_error(kb, " ".join(line.strip() for line in lines[start:last + 1]))
    return None


def _refused_config(ctx: NodeContext, component: str) -> Finding | None:
    """The container runtime whose journal ends refusing its configuration: containerd and
    dockerd do not start on a configuration they cannot load (dockerd: 'unable to configure
    the Docker daemon with file /etc/docker/daemon.json: ...'), and no retry heals it, so the
    runtime is down until the file is fixed, whatever the kubelet last reported. CRI-O's
    'failed to decode container status' is no configuration of its own but the OCI runtime's
    answer it could not read (a runtime wrapper that printed to stdout: checks.named)."""
    journal = HOST_JOURNALS.get(component) if component == "container-runtime" else None
    split = ctx.text_lines("cmd", journal) if journal is not None else None
    if journal is None or split is None:
        return None
    log = LogFile(ctx.obs.path_of("cmd", journal), "", "", "", False, tuple(split[0]))
    found = running_finding(ctx.kb, component, [log])
    if found is None or not _refuses_config(ctx.kb, found):
        return None
    said = found.context.get(LINE, "") or found.context.get(MESSAGE, "")
    return None if _ANSWER_UNREAD.search(said) else found


#: The runtime that could not decode its OCI runtime's answer to a `state` call (CRI-O's
#: internal/oci: 'failed to decode container status for <id>: ...'): the answer's bytes, not
#: a file the runtime was configured with.
_ANSWER_UNREAD = lazy_compile(r"\bfailed to decode container (?:status|state)\b")


_CONFIG_CLASS = "error_config_invalid"


def _refuses_config(kb: KnowledgeBase, found: Finding) -> bool:
    """The runtime's last line refuses its configuration: the line is in the configuration
    class, or it is a class whose reason is more specific but whose words say the
    configuration was refused ('invalid containerd configuration in "<file>": unsupported
    containerd configuration version: expected 3, got 2' is a version mismatch of the file,
    k0sproject/k0s#7689)."""
    if found.cause == _CONFIG_CLASS:
        return True
    message = found.context.get(MESSAGE, "")
    return kb.get(found.cause).component == "*" and any(
        cls.code == _CONFIG_CLASS and regex.search(message) for cls, regex in kb.classes)


#: A program that says it goes on after a failure it did not recover from ("Continue after
#: failing to read checkpoint file. Device allocation info may NOT be up-to-date. Err: ...",
#: the kubelet's device manager): whatever level it logs it at, it runs on without that state.
_WENT_ON = lazy_compile(r"(?i:\bcontinu(?:e|es|ing) after fail(?:ing|ure|ed)\b)")


def _went_on_without(ctx: NodeContext, component: str) -> Finding | None:
    """A host component (the kubelet, the container runtime) whose journal says it went on
    after failing to read what it needs, quoting the error: degraded with that line."""
    journal = HOST_JOURNALS.get(component)
    split = ctx.text_lines("cmd", journal) if journal is not None else None
    if journal is None or split is None:
        return None
    lines = split[0]
    for index in range(len(lines) - 1, -1, -1):
        if _WENT_ON.search(lines[index]) and (found := lenient_line([lines[index]])) is not None:
            where = f"{ctx.obs.path_of('cmd', journal)}:{index + 1}"
            return as_catalogued(ctx.kb, line_finding(ctx.kb, component, Status.DEGRADED, found, where,
                                                      verb="goes on after", standalone="true"))
    return None


#: How many error lines just before a running component's last one may hold its reason.
_REASON_RUN = 8


def _ended_on(kb: KnowledgeBase, lines: Sequence[str],
              last: int | None) -> tuple[Decisive | None, int | None]:
    """A running component's last word as an error (``_last_error``), read through to the
    reason logged just before it (``_reason_before``); with its index in ``lines``."""
    if last is None:
        return None, None
    found = _last_error(kb, lines[last])
    reason = _reason_before(kb, lines, last) if found is not None else None
    return reason if reason is not None else (found, last)


def _reason_before(kb: KnowledgeBase, lines: Sequence[str], last: int) -> tuple[Decisive, int] | None:
    """The reason a running component's last error falls in no class, where the unbroken run of
    error lines that ends with it holds one that does: a program logs the failed call (the errno
    and its words) and then what it could not do ("[error] [plugins/in_tail/tail_fs.c:168
    errno=24] Too many open files", then "[error] Failed initialize input tail.2":
    fluent/fluent-bit#1777, rancher/rke2#9162, fluent/fluent-bit-docker-image#41). Returns the
    line (numbered as alone, as ``_last_error`` gives it) and its index in ``lines``; None
    where the last one has a class or no line before it says more."""
    if kb.class_of(message_of(lines[last])) is not None:
        return None
    start = last
    while start > 0 and last - start < _REASON_RUN and severity(lines[start - 1].strip()) > 0:
        start -= 1
    if start == last:
        return None
    found = decisive_line(lines[start:last + 1], kb.class_of)
    if found is None or start + found.line_no - 1 == last:
        return _unleveled_reason(kb, lines, start, last)
    at = start + found.line_no - 1
    if kb.class_of(message_of(found.line)) is None:  # a step that failed, not why
        return _unleveled_reason(kb, lines, start, at) or (Decisive(1, found.line, found.strength), at)
    return Decisive(1, found.line, found.strength), at  # read as that line alone, as _last_error's


def _unleveled_reason(kb: KnowledgeBase, lines: Sequence[str], start: int,
                      last: int) -> tuple[Decisive, int] | None:
    """The last line of the run before ``last`` whose words fall in a class, where the run's
    leveled lines fall in none: a program that runs another logs the failed run at its own
    level ("python.d ERROR: nvidia_smi : failed to invoke 'nvidia-smi' binary") after the
    lines the other one wrote with none, which say why (musl's loader: "Error relocating
    /usr/bin/nvidia-smi: __strdup: symbol not found", netdata/netdata-glibc#6)."""
    for at in range(last - 1, start - 1, -1):
        line = lines[at].strip()
        if kb.class_of(message_of(line)) is not None:
            return Decisive(1, line[:MAX_LINE], severity(line)), at
    return None


def _last_error(kb: KnowledgeBase, line: str) -> Decisive | None:
    """A running component's last line as an error: one that reads as an error, or the API
    server's refusal in its own words though the component falls back ("configmaps is
    forbidden ..., falling back to the default metrics"): it stays refused until someone
    grants the access, so the component runs without what it was configured to do."""
    found = decisive_line([line], kb.class_of)
    if found is None and _PERSISTENT.search(line):
        found = lenient_line([line])
    return found


#: A program that gives up what it was configured to use for this run and goes on with a
#: default ("..., falling back to metric file /etc/dcgm-exporter/default-counters.csv").
_FALLS_BACK = lazy_compile(r"(?i:\bfall(?:ing|s)? back to\b)")
#: A program that drops one item of its output because its value is invalid and goes on
#: without it (node-feature-discovery: "Ignoring invalid feature value kernel-version.full=
#: 4.9.140-l4t-r32.3.1+g47e7e1cb0b49: [a valid label must be ...]", "ignoring invalid feature
#: name ..."): the item never reaches its consumers, and the same input drops it every run.
_DROPS_INVALID = lazy_compile(r"(?i:\b(?:ignor|skipp|discard|dropp)(?:ing|ed) (?:an? )?invalid\b)")


def _went_on(line: str, *, dropped: bool) -> bool:
    """The line falls back to a default (``_FALLS_BACK``) or, where ``dropped``, drops an
    invalid item (``_DROPS_INVALID``). Every line of a running component's log is asked, and
    nearly none holds the words: a lowercase literal test comes before each pattern."""
    lower = line.lower()
    if "back to" in lower and _FALLS_BACK.search(line):
        return True
    return dropped and "invalid" in lower and _DROPS_INVALID.search(line) is not None


def _fell_back(lines: Sequence[str], *, dropped: bool = False) -> tuple[Decisive, int] | None:
    """The last line of a running component's current log in which an error made it fall
    back to a default (the DCGM exporter's metrics ConfigMap it could not read: an i/o
    timeout, a refusal), wherever the line stands: it does not try again in this run, so
    it runs on without its configuration; a fallback with no error ("No configmap data
    specified, falling back ...") is its configuration. ``dropped``: a pod's log, where a
    line that drops an invalid item (``_DROPS_INVALID``) counts too."""
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        went_on = _went_on(line, dropped=dropped)
        if went_on and (found := lenient_line([line])) is not None:
            return found, index
    return None


def _own_catalogued(kb: KnowledgeBase, component: str, line: str) -> Decisive | None:
    """A running component's last line that is one of its own catalogued failures whatever
    level it was logged at: an NFD worker that warns it cannot reach nfd-master
    ("addrConn.createTransport failed ... Reconnecting...") publishes no label while it
    keeps retrying, and nothing after it says it got through."""
    if reports_xid(line):  # the Xid catalog judges it: an application Xid is no failure
        return None
    cause = kb.catalogued_in(component, line)
    if cause is None or not cause.is_problem:
        return None
    return Decisive(1, line.strip()[:MAX_LINE], 1)


#: A peer that answers, with a verdict no retry changes: a certificate one end refuses
#: (``_CERT_REFUSED``: the client's own verification, or the server's log of the client's
#: alert), or the resolver's answer that the name does not exist
#: ('lookup <name> on <dns>:53: no such host', NXDOMAIN: unlike an i/o timeout or 'server
#: misbehaving', the DNS server did answer). The same address, certificate and name are
#: asked again at every attempt, so the same error comes back until someone changes them.
_UNREACHABLE_FOR_GOOD = lazy_compile(rf"{_CERT_REFUSED}|\blookup \S+ on \S+: no such host\b")


def _lasting(kb: KnowledgeBase, component: str, found: Decisive, lines: int) -> bool:
    """An error that ends the controller's log (its last line) and does not heal by
    retrying: not an object deleted since or a conflict, not a connection that failed
    for now (a timeout, a refusal: the unreachable class, unless the peer's answer is a
    verdict, ``_UNREACHABLE_FOR_GOOD``); and not a symptom the knowledge base puts on
    another component."""
    return (found.line_no == lines and not _TRANSIENT.search(found.message)
            and (kb.class_of(found.message) != "error_unreachable"
                 or _UNREACHABLE_FOR_GOOD.search(found.message) is not None)
            and kb.catalogued_elsewhere(component, found.message) is None)


def workload_findings(ctx: NodeContext) -> Iterator[Finding]:
    """GPU workloads on the node that cannot start or keep failing, blaming the component
    their own error names (``named_by``): "nvidia-container-cli: …" in a workload's events
    is the toolkit's failure, "driver error: timed out" the driver's, an admission error
    the device plugin's, "Failed to initialize NVML: Unknown Error" in a container's
    last words the toolkit's device access. A workload whose error names no stack
    component accuses none."""
    serving: NodeServing | None = None
    for pod in ctx.facts.troubled_workloads_by_node.get(ctx.name, ()):
        events = ctx.events_for_pod(pod)
        meta = pod.metadata
        serving = serving or NodeServing.of(ctx, host_driver(ctx))
        for text in pod_texts(pod, (), events, ""):
            found = decisive_line(text.lines, ctx.kb.class_of)
            target = (workload_names(ctx.facts.catalog, text, found.line, pod, serving)
                      if found is not None else None)
            if found is None or target is None or target in OWN_FACTS_ONLY:
                continue
            verb = f"fails starting GPU workload {meta.namespace}/{meta.name}"
            yield cli_view_of_driver(ctx, as_catalogued(ctx.kb, line_finding(
                ctx.kb, target, Status.FAILED, found, text.where, verb=verb,
                standalone="true", namespace=meta.namespace, pod=meta.name), found.line), found.line)
            break


#: Reasons the kubelet gives a pod it refused at admission because its own device manager
#: or topology manager said no (k8s.io/kubernetes pkg/kubelet/cm: UnexpectedAdmissionError,
#: TopologyAffinityError): the refusal is the kubelet's unless its words name another layer
#: (a device plugin's rpc error, an NVML error).
KUBELET_ADMISSION = frozenset({"UnexpectedAdmissionError", "TopologyAffinityError"})


#: The NVIDIA runtime changes only an OCI ``create`` (it adds its hook or CDI devices to the
#: spec) and hands every other command to runc as it came: its failure to kill, delete,
#: pause or resume a container is runc's, relayed; containerd's go-runc names the binary it
#: ran ("… after kill: /usr/bin/nvidia-container-runtime did not terminate successfully: exit
#: status 1: unable to signal init: permission denied", NVIDIA/nvidia-container-toolkit#796).
_RELAYED = lazy_compile(r"(?i:\b(?:kill|delete|pause|resume|signal)\b[^:]{0,40}:\s*\S*"
                        r"nvidia-container-runtime(?:\.\w+)? did not terminate successfully)")


def workload_names(catalog: Catalog, text: Text, line: str, pod: Pod | None = None,
                   serving: NodeServing | None = None) -> str | None:
    """The stack component a GPU workload's error line names: the lowest layer its words
    name (the container runtime for what the NVIDIA runtime only relays); the owner of the
    operation that failed where it is one (the DRA plugin's prepare, the Allocate of the
    plugin that serves what the pod asked for, ``gpunode.checks.admission``), else the
    kubelet when its own admission managers refused the pod. ``serving``: the node's
    facts, where known."""
    running = serving.running if serving is not None else ()
    hook = plugin_spec_owner(catalog, running, line)
    hook = hook or sharing_spec_owner(catalog, running, line)
    hook = hook or spec_device_owner(catalog, running, serving is not None and serving.host_driver, line)
    hook = hook or hook_layer(catalog.named_in, line)  # a failed OCI hook: the layer its own words name
    if hook is not None:
        return hook
    target = catalog.named_in(line) or job_names(line)
    if target == "container-toolkit" and _RELAYED.search(line):
        return "container-runtime"
    if dra_prepare(text.reason, line) or (target is None and claimed_device_refused(line, pod)):
        return owned(catalog, DRA_PLUGIN, line)
    if text.reason in KUBELET_ADMISSION or text.reason.startswith(_SHORT_OF_REASON):
        return admission_names(catalog, line, target, pod, serving)
    if target is None and nvidia_tool_absent(line):
        target = _HOOK_PROGRAMS  # the driver's program NVIDIA's runtime should have mounted
    if target is None and spec_errno_dropped(line, pod):
        target = _HOOK_PROGRAMS  # the seccomp profile NVIDIA's runtime rewrote (checks.seccomp_spec)
    if target is None and (runtime_own_error(line) or image_store_full(line)):
        return "container-runtime"
    if target is None:
        target = kubelet_count(line, pod)  # its device count, also where no admission reason says so
    if target is None and _UNKNOWN_SUBCOMMAND.search(line):
        target = _HOOK_PROGRAMS
    return target


#: A CLI refusing the subcommand it was called with (urfave/cli's "No help topic for '<name>'"),
#: relayed while a GPU container is created: the program that runs then is a hook a CDI spec or
#: the NVIDIA runtime records (nvidia-ctk hook <name>, nvidia-cdi-hook), older than the spec
#: calling it (HAMi's Configure CDI page: 'disable-device-node-modification' needs toolkit 1.18).
_UNKNOWN_SUBCOMMAND = lazy_compile(r"(?i:\bno help topic for '[\w.-]+')")
#: The component whose programs a GPU container's creation runs as hooks.
_HOOK_PROGRAMS = "container-toolkit"


#: The kubelet's admission reason for a resource the node lacked ("OutOfnvidia.com/gpu").
_SHORT_OF_REASON = "OutOf"


def node_texts(ctx: NodeContext, component: str, state: Finding) -> Iterator[Text]:
    """What the component said on this node, most telling first for its state."""
    journal = HOST_JOURNALS.get(component)
    if journal is not None and (split := ctx.text_lines("cmd", journal)) is not None:
        yield Text(ctx.obs.path_of("cmd", journal), split[0], "reports in its journal")
    pods = [sp.pod for sp in ctx.stack_pods(component)]
    container = state.context.get("container", "")
    named = [p for p in pods if p.metadata.name == state.context.get("pod")] or pods
    # An init container waiting for a lower layer logs its wait by design (the validator's
    # loop logs each failed nvidia-smi until the driver is up): only what kept its pod from
    # being created (messages, events) says more.
    waiting = state.cause == "init_blocked"
    for pod in named:
        yield from pod_texts(pod, () if waiting else ctx.logs_of(pod), ctx.events_for_pod(pod), container)
    for pod in pods:  # its other pods here (the validator's): what kept them from starting
        if pod not in named:
            yield from pod_texts(pod, (), ctx.events_for_pod(pod), "")
    for sp in ctx.cluster_side_pods(component):  # nfd-master for the node's nfd
        yield from pod_texts(sp.pod, ctx.logs_of(sp.pod), ctx.events_for_pod(sp.pod), "")
    yield from _kubelet_about_plugins(ctx, component)
    if not pods:
        daemonset = state.context.get("daemonset")
        namespace = state.context.get("namespace", "")
        if daemonset:
            events = ctx.facts.events_for("DaemonSet", namespace, daemonset)
            yield from _event_texts(f"daemonset {namespace}/{daemonset}", events)


#: The kubelet's journal lines about the device plugins it registers and watches (klog's
#: "Got registration request from device plugin", "ListAndWatch ended unexpectedly for
#: device plugin"): the other end of a plugin's registration.
_ABOUT_PLUGINS = lazy_compile(r"(?i:device[ -]?plugin|ListAndWatch)")


def _kubelet_about_plugins(ctx: NodeContext, component: str) -> Iterator[Text]:
    """For a device plugin, what the kubelet said about device plugins: a plugin whose
    resource never reached the node (a host service with no pod and no log in the bundle,
    or one that logged nothing wrong) failed where the kubelet read it."""
    if not component.endswith("device-plugin"):
        return
    journal = HOST_JOURNALS["kubelet"]
    split = ctx.text_lines("cmd", journal)
    if split is None:
        return
    lines = [line for line in split[0] if _ABOUT_PLUGINS.search(line)]
    if lines:
        yield Text(ctx.obs.path_of("cmd", journal), lines, "fails with the kubelet", numbered=False)


def cluster_texts(facts: ClusterFacts, component: str) -> Iterator[Text]:
    """What a cluster component's pods (the operator's controller, nfd-master) said."""
    for sp in facts.cluster_side.get(component, []):
        pod = sp.pod
        logs = facts.cluster_logs.get(sp.key, ())
        events = facts.events_for("Pod", pod.metadata.namespace, pod.metadata.name)
        yield from pod_texts(pod, logs, events, "")


def pod_texts(pod: Pod, logs: Sequence[LogFile], events: Sequence[Event], container: str) -> Iterator[Text]:
    """One pod's texts, most telling first: the container that stopped (previous log, its
    terminated message), init containers that failed, warning events, then current logs."""
    meta = pod.metadata
    init_names = {cs.name for cs in pod.status.init_container_statuses}
    by_container: dict[tuple[str, bool], LogFile] = {(log.container, log.previous): log for log in logs}
    statuses = [*pod.status.init_container_statuses, *pod.status.container_statuses]
    stopped = [cs for cs in statuses if _stopped(cs)]
    stopped.sort(key=lambda cs: cs.name != container)  # the container the state names first
    yield from _pod_message(pod)
    for cs in statuses:
        waiting = cs.state.waiting
        if waiting is not None and waiting.message and waiting.reason not in _PLAIN_WAITS:
            yield Text(f"pod {meta.namespace}/{meta.name} status[{cs.name}].waiting.message",
                       [_one_line(waiting.message)], "cannot start", numbered=False)
    for cs in stopped:
        verb = f"init container {cs.name} fails" if cs.name in init_names else "exits"
        for previous in (True, False):
            log = by_container.get((cs.name, previous))
            if log is not None and (previous or cs.name in init_names or _ended_run(cs)):
                yield Text(log.path, log.lines, verb)
        for state in (cs.state.terminated, cs.last_state.terminated):
            if state is not None and state.message:
                yield Text(f"pod {meta.namespace}/{meta.name} status[{cs.name}].terminated.message",
                           [_one_line(state.message)], verb, numbered=False)
    yield from _event_texts(f"pod {meta.namespace}/{meta.name}", events)
    for log in logs:
        if not log.previous:
            verb = f"init container {log.container} reports" if log.container in init_names else "reports"
            yield Text(log.path, log.lines, verb)
    yield from _signal_exits(f"pod {meta.namespace}/{meta.name}", stopped)


#: The signals whose exit code (128 + the signal) is a native program's crash: SIGILL, SIGABRT,
#: SIGBUS, SIGFPE, SIGSEGV. SIGKILL (137) is the OOM killer's or a kill, SIGTERM (143) a stop.
_CRASH_SIGNALS = {4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 11: "SIGSEGV"}


def _signal_exits(source: str, stopped: Sequence[ContainerStatus]) -> Iterator[Text]:
    """Containers whose process a crash signal killed, each read as that signal in describe's
    wording ("Exit Code: 139", 128 + SIGSEGV): the crash itself where its log says no more
    (Fluent Bit's SIGFPE, fluent/fluent-bit#3905). Last, and never above a logged error."""
    for cs in stopped:
        for term in (cs.state.terminated, cs.last_state.terminated):
            signal = _CRASH_SIGNALS.get(term.exit_code - 128) if term is not None else None
            if term is not None and signal is not None:
                said = f"Exit Code: {term.exit_code} (128 + {term.exit_code - 128}, killed by {signal})"
                yield Text(f"{source} status[{cs.name}].lastState.terminated", [said], "exits",
                           numbered=False, fallback=True)
                break


def _pod_message(pod: Pod) -> Iterator[Text]:
    """The kubelet's word on the whole pod (an admission it refused, an eviction)."""
    status, meta = pod.status, pod.metadata
    if status.message:
        yield Text(f"pod {meta.namespace}/{meta.name} status.message",
                   [_one_line(f"{status.reason}: {status.message}".lstrip(": "))], "cannot start",
                   numbered=False, reason=status.reason)


#: Waiting reasons whose message is the kubelet's own wording, not the failure's ("Back-off
#: pulling image ...": the reason it failed is in the pull's own event).
_PLAIN_WAITS = frozenset({"CrashLoopBackOff", "PodInitializing", "ContainerCreating", "ImagePullBackOff"})
#: The kubelet's event that only names the state it put a container in ("Error: ErrImagePull",
#: "Error: ImagePullBackOff", after the event that says why): a state, not a reason.
_STATE_NAMED = lazy_compile(r"^\s*Error: [A-Z][a-z]+(?:[A-Z][a-z]+)+\s*$")


def _event_texts(source: str, events: Sequence[Event]) -> Iterator[Text]:
    """Warning events, the latest first, each one message."""
    warnings = [ev for ev in events if ev.type == "Warning" and ev.message and ev.reason != "BackOff"
                and not _STATE_NAMED.match(ev.message)]
    for ev in reversed(warnings):
        where = f"event {source} reason={ev.reason} count={ev.count or 1}"
        yield Text(where, _event_lines(ev.message), _event_verb(ev.reason), numbered=False, reason=ev.reason)


#: A klog header ("I0214 23:59:15.058672 3558 driver.c:208] "): the line is one a program
#: logged, with its own level, not a piece of a wrapped message.
_KLOG_HEADER = lazy_compile(r"^\s*[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+\s+[\w.-]+:\d+\]")


def _event_lines(message: str) -> list[str]:
    """An event message as one message (``_one_line``), unless it relays a program's log:
    several lines with their own klog headers, as a hook's stderr carries nvidia-container-cli's
    debug lines before its error ("I0214 ... nvc.c:250] initializing library context", then
    "nvidia-container-cli: initialization error: ..."). Each of those lines is read at its own
    level, so the info lines ahead of the error do not make the whole message an info line."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if sum(1 for line in lines if _KLOG_HEADER.match(line)) < 2:
        return [_one_line(message)]
    return lines


def _one_line(message: str) -> str:
    """A status or event message is one message, even where the runtime wrapped it."""
    return " ".join(message.split())


def _event_verb(reason: str) -> str:
    if reason.startswith("Failed") or reason in ("InspectFailed", "ErrImageNeverPull"):
        return "cannot start"
    return "fails its health check" if reason == "Unhealthy" else f"reports {reason}"


def _ended_run(cs: ContainerStatus) -> bool:
    """Whether the container's current log is that of a run that ended: a terminated one, or
    one waiting in CrashLoopBackOff, whose last run's log the kubelet serves as the current
    one until the next run starts (``kubectl logs`` without --previous)."""
    waiting = cs.state.waiting
    return cs.state.terminated is not None or (waiting is not None and waiting.reason == "CrashLoopBackOff")


def _stopped(cs: ContainerStatus) -> bool:
    """A container that ended with an error, now or the last time."""
    for term in (cs.state.terminated, cs.last_state.terminated):
        if term is not None and (term.exit_code != 0 or term.reason not in ("Completed", "")):
            return True
    waiting = cs.state.waiting
    return waiting is not None and waiting.reason in ("CrashLoopBackOff", "RunContainerError")
