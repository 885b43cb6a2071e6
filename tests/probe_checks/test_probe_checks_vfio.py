"""Which driver holds each GPU on the PCI bus (the probe's /sys/bus/pci), judged by what the
node's GPUs are for: containers need the nvidia driver, VM passthrough needs vfio-pci."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from probe_check_helpers import (
    Facts,
    excerpts,
    gpu,
    judge,
    no_nvidia_stack,
    node_object,
    recorded,
    root_cause,
    root_causes,
    status,
)

from gpunode.model import Status

H200 = "0x2335"  # the recorded GPU's PCI device id (NVIDIA H200)


def _on_bus(facts: Facts, *drivers: str | None) -> None:
    """The recorded GPU on the bus with ``drivers[0]``, more H200s after it with the rest."""
    first = gpu(recorded())["pci_bus_id"][4:].lower()  # 00000000:18:00.0 -> 0000:18:00.0
    addresses = [first, *(f"0000:{0x28 + 0x10 * i:02x}:00.0" for i in range(len(drivers) - 1))]
    facts["host"]["pci_gpus"] = [
        {"address": a, "device": H200, "driver": d} for a, d in zip(addresses, drivers, strict=True)
    ]
    facts["host"]["pci_read"] = True


def _vm_node() -> dict[str, Any]:
    node = node_object()
    node["metadata"]["labels"]["nvidia.com/gpu.workload.config"] = "vm-passthrough"
    del node["status"]["capacity"]["nvidia.com/gpu"], node["status"]["allocatable"]["nvidia.com/gpu"]
    return node


def test_a_container_node_with_a_gpu_bound_to_vfio_blames_the_binding(tmp_path: Path) -> None:
    facts = recorded()
    _on_bus(facts, "nvidia", "vfio-pci")
    report = judge(tmp_path, facts, node=node_object())
    assert ("driver", "gpu_bound_to_vfio") in root_causes(report)
    assert "driver vfio-pci" in excerpts(root_cause(report, "driver"))


def test_a_container_node_whose_gpus_the_nvidia_driver_holds_is_not_judged_on_binding(
    tmp_path: Path,
) -> None:
    facts = recorded()
    _on_bus(facts, "nvidia")
    report = judge(tmp_path, facts, node=node_object())
    assert not any(cause == "gpu_bound_to_vfio" for _, cause in root_causes(report))


def test_a_vm_passthrough_node_with_every_gpu_on_vfio_is_fine(tmp_path: Path) -> None:
    facts = recorded()
    no_nvidia_stack(facts)
    _on_bus(facts, "vfio-pci", "vfio-pci")
    report = judge(tmp_path, facts, node=_vm_node())
    assert not any(c in ("vfio-manager", "driver") for c, _ in root_causes(report)), root_causes(report)
    assert status(report, "vfio-manager") == Status.OK


def test_gpus_all_on_vfio_without_the_operators_label_need_no_nvidia_driver(tmp_path: Path) -> None:
    """KubeVirt set up by hand (vfio-pci.ids on the kernel command line): no label says
    VM passthrough, the bus does."""
    facts = recorded()
    no_nvidia_stack(facts)
    _on_bus(facts, "vfio-pci", "vfio-pci")
    report = judge(tmp_path, facts, node=node_object())
    assert status(report, "driver") == Status.NOT_DEPLOYED
    assert not any(c == "driver" for c, _ in root_causes(report)), root_causes(report)


def test_a_vm_passthrough_node_with_a_gpu_left_on_nvidia_is_the_vfio_managers(tmp_path: Path) -> None:
    facts = recorded()
    _on_bus(facts, "vfio-pci", "nvidia")
    report = judge(tmp_path, facts, node=_vm_node())
    assert ("vfio-manager", "vfio_pci_not_bound") in root_causes(report)
    assert "driver nvidia" in excerpts(root_cause(report, "vfio-manager"))


def test_an_older_probe_without_the_bus_says_nothing(tmp_path: Path) -> None:
    facts = recorded()
    facts["host"].pop("pci_gpus", None)
    facts["host"].pop("pci_read", None)
    report = judge(tmp_path, facts, node=_vm_node())
    assert ("vfio-manager", "vfio_pci_not_bound") not in root_causes(report)
