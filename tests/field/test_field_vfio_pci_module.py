"""A node labelled for VM passthrough (nvidia.com/gpu.workload.config=vm-passthrough) whose
lsmod lists VFIO's core modules but neither vfio_pci nor nvidia has its GPUs bound to no
driver: vfio-pci depends on the VFIO core (drivers/vfio/pci/Kconfig), so it cannot be built in
where the core is a module, and a GPU goes to a VM only through it
(https://docs.kernel.org/driver-api/vfio.html; the GPU Operator's KubeVirt guide,
https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-kubevirt.html;
harvester/harvester#7815). Look-alikes: the same lsmod on a node without the label, with
vfio_pci listed, or with the NVIDIA module loaded, says nothing of the vfio-manager."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

NO_VFIO_PCI = ("Module                  Size  Used by\nvfio_iommu_type1       40960  0\n"
               "vfio                   32768  1 vfio_iommu_type1\n")
WITH_VFIO_PCI = ("Module                  Size  Used by\nvfio_pci               16384  2\n"
                 "vfio_pci_core          94208  1 vfio_pci\nvfio_iommu_type1       40960  0\n"
                 "vfio                   32768  3 vfio_pci_core,vfio_iommu_type1,vfio_pci\n")
WITH_NVIDIA = NO_VFIO_PCI + "nvidia              56426496  0\n"
_NOT_BOUND = ("vfio-manager", "vfio_pci_not_bound")


def _node(lsmod: str, label: str | None = "vm-passthrough") -> Case:
    evidence: list[dict[str, Any]] = [{"kind": "node-cmd", "name": "lsmod.txt", "text": lsmod}]
    if label is not None:
        evidence.append({"kind": "node-labels", "labels": {"nvidia.com/gpu.workload.config": label}})
    return synthetic_case("x-vfio-module", evidence, platform="rke2", healthy=label is None)


def test_a_passthrough_node_without_vfio_pci_has_no_gpu_bound() -> None:
    assert top_pair(_node(NO_VFIO_PCI)) == _NOT_BOUND


def test_without_the_label_with_vfio_pci_or_with_nvidia_it_says_nothing() -> None:
    for case in (_node(NO_VFIO_PCI, None), _node(NO_VFIO_PCI, "container"), _node(WITH_VFIO_PCI),
                 _node(WITH_NVIDIA)):
        assert top_pair(case) != _NOT_BOUND, case.id
