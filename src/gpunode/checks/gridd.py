"""nvidia-gridd, a vGPU guest driver's licensing daemon, read from its lines in the host's syslog.

The GRID (vGPU guest) driver installs nvidia-gridd, which leases the guest's licence from the
NVIDIA License System with the client configuration token found in
/etc/nvidia/ClientConfigToken/ (the vGPU licensing guide, "Configuring a Licensed Client of
NVIDIA License System", docs.nvidia.com/grid/14.0/grid-licensing-user-guide; the guest's
license status in ``nvidia-smi -q`` stays "Unlicensed" until it does). Its
own lines are tagged ``nvidia-gridd[pid]:``. Where the daemon's last word on its licence is a
failure, with no "License acquired successfully" after it, the guest is unlicensed: past the
grace period CUDA refuses the vGPU, so the driver install's licensing is degraded, and the
daemon's own decisive line says why. A token it cannot fetch is a file not in place
("Unable to fetch the client configuration token file": the token was never downloaded into
the folder, docs.nrec.no/vgpu.html "Checking license status and getting client token", fixed by
putting it there and restarting the daemon); a lease the server refused reads as the shared
job-error table reads it (``vgpu-license-acquire-failed``); other lines by their class.

Left out, being what every licensed start prints first: "Valid GRID license not found. GPU
features and performance will be restricted" (before the lease succeeds a second later) and
the daemon's progress ("Started", "Acquiring license", "NLS initialized"). A lease that
succeeded after the failure, or a syslog without the daemon's lines, says nothing here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from gpunode.checks.base import check, reads
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.decisive import decisive_line
from gpunode.job_errors import job_error
from gpunode.model import Finding, Status
from gpunode.parse.syslog import SYSLOG_FILES
from gpunode.relazy import lazy_compile

#: The daemon's own lines.
_OWN = lazy_compile(r"\bnvidia-gridd(?:\[\d+\])?: ")
#: The word every own line holds (spares the line-by-line search on other nodes).
_WORD = "nvidia-gridd"
#: A lease that succeeded: the guest is licensed from here on.
_LICENSED = lazy_compile(r"\bLicense acquired successfully\b|\bYour system is licensed\b")
#: The notice every start prints before its lease succeeds.
_START_NOTICE = lazy_compile(r"\bValid GRID license not found\b")
#: The client configuration token the daemon could not take from its folder.
_TOKEN_FILE = lazy_compile(r"(?i)\b(?:unable to|failed to|could not|cannot) "
                           r"(?:fetch|read|find|open|load|locate)\b.{0,40}\bclient configuration token\b")
_FILE_STATE = "error_file_state"


@check("driver", may_find=reads(*(f"files{name}" for name in SYSLOG_FILES)))
def gridd_unlicensed(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The licensing daemon's last word is a failure: its own decisive line says why."""
    for name in SYSLOG_FILES:
        split = ctx.text_lines("files", name.lstrip("/"))
        if split is None or _WORD not in split[1]:
            continue
        found = unlicensed(ctx, component, split[0], ctx.obs.path_of("files", name.lstrip("/")))
        if found is not None:
            yield found
            return


def after_last_lease(lines: Sequence[str]) -> list[str]:
    """The daemon's own lines after its last successful lease (all of them where none),
    other lines and its start notice blanked (line numbers kept)."""
    start = 0
    for i, line in enumerate(lines):
        if _OWN.search(line) and _LICENSED.search(line):
            start = i + 1
    return ["" if i < start or not _OWN.search(line) or _START_NOTICE.search(line) else line
            for i, line in enumerate(lines)]


def unlicensed(ctx: NodeContext, component: str, lines: Sequence[str], path: str) -> Finding | None:
    found = decisive_line(after_last_lease(lines), ctx.kb.class_of)
    if found is None:
        return None
    line_class: str | None = None
    if _TOKEN_FILE.search(found.line):
        line_class = _FILE_STATE
    elif (entry := job_error(found.line)) is not None and entry.component == component:
        line_class = entry.cause if ctx.kb.get(entry.cause) is not None else None
    return line_finding(ctx.kb, component, Status.DEGRADED, found, f"{path}:{found.line_no}",
                        verb="fails in nvidia-gridd's syslog lines", line_class=line_class,
                        standalone="true")
