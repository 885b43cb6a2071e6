"""nvidia-container-cli's own debug log: its last failing run, and a GPU job's "no driver
library in my container" followed down to it.

nvidia-container-cli prepares every GPU container the NVIDIA runtime starts: it mounts the
driver's libraries, then runs the host's ldconfig against the container's root so its library
cache lists them. A job whose nvidia-smi runs but "couldn't find libnvidia-ml.so" says only
that the container's cache lacks the library (container_cli_no_driver_libs), not which step
left it out. Where the CLI's debug log on the node holds its last run's error and that error
is one of the toolkit's catalogued causes in pasted text ("could not start /sbin/ldconfig:
process execution failed", the ldconfig its config names missing or not executable:
NVIDIA/nvidia-docker#1163 on Debian 10, NVIDIA/nvidia-docker#1399 on Debian 11,
apptainer/apptainer#2028's Ubuntu wrapper script), that step is why, and the job's words are
its consequence: the job's finding gives way to the CLI's (``checks.toolkit.cli_log``). A CLI
log with no error, or whose error is itself the missing library, leaves the job's reading.
"""

from __future__ import annotations

from gpunode.checks.context import NodeContext
from gpunode.decisive import severity
from gpunode.kb import Cause, KnowledgeBase
from gpunode.model import Finding
from gpunode.relazy import lazy_compile

#: nvidia-container-cli's own debug log, where config.toml's ``[nvidia-container-cli] debug =
#: "/var/log/nvidia-container-toolkit.log"`` turns it on (the log the toolkit's issue template
#: asks for): the probe keeps its tail (``files/var/log/nvidia-container-toolkit.log``).
CLI_LOG = "var/log/nvidia-container-toolkit.log"
#: The first line of each run of the CLI (nvc.c: "initializing library context (version=…)").
_CLI_RUN = lazy_compile(r"\binitializing library context\b")
#: nvc_shutdown's first line, logged only for a context whose initialisation went through
#: (libnvidia-container src/nvc.c: ``if (!ctx->initialized) return (0);`` before it).
_CLI_INITIALIZED = lazy_compile(r"\bshutting down library context\b")
#: The toolkit's cause for a container whose cache lists none of the driver's libraries.
NO_LIBS = "container_cli_no_driver_libs"
_TOOLKIT = "container-toolkit"


def failing_cli_line(ctx: NodeContext) -> tuple[int, str] | None:
    """The index and text of the error-level line (klog's ``E``) of the CLI's last run, where
    that run never shut its context down (it did not get past its initialisation); None where
    the log is absent, the last run logged no error, or it went through."""
    split = ctx.text_lines("files", CLI_LOG)
    if split is None:
        return None
    lines = split[0]
    start = next((i for i in range(len(lines) - 1, -1, -1) if _CLI_RUN.search(lines[i])), 0)
    run = range(len(lines) - 1, start - 1, -1)
    last = next((i for i in run if severity(lines[i]) == 2), None)
    if last is None or any(_CLI_INITIALIZED.search(lines[i]) for i in run):
        return None
    return last, lines[last]


def pasted_cause(kb: KnowledgeBase, component: str, line: str) -> Cause | None:
    """The most specific cause of ``component`` whose signature for pasted text (``source =
    "text"``: the CLI's debug log as a report pastes it) matches the line as written."""
    return max((c for c in kb.causes if c.component == component
                and any(m.source == "text" and m.regex.search(line) for m in c.match)),
               key=lambda c: c.specificity, default=None)


def cli_named_step(ctx: NodeContext, finding: Finding) -> bool:
    """Whether ``finding`` is a job's missing-library symptom that the CLI's own log on the
    node explains with another catalogued cause of the toolkit (which ``cli_log`` reports)."""
    if finding.component != _TOOLKIT or finding.cause != NO_LIBS:
        return False
    failing = failing_cli_line(ctx)
    cause = pasted_cause(ctx.kb, _TOOLKIT, failing[1]) if failing is not None else None
    return cause is not None and cause.code != NO_LIBS
