"""A bus error (SIGBUS) whose crash site lies in NCCL: its shared memory under /dev/shm.

NCCL maps the segments of its shared-memory transport and of its proxy from files under
/dev/shm (misc/shmutils.cc). A process that touches a page of a mapped file the tmpfs under
it cannot back gets SIGBUS, not an error code, so a container's /dev/shm too small for NCCL
(the runtime's 64 MB default, Docker's ``--shm-size``; a pod's memory-backed emptyDir at
/dev/shm to replace it) kills the job in NCCL's own code with a bus error where a write would
have said "No space left on device" (NCCL's troubleshooting guide, "Docker" and "Shared
memory"). Seen in UCX's crash-handler form, "Caught signal 7 (Bus error: nonexistent physical
address)" over ``ncclGroupEnd()`` frames, fixed by ``--shm-size`` (msr-fiddle/pipedream#76);
as Open MPI's "Signal: Bus error (7)" in ncclCommInitRank, which an NCCL maintainer put down
to /dev/shm (NVIDIA/nccl#983); in nccl-tests on a 16-GPU node (NVIDIA/nccl-tests#143).

Only the crash site counts: the first frame of the backtrace after the signal line that is not
the C library's (the handler's trampoline and the libc routine that faulted, ``__funlockfile``,
``memcpy``). A site in the job's own code, libcuda or a framework is the job's crash, whatever
NCCL frames lie below it; a bus error with no backtrace names no layer.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpunode.decisive import MAX_LINE, Decisive
from gpunode.relazy import lazy_compile

#: The signal as crash handlers and shells report it: UCX's "Caught signal 7 (Bus error: ...)",
#: Open MPI's "Signal: Bus error (7)", a shell's "Bus error (core dumped)", "SIGBUS".
_SIGBUS = lazy_compile(r"(?i:\bbus error\b|\bSIGBUS\b)|\bsignal 7\b")
#: One backtrace frame, its function and where it lies: UCX's ucs_debug form (" 2 0x0000000000068d6c
#: ncclGroupEnd()  ???:0", " 5 0x00000000000489b1 ???()  /usr/lib/x86_64-linux-gnu/libnccl.so.2:0"),
#: gdb's ("#1  0x00007f.. in ncclGroupEnd () from /usr/lib/libnccl.so.2") and glibc's
#: backtrace_symbols, bare or in Open MPI's "[ 5] " list ("/usr/lib/libnccl.so.2(+0x4a655)[0x7f..]").
_FRAME = lazy_compile(
    r"^\s*\d{1,3}\s+0x[0-9a-fA-F]+\s+(?P<ucx>\S+?)\(\)\s+(?P<ucx_at>\S+)"
    r"|^\s*#\d{1,3}\s+(?:0x[0-9a-fA-F]+\s+in\s+)?(?P<gdb>[^\s(]+)\s*\([^)]*\)(?:\s+(?:from|at)\s+(?P<gdb_at>\S+))?"
    r"|(?:^|[\]\s])(?P<glibc_at>/?[\w./+-]*\.so[\w.]*)\((?P<glibc>[^)+]*)(?:\+0x[0-9a-fA-F]+)?\)\s*\[0x[0-9a-fA-F]+\]")
#: Frames that are not a crash site: the C library, the threads library and the loader (where
#: a handler's trampoline and the faulting libc routine stand, their names often wrong without
#: symbols), and frames with neither a name nor a library.
_C_LIBRARY = lazy_compile(r"(?:^|/)(?:libc|libpthread|ld-linux[\w-]*|libgcc_s|linux-vdso)\.so")
_C_ROUTINE = lazy_compile(r"^(?:_\w*|\?\?\?|killpg|raise|abort|sigaction|funlockfile|start_thread|clone3?|"
                          r"mem(?:cpy|move|set)\w*|str\w+)$")
#: NCCL's code: its API and internal functions (ncclGroupEnd, pncclAllReduce, a C++ symbol
#: that holds the name) or its library.
_NCCL = lazy_compile(r"nccl[A-Z]|(?:^|/)libnccl[\w.-]*\.so")
#: How many lines a backtrace may start after the signal line (a handler's address and code
#: lines, a "==== backtrace ====" header).
_LEAD = 6


def nccl_bus_error(lines: Sequence[str]) -> tuple[Decisive, Decisive] | None:
    """The last bus error of a job's log whose crash site is NCCL's code, with that frame; None
    where no bus error has a backtrace or its site lies elsewhere."""
    found: tuple[Decisive, Decisive] | None = None
    for index, line in enumerate(lines):
        if _SIGBUS.search(line) is None or _FRAME.search(line) is not None:
            continue
        site = _crash_site(lines, index + 1)
        if site is not None and _NCCL.search(site.line):
            found = (Decisive(index + 1, line.strip()[:MAX_LINE], 2), site)
    return found


def _crash_site(lines: Sequence[str], start: int) -> Decisive | None:
    """The first frame from ``start`` on that is not the C library's, in the backtrace that
    begins within ``_LEAD`` lines; None where none does or all its frames are the C library's."""
    in_trace = False
    for index in range(start, min(len(lines), start + _LEAD + 200)):
        frame = _FRAME.search(lines[index])
        if frame is None:
            if in_trace or index - start >= _LEAD:
                return None
            continue
        in_trace = True
        name = next(g for g in (frame["ucx"], frame["gdb"], frame["glibc"], "") if g is not None)
        where = next((g for g in (frame["ucx_at"], frame["gdb_at"], frame["glibc_at"]) if g), "")
        if _NCCL.search(name) or _NCCL.search(where):
            return Decisive(index + 1, lines[index].strip()[:MAX_LINE], 2)
        if _C_LIBRARY.search(where) or _C_ROUTINE.match(name):
            continue
        return Decisive(index + 1, lines[index].strip()[:MAX_LINE], 2)
    return None
