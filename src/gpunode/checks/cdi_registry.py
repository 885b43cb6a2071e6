"""A CDI spec that does not parse, as a container start found it: read in the runtime's journal
or the NVIDIA runtime's own log.

Podman's libpod and the NVIDIA runtime's CDI modifier build the CDI registry while injecting
the CDI devices a container asked for, and log the registry's errors then, at debug level:
"The following errors were triggered when creating the CDI registry: map[<spec>:[failed to
load CDI Spec: failed to parse CDI Spec "<spec>": ...]]" (libpod container_internal_linux.go,
https://github.com/containers/podman; nvidia-container-toolkit internal/modifier/cdi.go,
https://github.com/NVIDIA/nvidia-container-toolkit). The words inside are the CDI library's
own (container-device-interface pkg/cdi: 'failed to parse CDI Spec "<path>"'), so the line is
a start the spec could not serve: a spec written for a newer CDI than the runtime reads
(NVIDIA/nvidia-container-toolkit#38, 'unknown field "hostPath"' under Podman 4.2; #1860,
'unknown field "additionalGids"' under Podman 4.9). The registry's other errors (a spec that
loads but conflicts, a device it cannot stat) and the CDI library's parse error at a periodic
refresh with no container asking are not read here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpunode.checks.base import check, problem, reads
from gpunode.checks.context import NodeContext
from gpunode.model import Evidence, Finding
from gpunode.relazy import lazy_compile

#: The registry's errors logged while a container's CDI devices are injected, one of them the
#: CDI library's parse failure of a spec (its path in quotes, escaped where the log is JSON).
_INJECTION_PARSE = lazy_compile(
    r"\bThe following errors were triggered when creating the CDI registry: "
    r".{0,400}?\bfailed to parse CDI Spec \\?\"(?P<path>[^\"\\\n]{1,200})\\?\"", re.I)
#: Where the line is written: the runtime's journal (gpunode.probe.journal) and the NVIDIA
#: runtime's log file.
_TEXTS = (("cmd", "journal-runtime.txt"), ("files", "var/log/nvidia-container-runtime.log"))
_CAUSE = "cdi_spec_invalid"
#: The registry words, searched in the text as it is (a journal is not copied lowercased per node).
_LITERAL = lazy_compile(r"(?i:creating the CDI registry)")


@check("container-toolkit", may_find=reads(*(f"{kind}/{name}" for kind, name in _TEXTS)))
def cdi_spec_unparsed_at_start(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The last container start on the node whose CDI registry held a spec that does not parse."""
    for kind, name in _TEXTS:
        split = ctx.text_lines(kind, name)
        if split is None or _LITERAL.search(split[1]) is None:
            continue
        lines = split[0]
        for index in range(len(lines) - 1, -1, -1):
            said = _INJECTION_PARSE.search(lines[index])
            if said is None:
                continue
            known = ctx.kb.get(_CAUSE)
            ev = Evidence(f"{ctx.obs.path_of(kind, name)}:{index + 1}", lines[index].strip()[:300])
            yield problem(component, _CAUSE, ev, status=known.severity, specificity=known.specificity,
                          spec=said["path"])
            return
