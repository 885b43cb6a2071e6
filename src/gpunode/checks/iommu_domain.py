"""The host's IOMMU translating a NIC's DMA: the kernel's default domain type, read at boot.

A verbs local protection error (``IBV_WC_LOC_PROT_ERR``, completion status 4, as NCCL's IB
transport relays it) says the NIC was refused the registered buffer it sent from or received
into. The job-error table puts it on the GPU-NIC peer path (gpudirect-rdma), where PCIe ACS is
its usual reason (NVIDIA/nccl#928). The same refusal comes where the host's IOMMU runs its
default domain translated (DMA or DMA-FQ): memory registered for RDMA, a GPU's included, is
then reached through IOMMU page tables the NIC's (SR-IOV VF's) DMA is not mapped in, and
booting with ``iommu=pt`` (passthrough, the identity domain) makes it go away
(EldritchJS/ml-dev-env docs/rdma/IOMMU-PASSTHROUGH-FIX.md: ConnectX VFs on AMD EPYC hosts,
IBV_WC_LOC_PROT_ERR vendor_err 81 until a MachineConfig added iommu=pt). The kernel says which
at boot: drivers/iommu/iommu.c, iommu_subsys_init, prints "iommu: Default domain type: %s%s",
"Translated" for the DMA and DMA-FQ domains, "Passthrough" for identity. The kernel's boot
parameters are the kernel's part of the node, so on a node whose own log says Translated the
error is the kernel's. A log that does not hold the boot line (a ring buffer that rolled over)
or says Passthrough settles nothing, and the table's layer stands.
"""

from __future__ import annotations

from gpunode.job_errors import job_error
from gpunode.relazy import lazy_compile

#: The job-error table's entry for the verbs local protection error.
LOCAL_PROTECTION = "verbs-local-protection"
#: The kernel's boot line naming the IOMMU's default domain type, and the type.
_DEFAULT_DOMAIN = lazy_compile(r"\biommu: Default domain type: (?P<type>[A-Za-z]+)")


def iommu_translated(kernel_log: str | None) -> bool:
    """Whether the node's kernel log says its IOMMU's default domain is translated (the last
    boot line it holds); False where the log is absent, lacks the line or says otherwise."""
    if not kernel_log or "Default domain type" not in kernel_log:
        return False
    found = [m.group("type") for m in _DEFAULT_DOMAIN.finditer(kernel_log)]
    return bool(found) and found[-1] == "Translated"


def protection_under_translation(line: str, kernel_log: str | None) -> bool:
    """Whether ``line`` is a verbs local protection error (the job-error table's entry) on a
    node whose kernel log says its IOMMU translates DMA (``iommu_translated``)."""
    found = job_error(line)
    return found is not None and found.id == LOCAL_PROTECTION and iommu_translated(kernel_log)
