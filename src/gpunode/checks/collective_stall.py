"""A collective that timed out among the GPUs of one pod: the host's PCIe peer-to-peer path.

PyTorch's NCCL process group runs a watchdog that aborts a job whose collective ran past its
timeout (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp: "Watchdog caught collective
operation timeout: WorkNCCL(SeqNum=.., OpType=.., ...) ran for .. milliseconds before timing
out"). Where every rank is a GPU of the same pod, NCCL moves data between them over the node's
own paths: NVLink where it joins them, else PCIe peer-to-peer. NCCL's troubleshooting guide
("PCI Access Control Services (ACS)",
https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html#pci-access-control-services-acs)
says that ACS on the host's PCIe bridges redirects that traffic through the root complex, which
hangs or slows collectives between GPUs, and that the fix is the host's (ACS off in the BIOS or
with setpci; keeping NCCL off P2P is the workaround). So a watchdog timeout in a pod that holds
two or more GPUs is read against the kernel's PCIe path.

Silent where the timeout says nothing of that path: a pod with one GPU (its peers are
elsewhere), a log showing NCCL sending over the network (``via NET/``: ranks on other nodes),
a job that already keeps NCCL off P2P or chose its level (NCCL's own notice of
``NCCL_P2P_DISABLE`` or ``NCCL_P2P_LEVEL`` set by the environment), and a node whose topology
(``nvidia-smi topo -m``) joins its GPUs with NVLink (``NV<n>``), where PCIe is not the path.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpunode.relazy import lazy_compile

#: PyTorch's watchdog line for a collective past its timeout (ProcessGroupNCCL.cpp).
_WATCHDOG = lazy_compile(r"\bWatchdog caught collective operation timeout\b")
#: NCCL's channel line for a transport over the network, and a job's own P2P setting (NCCL's
#: "NCCL_P2P_DISABLE set by environment to 1").
_OVER_NET = lazy_compile(r"\bvia NET/")
_OWN_P2P = lazy_compile(r"\bNCCL_P2P_(?:DISABLE|LEVEL)\b")
#: An NVLink cell of ``nvidia-smi topo -m`` (NV1 .. NV18).
_NVLINK = lazy_compile(r"(?m)^\s*GPU\d+\b.*\sNV\d+\b")


def stalled_index(lines: Sequence[str], gpus: int, topology: str) -> int | None:
    """The 0-based index of the last watchdog timeout line of a job whose ranks are ``gpus``
    GPUs of one pod and whose P2P path is PCIe, or None where the timeout says nothing of it."""
    if gpus < 2 or _NVLINK.search(topology):
        return None
    index = None
    for i, line in enumerate(lines):
        if _OVER_NET.search(line) or _OWN_P2P.search(line):
            return None
        if _WATCHDOG.search(line):
            index = i
    return index
