"""Which program the kernel reports killed by a fault (a crash, not a refusal).

Two records say it: the kernel's own line for the fault (its process and the object it died
in) and the audit subsystem's core-dump record (``exe=``). Pure text readings, with no
dependence on other checks, so that the kernel log's reading (checks.kernel) and the
container CLI's failed driver service (checks.driver_service) share them.
"""

from __future__ import annotations

import re

from gpunode.decisive import AUDIT_ABEND
from gpunode.relazy import lazy_compile

#: Literals one of which every crash record holds: a line without them is not searched.
CRASH_WORDS = ("segfault at ", "general protection", "] trap ", ": trap ", "type=1701 ", "ANOM_ABEND ")
_GATE = lazy_compile("|".join(map(re.escape, CRASH_WORDS)))
#: The kernel's report of a user process it killed for a fault (arch/x86/mm/fault.c
#: show_signal_msg, arch/x86/kernel/traps.c): ``<comm>[<pid>]: segfault at <addr> ip … sp …
#: error <n> in <object>[…]``, ``traps: <comm>[<pid>] general protection fault ip:… in <object>``,
#: ``traps: <comm>[<pid>] trap invalid opcode …``. The process (its name cut to 15
#: characters) or the object it crashed in names the stack component whose binary it is:
#: nvidia-container-cli dying in libnvidia-container.so starts no GPU container
#: (NVIDIA/nvidia-container-toolkit#1101).
_PROCESS_CRASH = lazy_compile(
    r"(?:^|\]\s*|traps: )[^\s\[\]]{1,16}\[\d+\]:? (?:segfault at \w+|general protection(?: fault)?|"
    r"trap (?:invalid opcode|divide error|stack segment|int3))\b")
#: The audit subsystem's record of the same end (ANOM_ABEND, type 1701, kernel/auditsc.c
#: audit_core_dumps): ``audit: type=1701 audit(…): … comm="nvc:[driver]"
#: exe="/usr/bin/nvidia-container-cli" sig=11 res=1`` in the kernel log, ``audit[…]: ANOM_ABEND
#: … exe="/usr/bin/gnome-shell" sig=5 res=1`` as auditd or the journal writes it
#: (systemd/systemd#8895). ``exe=`` is the program that died (comm is only its thread's name,
#: which a stack binary may set to anything); a signal of 0 is the old seccomp record
#: ("reason=\"seccomp\" sig=0 syscall=…"), a denied call, not a crash, and type 1326 is seccomp's.
_AUDIT_ABEND = lazy_compile(AUDIT_ABEND)


def crashed_program(line: str) -> str | None:
    """What names the program ``line`` reports killed by a fault: the segfault or trap line
    itself (its process and object), the audit record's ``exe=``; None for other lines."""
    if not _GATE.search(line):
        return None
    if _PROCESS_CRASH.search(line):
        return line
    abend = _AUDIT_ABEND.search(line)
    return abend["exe"] if abend is not None else None
