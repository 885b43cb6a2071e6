"""A sandbox VM runtime's own refusal of a passed-through device, in the runtime's journal or
the kubelet's, while a Kata GPU pod waits: QEMU's VFIO listener refusing to DMA-map a region
with EINVAL (an NVDIMM guest image, kata-containers commit 2ebbf7b: a configuration), the Kata
agent refusing a PCIDEVICE_ value that is no PCI address (commit 966e9b7: a value not in its
form), runtime-rs finding nothing to pass through in an IOMMU group
(kata-containers/kata-containers#13430: not found), Cloud Hypervisor's VFIO DMA map refused
with EINVAL (a guest IOVA beyond the host IOMMU's width, cloud-hypervisor commit 27fda753: a
configuration). Look-alikes: the same words while the pod
runs with no failure word, a DMA map that succeeded, and a well-formed PCI address stay silent."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import explained, top_pair

from gpunode.checks.named import runtime_own_error, sandbox_own_refusal

DMA = ("memory listener initialization failed: Region mem0: vfio_container_dma_map ... "
       "-22 (Invalid argument)")
PCI = '"PCI address mlx5_core.sf.10 should have the format DDDD:BB:SS.F"'
CLH = ('cloud-hypervisor: 1501.220535s: <__iommu> ERROR:virtio-devices/src/thread_helper.rs:53 -- Error '
       'running worker: HandleEvent(Failed to process request queue : ExternalMapping(Custom { kind: Other, '
       'error: "failed to map memory for VFIO container, iova 0x7fff00000000, gpa 0x24ce25000, size 0x1000: '
       'IommuDmaMap(Error(22))" }))')
GROUP = "Failed to create sandbox for pod ... IOMMU group 62 has no passthrough-capable devices"


def _node(journal: str, text: str, state: str = "ContainerCreating") -> Case:
    return synthetic_case("x-sandbox-runtime", [
        {"kind": "workload", "name": "kata-job", "namespace": "default",
         "runtimeClassName": "kata-qemu-nvidia-gpu", "resources": {"limits": {"nvidia.com/pgpu": "1"}},
         "state": state},
        {"kind": "node-cmd", "name": journal, "text": text + "\n"},
    ], healthy=state == "Running", cluster={"gpu_node": {"gpu": "NVIDIA H100 80GB HBM3", "gpus": 8}})


@pytest.mark.parametrize(("journal", "line", "cls"), [
    ("journal-runtime.txt", DMA, "error_config_invalid"),
    ("journal-runtime.txt", PCI, "error_config_invalid"),
    ("journal-runtime.txt", CLH, "error_config_invalid"),
    ("journal-kubelet.txt", GROUP, "error_not_found"),
])
def test_the_vm_runtimes_own_refusal_is_the_runtimes(journal: str, line: str, cls: str) -> None:
    assert top_pair(_node(journal, line)) == ("container-runtime", cls)


@pytest.mark.parametrize("line", [
    "vfio_container_dma_map(0x55d5, 0x0, 0x80000000, 0x7f00) mapped",
    # QEMU's BAR map warning under iommufd, healthy (NVIDIA CoCo docs)
    "qemu-system-x86_64: vfio_container_dma_map(0x560c, 0xe000000021000, 0x3000, 0x7f32) = -14 (Bad address)",
    '"PCI address 0000:3b:00.0 translated to guest 0000:02:00.0"',
    "IOMMU group 62 holds 1 passthrough-capable device",
    "cloud-hypervisor: 12.5s: <vmm> INFO:vmm/src/device_manager.rs:1200 -- mapped memory for VFIO container, "
    "iova 0x100000, size 0x1000",
])
def test_routine_vfio_and_pci_lines_are_no_refusal(line: str) -> None:
    assert not (sandbox_own_refusal(line) and explained(line).decisive_class)
    top = top_pair(_node("journal-runtime.txt", line))
    assert top is None or top[0] != "container-runtime", top


def test_the_words_are_the_runtimes_own() -> None:
    assert all(runtime_own_error(line) for line in (DMA, PCI, GROUP, CLH))
    assert not runtime_own_error("IOMMU group 62: 0000:3b:00.0 bound to vfio-pci")


@pytest.mark.parametrize(("line", "cls"), [
    ("vfio_dma_map(0x1, 0x0, 0x1000, 0x7f) = -12 (Cannot allocate memory)", "error_resource_exhausted"),
    ("error: IOMMU group 7 has no passthrough-capable devices", "error_not_found"),
    # the same Cloud Hypervisor refusal with ENOMEM is no setting of the VMM's
    ('error: "failed to map memory for VFIO container, iova 0x0, gpa 0x0, size 0x1000: '
     'IommuDmaMap(Error(12))"', "error_unclassified"),
])
def test_classes_read_by_their_own_words(line: str, cls: str) -> None:
    assert explained(line).decisive_class == cls
