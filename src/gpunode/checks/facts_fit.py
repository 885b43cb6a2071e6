"""A catalogued cause that the node's own record contradicts does not stand on words alone.

Some causes are facts of the node as much as words: nouveau_loaded is the nouveau module in
``lsmod``, and the catalogue says so with a ``node_cmd`` signature on that snapshot beside the
log line it is often read from. The driver installer's generic hint ("... or if another
driver, such as nouveau, is present ...") follows every refused ``nvidia.ko``; where the
bundle holds the file that would show the fact and the file does not show it, the line
means something else and its class says what (issue 20: the cause's facts must fit).
A cause whose fact file was not collected keeps its words: absence of data is no evidence.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import msgspec

from gpunode.checks.base import LINE, MESSAGE, STATE
from gpunode.checks.context import NodeContext
from gpunode.checks.hung_driver import node_driver_hangs
from gpunode.kb import Cause, KnowledgeBase, Match
from gpunode.model import Evidence, Finding
from gpunode.relazy import lazy_compile

_FACT_SOURCES = {"node_cmd": "cmd", "node_file": "files"}
#: Node files that are a snapshot of a state, whole: the modules loaded (lsmod), the GPUs as
#: NVML reports every field of them (nvidia-smi -q). What such a file does not show is not
#: there. A log (the kernel's ring buffer, a journal) is a window in time that may have
#: rotated past the line, so a line absent from it contradicts nothing.
_SNAPSHOTS = frozenset({"lsmod.txt", "nvidia-smi-q.xml"})


def fact_signatures(cause: Cause) -> tuple[Match, ...]:
    """The cause's signatures in the node's state snapshots: its facts."""
    return tuple(m for m in cause.match
                 if m.source in _FACT_SOURCES and (m.name or "").lstrip("/") in _SNAPSHOTS)


def contradicted(ctx: NodeContext, cause: Cause) -> bool:
    """The node holds a file one of the cause's fact signatures reads, and none of them
    matches in the files it holds."""
    held = False
    for m in fact_signatures(cause):
        split = ctx.text_lines(_FACT_SOURCES[m.source], (m.name or "").lstrip("/"))
        if split is None:
            continue
        held = True
        if any(m.regex.search(line) for line in split[0]):  # line by line, as signatures scan
            return False
    return held


def fit_to_facts(ctx: NodeContext, findings: list[Finding]) -> bool:
    """Take out of ``findings`` (in place) each catalogued cause read from words that the
    node's record contradicts: a refining signature is dropped, a decisive line named as
    that cause gets its class back (ranked just above the state it explains). False when
    no finding has a cause read here (``findings`` are then left as they are, and stay so
    for as long as nothing is added)."""
    known = _FACTUAL[0]
    refit = (known if known is not None and known[0] is ctx.kb else _factual_of(ctx.kb))[2]
    for finding in findings:
        if finding.cause in refit:
            break
    else:  # nearly every component: none of its causes is one refitted here
        return False
    if any(f.cause == _HEADERS for f in findings):
        findings[:] = [_kernel_name_fit(ctx, f) for f in findings]
    if any(f.component == "driver" and f.cause == _CRASH for f in findings):
        findings[:] = [_headers_unpublished(ctx, f) for f in findings]
    if any(f.component == _KERNEL and f.cause == _HUNG for f in findings) and node_driver_hangs(ctx):
        # a hung task with NVIDIA frames on its stack: the driver's hang (checks/hung_driver.py)
        findings[:] = [f for f in findings if not (f.component == _KERNEL and f.cause == _HUNG)]
    factual = _factual(ctx.kb)
    if any(f.cause in factual for f in findings):
        findings[:] = list(_fitted(ctx, findings))
    return True


_HEADERS, _SCRIPT = "kernel_headers_missing", "driver_container_script_error"
#: The driver image's script failing to resolve the running kernel to its packages' names.
_UNRESOLVED = lazy_compile(r"Could not resolve Linux kernel version")
#: A kernel built outside any distribution: Linux's scripts/setlocalversion appends '-g' and
#: the commit's abbreviated hash for a git tree ('-dirty' for local changes) or '+' for an
#: untagged one; builders often name theirs 'custom'. No distribution's package carries it.
_BUILT_LOCALLY = lazy_compile(r"-g[0-9a-f]{7,40}(?:-dirty)?$|\+$|custom", re.IGNORECASE)


def _kernel_name_fit(ctx: NodeContext, finding: Finding) -> Finding:
    """The driver script's 'Could not resolve Linux kernel version' on a node whose kernel
    a distribution never named is the script's failure to read that name, not headers the
    repository lacks: the script parses the running kernel's name into the distribution's
    package form before it looks for headers (NVIDIA/gpu-driver-container#450, #601)."""
    node = ctx.node
    if finding.cause != _HEADERS or node is None \
            or not _BUILT_LOCALLY.search(node.status.node_info.kernel_version) \
            or not any(_UNRESOLVED.search(ev.excerpt) for ev in finding.evidence):
        return finding
    rank = max(finding.specificity, ctx.kb.get(_SCRIPT).specificity)
    return msgspec.structs.replace(finding, cause=_SCRIPT, specificity=rank)


_CRASH = "crash_loop"
_KERNEL, _HUNG = "kernel", "kernel_hung_task"
#: The causes the node's kernel may refit (``_kernel_name_fit``, ``_headers_unpublished``; a
#: hung task the driver's stack explains moves to the driver, ``hung_driver``).
_KERNEL_FITS = frozenset({_HEADERS, _CRASH, _HUNG})
#: Ubuntu's FIPS kernels ("5.4.0-1068-fips", "4.15.0-2036-aws-fips"): their packages, headers
#: included, are published only in the Ubuntu Pro FIPS archive, never in the public archive
#: the driver image's script queries for linux-headers-<running kernel>.
_HEADERS_NOT_PUBLIC = lazy_compile(r"^\d+\.\d+\.\d+-\d+-(?:[a-z]+-)?fips$")


def _headers_unpublished(ctx: NodeContext, finding: Finding) -> Finding:
    """A driver container that keeps crashing, with no line of its own that says why, on a
    node whose kernel's headers no public repository publishes: its build cannot find them
    (NVIDIA/gpu-operator#152 says so in the script's words, 'Could not resolve Linux kernel
    version'); the node's kernel is the fact that names the cause when the log is cut short."""
    node = ctx.node
    if finding.component != "driver" or finding.cause != _CRASH or node is None:
        return finding
    kernel = node.status.node_info.kernel_version
    if not _HEADERS_NOT_PUBLIC.match(kernel):
        return finding
    rank = max(finding.specificity, ctx.kb.get(_HEADERS).specificity)
    fact = Evidence(f"node/{node.metadata.name} status.nodeInfo.kernelVersion", kernel)
    return msgspec.structs.replace(finding, cause=_HEADERS, specificity=rank,
                                   evidence=(*finding.evidence, fact))


def _factual(kb: KnowledgeBase) -> frozenset[str]:
    """The codes of causes with fact signatures."""
    known = _FACTUAL[0]
    return (known if known is not None and known[0] is kb else _factual_of(kb))[1]


def refitted_causes(kb: KnowledgeBase) -> frozenset[str]:
    """The causes ``fit_to_facts`` may refit: where no finding has one, it leaves the findings
    as they are and returns False (the node pass asks this once per node)."""
    known = _FACTUAL[0]
    return (known if known is not None and known[0] is kb else _factual_of(kb))[2]


def _factual_of(kb: KnowledgeBase) -> tuple[KnowledgeBase, frozenset[str], frozenset[str]]:
    """The codes of causes with fact signatures, and those with the causes the node's kernel
    refits (``_KERNEL_FITS``), listed once per knowledge base: the last one's are kept at
    hand (``_FACTUAL``), asked twice for every component of every node."""
    factual = frozenset(c.code for c in kb.causes if fact_signatures(c))
    known = _FACTUAL[0] = (kb, factual, factual | _KERNEL_FITS)
    return known


_FACTUAL: list[tuple[KnowledgeBase, frozenset[str], frozenset[str]] | None] = [None]


def _fitted(ctx: NodeContext, findings: list[Finding]) -> Iterator[Finding]:
    kb = ctx.kb
    factual = _factual(kb)
    for finding in findings:
        worded = "signature" in finding.context or LINE in finding.context
        if finding.cause not in factual or not worded or not _from_words(ctx, finding) \
                or not contradicted(ctx, kb.get(finding.cause)):
            yield finding
            continue
        if LINE not in finding.context:
            continue  # a refining signature the node's record contradicts: nothing
        said = finding.context.get(MESSAGE) or finding.context[LINE]
        cls = kb.line_class(said)
        assert cls is not None  # the last class matches any line
        yield msgspec.structs.replace(finding, cause=cls.code,
                                      specificity=_rank(findings, finding, cls.specificity))


def _from_words(ctx: NodeContext, finding: Finding) -> bool:
    """The finding's evidence is a line of a log, an event or a status, not of a node file."""
    node_files = (ctx.obs.path_of("cmd", ""), ctx.obs.path_of("files", ""))
    return not any(ev.source.startswith(node_files) for ev in finding.evidence[:1])


def _rank(findings: list[Finding], finding: Finding, floor: int) -> int:
    """Just above the state the line explains (as a decisive line's class ranks), else the
    class's own rank."""
    state = finding.context.get(STATE)
    ranks = [f.specificity for f in findings if state and f.cause == state]
    return max(ranks) + 1 if ranks else floor
