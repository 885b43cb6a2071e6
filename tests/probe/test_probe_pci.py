"""NVIDIA GPUs on the PCI bus and the driver bound to each, read under a fake host root
laid out as sysfs is: /sys/bus/pci/devices/<address> links into /sys/devices, and each
function's ``driver`` links to /sys/bus/pci/drivers/<name>."""

from __future__ import annotations

import os
from pathlib import Path

from fake_host import put

from gpunode.probe.host import collect_host
from gpunode.probe.host_facts import PciGpu
from gpunode.probe.hostfs import HostFS


def _function(root: Path, address: str, ids: tuple[str, str, str], driver: str | None) -> None:
    vendor, device, pci_class = ids
    real = f"sys/devices/pci0000:00/0000:00:01.0/{address}"
    put(root, f"{real}/vendor", f"{vendor}\n")
    put(root, f"{real}/device", f"{device}\n")
    put(root, f"{real}/class", f"{pci_class}\n")
    if driver:
        (root / "sys/bus/pci/drivers" / driver).mkdir(parents=True, exist_ok=True)
        os.symlink(f"../../../../bus/pci/drivers/{driver}", root / real / "driver")
    (root / "sys/bus/pci/devices").mkdir(parents=True, exist_ok=True)
    os.symlink(f"../../../devices/pci0000:00/0000:00:01.0/{address}", root / "sys/bus/pci/devices" / address)


def test_gpus_with_their_bound_driver_and_nothing_else(tmp_path: Path) -> None:
    root = tmp_path / "host"
    _function(root, "0000:18:00.0", ("0x10de", "0x2330", "0x030200"), "nvidia")  # H100 SXM
    _function(root, "0000:3b:00.0", ("0x10de", "0x2330", "0x030200"), "vfio-pci")
    _function(root, "0000:5d:00.0", ("0x10de", "0x20b5", "0x030200"), None)  # A100 80GB, unbound
    _function(root, "0000:05:00.0", ("0x10de", "0x22a3", "0x068000"), "nvidia")  # NVSwitch
    _function(root, "0000:1a:00.0", ("0x15b3", "0x1021", "0x020700"), "mlx5_core")  # ConnectX-7
    host, _ = collect_host(HostFS(str(root)), kernel_log=False)
    assert host.pci_read
    assert sorted(host.pci_gpus, key=lambda g: g.address) == [
        PciGpu("0000:18:00.0", "0x2330", "nvidia"),
        PciGpu("0000:3b:00.0", "0x2330", "vfio-pci"),
        PciGpu("0000:5d:00.0", "0x20b5", None),
    ]


def test_a_host_without_pci_sysfs_says_nothing_about_binding(tmp_path: Path) -> None:
    root = tmp_path / "host"
    put(root, "proc/sys/kernel/osrelease", "6.8.0-51-generic\n")
    host, _ = collect_host(HostFS(str(root)), kernel_log=False)
    assert not host.pci_read and host.pci_gpus == ()
