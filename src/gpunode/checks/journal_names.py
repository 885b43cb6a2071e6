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

import re
from collections.abc import Iterator

from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import OWN_FACTS_ONLY, as_catalogued, line_finding
from gpunode.checks.named import named_on_node
from gpunode.decisive import Decisive, decisive_line
from gpunode.model import Finding, Status

#: Host components and the journal of their units in the bundle (gpunode.probe.journal).
JOURNALS = {"kubelet": "journal-kubelet.txt", "container-runtime": "journal-runtime.txt"}
#: The journal's own component's configuration files: a line about one of them is that
#: component's own failure to load its configuration, whatever other component the
#: configuration's values name (a Docker daemon.json that registers the nvidia runtime).
_OWN_CONFIG = {
    "kubelet": re.compile(r"/var/lib/kubelet/config\.yaml|/etc/kubernetes/kubelet|--config\b"),
    "container-runtime": re.compile(
        r"/etc/docker/daemon\.json|/etc/containerd/\S*\.toml|/etc/crio/|configure the Docker daemon"),
}


def journal_findings(ctx: NodeContext) -> Iterator[Finding]:
    """For each host journal, its last error line that names another component, as that
    component's degraded finding quoting the line (``seen_in`` the journal's component)."""
    for component, name in JOURNALS.items():
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
            standalone="true", seen_in=component))


def _last_naming(ctx: NodeContext, component: str, lines: list[str]) -> tuple[str, Decisive] | None:
    """The last line that reads as an error and names a component other than ``component``."""
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        target = named_on_node(ctx, line) if line.strip() else None
        if target is None or target in (component, *OWN_FACTS_ONLY) or _OWN_CONFIG[component].search(line):
            continue
        found = decisive_line([line], ctx.kb.class_of)
        if found is not None:
            return target, Decisive(index + 1, found.line, found.strength)
    return None
