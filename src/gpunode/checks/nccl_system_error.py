"""NCCL's bare "unhandled system error" in one container that holds several GPUs.

ncclSystemError (2, "unhandled system error"; NCCL's debug text "System call (socket, malloc,
munmap, etc) failed") says a system call under NCCL failed, not which; where NCCL was let
speak, its WARN line names the call and that line is read instead. Without one, a job whose
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

import re
from collections.abc import Sequence

from gpunode.bundle.kube import Pod
from gpunode.decisive import MAX_LINE, Decisive
from gpunode.gpus import GPU, quantity

#: NCCL's result string for ncclSystemError in a caller's words ("NCCL error in: ...,
#: unhandled system error", "Test NCCL failure common.cu:777 'unhandled system error'",
#: "NCCL Error 2: unhandled system error") or its enumerator.
_SYSTEM_ERROR = re.compile(r"\bNCCL\b.{0,200}\bunhandled system error\b|\bncclSystemError\b")
#: NCCL's own warning, which names the failed call where NCCL printed it.
_NCCL_WARN = re.compile(r"\bNCCL WARN\b")


def bare_system_error(lines: Sequence[str]) -> Decisive | None:
    """The first line saying NCCL's ncclSystemError in a log with no NCCL WARN line (each
    pattern asked only of lines that hold its literal: most job logs hold neither)."""
    index = next((i for i, line in enumerate(lines) if ("system error" in line or "ncclSystemError" in line)
                  and _SYSTEM_ERROR.search(line)), None)
    if index is None or any("NCCL WARN" in line and _NCCL_WARN.search(line) for line in lines):
        return None
    return Decisive(index + 1, lines[index].strip()[:MAX_LINE], 2)


def shares_gpus_in_container(pod: Pod) -> bool:
    """Whether one container of the pod holds two GPUs or more (limits or requests)."""
    return any(quantity(c.resources.limits.get(GPU) or c.resources.requests.get(GPU)) >= 2
               for c in pod.spec.containers)
