"""Host journals that name another layer: the kubelet's or the runtime's error about a
component below or beside them (a device node the driver creates, the runtime handler's
binary the toolkit installs) is that component's failure, read where no pod shows it.

The kubelet and the container runtime keep running when what they use from another layer
is missing: the kubelet's device manager finds no ``/dev/nvidia-uvm``, the runtime cannot
start the ``nvidia`` handler's binary. Neither is then failing, so their journals are not
read to explain a state of theirs (``checks.decisive.node_texts``); this reads them for
the last error line that names another component (``checks.named``) and puts it there.
A line that names only the journal's own component says nothing here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import HOST_JOURNALS, OWN_FACTS_ONLY, as_catalogued, line_finding
from gpunode.checks.named import low_level_runtime_absent, named_on_node
from gpunode.decisive import MAX_LINE, Decisive, decisive_line, lenient_line, severity, unmet_dependency
from gpunode.model import PROBLEMS, Finding, Status
from gpunode.relazy import lazy_compile

#: How many of a journal's last lines are read for a line naming another component.
_TAIL = 200
#: The journal's own component's configuration files: a line about one of them is that
#: component's own failure to load its configuration, whatever other component the
#: configuration's values name (a Docker daemon.json that registers the nvidia runtime).
_OWN_CONFIG = {
    "kubelet": lazy_compile(r"/var/lib/kubelet/config\.yaml|/etc/kubernetes/kubelet|--config\b"),
    "container-runtime": lazy_compile(
        r"/etc/docker/daemon\.json|/etc/containerd/\S*\.toml|/etc/crio/|configure the Docker daemon"),
}


def journal_findings(ctx: NodeContext) -> Iterator[Finding]:
    """For each host journal, its last error line that names another component, as that
    component's degraded finding quoting the line (``seen_in`` the journal's component)."""
    for component, name in HOST_JOURNALS.items():
        split = ctx.text_lines("cmd", name)
        if split is None:
            continue
        found = _last_naming(ctx, component, split[0])
        if found is None:
            continue
        target, line = found
        where = f"{ctx.obs.path_of('cmd', name)}:{line.line_no}"
        yield as_catalogued(ctx.kb, line_finding(
            ctx.kb, target, Status.DEGRADED, line, where, verb=f"is named in the {component}'s journal",
            standalone="true", seen_in=component), line.message, line.line)


def _last_naming(ctx: NodeContext, component: str, lines: list[str]) -> tuple[str, Decisive] | None:
    """The last line that reads as an error and names a component other than ``component``,
    among the journal's last ``_TAIL`` lines (its recent past; a node's journals hold up to
    2,000 lines each, and naming is the costly test, so it follows the error test)."""
    for index in range(len(lines) - 1, max(len(lines) - _TAIL, 0) - 1, -1):
        line = lines[index]
        # apt's unmet dependency has no severity: its form states the failure (the package it
        # names could not be installed, kubernetes/kops#6324's nvidia-docker2)
        said = severity(line) if line.strip() else 0
        apt = not said and unmet_dependency(line)
        target = named_on_node(ctx, line) if said or apt else None
        if target is None or target in OWN_FACTS_ONLY or _OWN_CONFIG[component].search(line):
            continue
        if target == component and low_level_runtime_absent(ctx, line) != component:
            continue  # only another layer's words that the node's facts settle on this one
        found = Decisive(1, line.strip()[:MAX_LINE], 1) if apt else decisive_line([line], ctx.kb.class_of)
        if found is not None:
            return target, Decisive(index + 1, found.line, found.strength)
    return None


#: States in which the component's container was created or started and then failed: the
#: runtime and the kubelet that ran it were involved (a pod that is missing or waits for
#: a lower layer never reached them).
_RAN_AND_FAILED = frozenset({"crash_loop", "init_failed", "container_create_failed"})


def silent_state_findings(ctx: NodeContext, findings: Mapping[str, Sequence[Finding]]) -> Iterator[Finding]:
    """A component that fails in a state of a container that ran (a crash loop, an init
    container failing) and said nothing itself that reads as an error: the journals of the
    host components it runs on (the runtime first, then the kubelet) are read for their last
    error line, which is that host component's degraded finding, the state then being
    blocked by it. Each host journal is quoted once."""
    catalog, kb = ctx.facts.catalog, ctx.kb
    failing = {cid for cid, found in findings.items() if any(f.status in PROBLEMS for f in found)}
    if not failing:  # most nodes
        return
    quoted: set[str] = set()
    for cid, found in findings.items():
        problems = [f for f in found if f.status in PROBLEMS]
        if not problems or not {f.cause for f in problems} <= _RAN_AND_FAILED:
            continue
        for host, name in JOURNALS_BELOW:
            if host in quoted or host in failing or host not in catalog.dependencies(cid):
                continue
            split = ctx.text_lines("cmd", name)
            own = _without_restated_states(split[0]) if split else []
            # a pod whose container ran and failed, silent itself: the host's words of failure
            # count even at a lower level than an error (what a healthy pod would not show)
            line = (decisive_line(own, kb.class_of) or lenient_line(own)) if own else None
            if line is None:
                continue
            quoted.add(host)
            where = f"{ctx.obs.path_of('cmd', name)}:{line.line_no}"
            yield as_catalogued(kb, line_finding(kb, host, Status.DEGRADED, line, where,
                                                 verb="reports in its journal", standalone="true"))
            break


#: The kubelet restating a pod's own state, which is no failure of the host: its back-off
#: before restarting a crashed container or pulling an image again ('Error syncing pod …,
#: skipping: failed to "StartContainer" for "x" with CrashLoopBackOff: "Back-off 5m0s
#: restarting failed container=x pod=…"', kubernetes/kubernetes#54760, vmware-tanzu/kubeapps#933,
#: kubernetes/minikube#11105; the structured 'back-off 5m0s restarting failed container=' of
#: newer kubelets, loft-sh/vcluster#162).
_STATE_RESTATED = lazy_compile(r"(?i)\bback-off \S+ (?:restarting failed container=|pulling image\b)")


def _without_restated_states(lines: Sequence[str]) -> list[str]:
    """``lines`` with those restating a pod's back-off blanked (numbering kept): the state
    is what is being explained, so the kubelet's echo of it cannot explain it."""
    return ["" if _STATE_RESTATED.search(line) else line for line in lines]


#: The host journals below a pod, the runtime's first (it creates and starts containers).
JOURNALS_BELOW = tuple((host, HOST_JOURNALS[host]) for host in ("container-runtime", "kubelet"))
