"""nvidia-persistenced, the driver's host daemon, read from its lines in the host's syslog.

The daemon ships with the driver and runs as a systemd unit on the host (its own log lines are
tagged ``nvidia-persistenced[pid]:`` or, from older syslogs, ``nvidia-persistenced:``). When
its last start failed (systemd's lines about ``nvidia-persistenced.service`` or "NVIDIA
Persistence Daemon": a control or main process that exited non-zero, ``Failed with result``,
``Failed to start``, the start limit's "Start request repeated too quickly") and no later
start or deliberate stop followed, the daemon's own decisive line before that failure is the
driver's problem: persistence mode is off and its socket is missing for the clients that ask
for it. Its own word that it could not list the GPUs ("Failed to query NVIDIA devices. Please
ensure that the NVIDIA device files (/dev/nvidia*) exist, and that user %u has read and write
permissions for those files.", NVIDIA/nvidia-persistenced nvidia-persistenced.c setup_devices,
returning NVPD_ERR_DRIVER) is the device files' state: the unit started before the module
made them, and systemd's start limit then keeps it failed after they appear
(kwx4957/study, a Rocky Linux 9 T4 VM). A unit that started again since, or a log without its
lines, says nothing here.

The daemon's command-line setup also ends it before it forks: an option it cannot honour is
reported with the ``ERROR: `` prefix of its stderr messages and the daemon exits at once
(NVIDIA/nvidia-persistenced nvidia-persistenced.c, option parsing: ``--user`` naming a user
``getpwnam`` cannot find prints "Failed to find user ID of user '%s': %s" through
nv_error_msg and exits with EXIT_FAILURE; Frogging-Family/nvidia-all#406, a package that
never created the ``nvidia-persistenced`` system user). Where systemd's lines about the unit
were not kept, such a line of the daemon's own, with no later start of the daemon (its
"Started (pid)" or systemd's), is its failed start, read in the line's class. A user it
could not look up is a name not found whatever error text follows: getpwnam(3) returns NULL
for a name with no entry and leaves errno 0, ENOENT, ESRCH, EBADF or EPERM as the C library
chooses, so "No such file or directory" or "Success" after it says nothing of a file.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from gpunode.checks.base import check, reads
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.decisive import decisive_line
from gpunode.model import Evidence, Finding, Status
from gpunode.parse.syslog import SYSLOG_FILES
from gpunode.relazy import lazy_compile

#: The daemon's own lines.
_OWN = lazy_compile(r"\bnvidia-persistenced(?:\[\d+\])?: ")
#: systemd's lines about the daemon's unit, in the journal's form or the boot console's
#: ("[FAILED] Failed to start NVIDIA Persistence Daemon.").
_UNIT = lazy_compile(r"(?:systemd\[1\]: |\[\s*FAILED\s*\] )(?:nvidia-persistenced\.service: |"
                     r"(?:Failed to start|Started|Stopped|Starting|Stopping) NVIDIA Persistence Daemon\b)")
#: Literals one of which every line ``_UNIT`` matches holds.
UNIT_WORDS = ("nvidia-persistenced.service", "NVIDIA Persistence Daemon")
#: A start that ended in failure, or that systemd refused after too many.
_FAILED = lazy_compile(
    r"\.service: (?:[Mm]ain|[Cc]ontrol) process exited, code=(?:exited, status=[1-9]|killed|dumped)|"
    r"\.service: Failed with result|Failed to start |\.service: Start request repeated too quickly")
#: A start that succeeded, or a deliberate stop, after the failure.
_SETTLED = lazy_compile(r"systemd\[1\]: (?:Started|Stopping) NVIDIA Persistence Daemon\b")
#: The daemon could not list the GPUs through their device files.
_NO_DEVICE_FILES = lazy_compile(r"\bFailed to query NVIDIA devices\b")
_FILE_STATE = "error_file_state"
#: The daemon's own fatal setup error: its stderr messages' prefix (nv_error_msg), printed
#: before it exits from option parsing.
_SETUP_ERROR = lazy_compile(r"\bnvidia-persistenced(?:\[\d+\])?: ERROR: \S")
#: The user the daemon was told to run as has no entry (getpwnam returned NULL).
_NO_USER = lazy_compile(r"\bFailed to find user ID of user\b")
_NOT_FOUND = "error_not_found"
#: A start of the daemon: its own "Started (pid)" line, or systemd's.
_STARTED = lazy_compile(r"\bnvidia-persistenced(?:\[\d+\])?: Started \(\d+\)|"
                        r"systemd\[1\]: Started NVIDIA Persistence Daemon\b")
#: The daemon's closing pointer at its other lines ("nvidia-persistenced failed to initialize.
#: Check syslog for more details."): the reason is the line it points at, not this one.
_POINTER = lazy_compile(r"\bfailed to initialize\. Check syslog for more details\b")


@check("driver", may_find=reads(*(f"files{name}" for name in SYSLOG_FILES)))
def persistenced_failed(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The persistence daemon's last start failed: its own decisive line says why."""
    for name in SYSLOG_FILES:
        split = ctx.text_lines("files", name.lstrip("/"))
        if split is None or "nvidia-persistenced" not in split[1]:
            continue  # no line of the daemon's: its patterns need not be tried line by line
        path = ctx.obs.path_of("files", name.lstrip("/"))
        said = None
        if any(word in split[1] for word in UNIT_WORDS):
            said = _failed_start(ctx, component, split[0], path)
        if said is None and "ERROR: " in split[1]:
            said = _setup_failed(ctx, component, split[0], path)
        if said is not None:
            yield said
            return


def last_failed_start(lines: Sequence[str]) -> int | None:
    """The index of the unit's last failed start that no later start or deliberate stop
    settled; None where there is none."""
    unit = [i for i, line in enumerate(lines) if _UNIT.search(line)]
    failed = [i for i in unit if _FAILED.search(lines[i])]
    if not failed:
        return None
    last = failed[-1]
    if any(i > last and _SETTLED.search(lines[i]) for i in unit):
        return None  # started again, or stopped on purpose, since
    return last


def _setup_failed(ctx: NodeContext, component: str, lines: Sequence[str], path: str) -> Finding | None:
    """The daemon's last fatal setup error (module doc) with no start of it after."""
    last = next((i for i in range(len(lines) - 1, -1, -1) if _SETUP_ERROR.search(lines[i])), None)
    if last is None or any(_STARTED.search(line) for line in lines[last + 1:]):
        return None
    found = decisive_line([line if i == last else "" for i, line in enumerate(lines)], ctx.kb.class_of)
    if found is None:
        return None
    line_class = _NOT_FOUND if _NO_USER.search(found.line) else None
    return line_finding(ctx.kb, component, Status.DEGRADED, found, f"{path}:{found.line_no}",
                        verb="fails in nvidia-persistenced's syslog lines", line_class=line_class,
                        standalone="true")


def _failed_start(ctx: NodeContext, component: str, lines: Sequence[str], path: str) -> Finding | None:
    last = last_failed_start(lines)
    if last is None:
        return None
    own = [line if _OWN.search(line) and not _UNIT.search(line) and not _POINTER.search(line) else ""
           for line in lines[:last]]
    found = decisive_line(own, ctx.kb.class_of)
    if found is None:
        return None
    ended = Evidence(f"{path}:{last + 1}", lines[last].strip())
    line_class = (_FILE_STATE if _NO_DEVICE_FILES.search(found.line)
                  else _NOT_FOUND if _NO_USER.search(found.line) else None)
    return line_finding(ctx.kb, component, Status.DEGRADED, found, f"{path}:{found.line_no}",
                        verb="fails in nvidia-persistenced's syslog lines", evidence=(ended,),
                        line_class=line_class, standalone="true")


#: A launcher's fatal word that it could not start the daemon's binary: Talos' persistence
#: extension runs it from a Go wrapper that ends on 'log.Fatalf("nvidia-persistenced-wrapper:
#: error starting nvidia-persistenced: %v")' when exec fails (siderolabs/extensions
#: nvidia-persistenced-wrapper; its older "nvidia-driver:" wrapper says the same), and Go's
#: exec says which call failed ("fork/exec /usr/local/bin/nvidia-persistenced: no such file or
#: directory": the binary, or the ELF interpreter it names, is not in the service's root,
#: siderolabs/extensions#861 on arm64 before #899 mounted the host's /lib into it).
_LAUNCH_FAILED = lazy_compile(
    r"\b(?:error|fail(?:ed|ure)?(?: to)?|unable to|cannot|could not|couldn.t) "
    r"(?:start(?:ing)?|launch(?:ing)?|exec(?:ut(?:e|ing))?|run(?:ning)?) "
    r"(?:the )?nvidia-persistenced(?![\w.-])"
    r"|\b(?:fork/)?exec \S*/nvidia-persistenced: ")
#: The files a launcher's line lands in: the host's syslog and, on hosts without one whose
#: service messages the kernel log keeps (Talos), the kernel log.
_LAUNCH_LOGS = (("cmd", "dmesg.txt"), *(("files", name.lstrip("/")) for name in SYSLOG_FILES))


@check("driver", may_find=reads("cmd/dmesg.txt", *(f"files{name}" for name in SYSLOG_FILES)))
def persistenced_not_launched(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The persistence daemon's launcher could not start its binary, and no start of the
    daemon followed: the daemon never ran, so persistence mode is off and its socket missing.
    The launcher's line says why, in its class (a binary or loader not in the service's root
    is a file's state). A start of the daemon after it (its "Started (pid)", systemd's) heals
    it; a log without such a line says nothing."""
    for kind, name in _LAUNCH_LOGS:
        split = ctx.text_lines(kind, name)
        if split is None or "nvidia-persistenced" not in split[1] or not _LAUNCH_FAILED.search(split[1]):
            continue  # (a line's match is the joined text's: no line of it matches)
        lines = split[0]
        last = next((i for i in range(len(lines) - 1, -1, -1) if _LAUNCH_FAILED.search(lines[i])), None)
        if last is None or any(_STARTED.search(line) for line in lines[last + 1:]):
            continue
        found = decisive_line([line if i == last else "" for i, line in enumerate(lines)], ctx.kb.class_of)
        if found is None:
            continue
        yield line_finding(ctx.kb, component, Status.DEGRADED, found,
                           f"{ctx.obs.path_of(kind, name)}:{found.line_no}",
                           verb="cannot start nvidia-persistenced", standalone="true")
        return
