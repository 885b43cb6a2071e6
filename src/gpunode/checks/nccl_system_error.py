"""NCCL's bare "unhandled system error" in one container that holds several GPUs.

ncclSystemError (2, "unhandled system error"; NCCL's debug text "System call (socket, malloc,
munmap, etc) failed") says a system call under NCCL failed, not which; where NCCL was let
speak, its WARN line names the call and that line is read instead, and so does the text PyTorch
prints after "Last error:" (NCCL's last warning, ncclGetLastError), whatever the call: a
socket connect to a peer or to the loopback where the job's NCCL_SOCKET_IFNAME chose it is
the job's bootstrap, as its WARN line would be. Without one, a job whose
ranks share one container's GPUs runs NCCL's intra-node transports (SHM, P2P with its proxy's
host buffers), whose segments live under the container's /dev/shm and its IPC namespace: the
resources the container runtime gives the container (64 MB of /dev/shm by default, Docker's
--shm-size and --ipc=host; a pod's memory-backed emptyDir). NCCL's troubleshooting guide
("Docker", "Shared memory") names those limits for containers; the same error in Docker fixed
with --ipc=host (pytorch/pytorch#54822) and the SHM transport's segments failing in Docker's
64 MB (NVIDIA/nccl#342). The call is not named, so the class stays unclassified. A pod with
one GPU (ranks across pods or nodes, sockets and the fabric between them) is not read so.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpunode.bundle.kube import Pod
from gpunode.decisive import MAX_LINE, Decisive
from gpunode.gpus import GPU, quantity
from gpunode.relazy import lazy_compile

#: NCCL's result string for ncclSystemError in a caller's words ("NCCL error in: ...,
#: unhandled system error", "Test NCCL failure common.cu:777 'unhandled system error'",
#: "NCCL Error 2: unhandled system error") or its enumerator.
_SYSTEM_ERROR = lazy_compile(r"\bNCCL\b.{0,200}\bunhandled system error\b|\bncclSystemError\b")
#: NCCL's own warning, which names the failed call where NCCL printed it.
_NCCL_WARN = lazy_compile(r"\bNCCL WARN\b")
#: PyTorch's detail of an NCCL error (torch/csrc/distributed/c10d/NCCLUtils.cpp,
#: getNcclErrorDetailStr): the result's text, then "Last error:" and ncclGetLastError's text
#: on the next line (NCCL's last WARN message, nccl.h: "a human-readable string of the last
#: error that occurred in NCCL"), the same words as the WARN line that set it.
_LAST_ERROR = lazy_compile(r"\bLast error:(?P<text>.*)$")
#: What PyTorch prints where NCCL kept no text ("Last error: Unknown NCCL Error"): no call named.
_UNKNOWN = "Unknown NCCL Error"
#: A launcher's rank prefix ("10: ") before a relayed line.
_PREFIX = lazy_compile(r"^\s*(?:\[?\d{1,5}\]?:\s*)?")


def bare_system_error(lines: Sequence[str]) -> Decisive | None:
    """The first line saying NCCL's ncclSystemError in a log with no NCCL WARN line (each
    pattern asked only of lines that hold its literal: most job logs hold neither)."""
    index = next((i for i, line in enumerate(lines) if ("system error" in line or "ncclSystemError" in line)
                  and _SYSTEM_ERROR.search(line)), None)
    if index is None or any("NCCL WARN" in line and _NCCL_WARN.search(line) for line in lines) \
            or _last_error_named(lines[index:]):
        return None
    return Decisive(index + 1, lines[index].strip()[:MAX_LINE], 2)


def _last_error_named(lines: Sequence[str]) -> bool:
    """The caller printed NCCL's last error (ncclGetLastError) after the result: its
    "Last error:" and, on that line or the next, the text NCCL's WARN would have said."""
    for index, line in enumerate(lines):
        found = _LAST_ERROR.search(line) if "Last error:" in line else None
        if found is not None:
            rest = found.group("text").strip() or (lines[index + 1] if index + 1 < len(lines) else "")
            rest = _PREFIX.sub("", rest).strip()
            return bool(rest) and not rest.startswith(_UNKNOWN)
    return False


def shares_gpus_in_container(pod: Pod) -> bool:
    """Whether one container of the pod holds two GPUs or more (limits or requests)."""
    return any(quantity(c.resources.limits.get(GPU) or c.resources.requests.get(GPU)) >= 2
               for c in pod.spec.containers)
