"""The host's facts for layers 0-2 (``HostFacts`` and its parts), as the probe's result holds them.

Their own module, apart from the readers that fill them (``probe.host``): the probe's result,
the checks and the agent read the facts without importing the readers and the parsers
behind them; the Structs hold only the parsers' types.
"""

from __future__ import annotations

import msgspec

from gpunode.parse.driver_version import DriverVersion
from gpunode.parse.infiniband import RdmaPort
from gpunode.parse.kernel_log import XidEvent
from gpunode.parse.modules import KernelModule
from gpunode.parse.oci_hooks import OciHook
from gpunode.parse.runtime_config import ContainerdConfig, CrioConfig


class KernelLogFacts(msgspec.Struct, frozen=True):
    """What the ring buffer says; ``source`` is None when it could not be read."""

    source: str | None
    error: str | None = None
    truncated: bool = False
    xids: tuple[XidEvent, ...] = ()
    fallen_off_bus: tuple[tuple[int, str], ...] = ()
    nvrm_errors: tuple[tuple[int, str], ...] = ()
    driver_loaded: str | None = None
    driver_loaded_uptime_s: float | None = None
    pci_to_uuid: dict[str, str] = msgspec.field(default_factory=dict)


class RuntimeConfigFact(msgspec.Struct, frozen=True):
    """One container runtime config file found on the node, parsed or not."""

    runtime: str  # "containerd" | "crio"
    distribution: str
    path: str
    containerd: ContainerdConfig | None = None
    crio: CrioConfig | None = None
    error: str | None = None


class CdiSpecFact(msgspec.Struct, frozen=True):
    """A CDI spec file; ``error`` set when it does not parse."""

    path: str
    kind: str | None
    devices: tuple[str, ...]
    error: str | None = None


class OciHookFact(msgspec.Struct, frozen=True):
    """An OCI hook file; ``binary_present`` says whether the path it runs exists."""

    file: str
    hook: OciHook | None = None
    error: str | None = None
    binary_present: bool | None = None


class ValidationMarker(msgspec.Struct, frozen=True):
    """A GPU Operator marker under /run/nvidia/validations."""

    name: str
    mtime: float
    size: int
    older_than_driver_load: bool | None


class PciGpu(msgspec.Struct, frozen=True):
    """An NVIDIA GPU's PCI function under /sys/bus/pci/devices (vendor 0x10de, display
    class 0x03) and the kernel driver bound to it: ``nvidia`` for containers, ``vfio-pci``
    for a VM to take it whole, ``nouveau``, or None when no driver is bound."""

    address: str  # 0000:3b:00.0
    device: str  # PCI device id, 0x2330
    driver: str | None


class HostFacts(msgspec.Struct, frozen=True):
    """Layer 0-2 facts; see docs/probe.md for each field's meaning."""

    kernel_release: str | None = None
    os_release: dict[str, str] = msgspec.field(default_factory=dict)
    boot_time: float | None = None
    driver: DriverVersion | None = None
    driver_error: str | None = None
    driver_loaded_at: float | None = None
    modules: dict[str, KernelModule] = msgspec.field(default_factory=dict)
    modules_error: str | None = None
    device_nodes: tuple[str, ...] = ()
    secure_boot: str = "unknown"
    kernel_log: KernelLogFacts = msgspec.field(default_factory=lambda: KernelLogFacts(None))
    runtime_configs: tuple[RuntimeConfigFact, ...] = ()
    cdi_specs: tuple[CdiSpecFact, ...] = ()
    oci_hooks: tuple[OciHookFact, ...] = ()
    oci_hook_dirs: tuple[str, ...] = ()  # the directories read; empty: not read (older probe)
    device_plugin_sockets: tuple[str, ...] = ()
    kubelet_registration_socket: bool = False
    validations: tuple[ValidationMarker, ...] = ()
    rdma_ports: tuple[RdmaPort, ...] = ()
    rdma_errors: tuple[str, ...] = ()
    processes: dict[str, bool] = msgspec.field(default_factory=dict)
    read_errors: tuple[str, ...] = ()
    #: NVIDIA GPUs on the PCI bus with their bound driver; pci_read: /sys/bus/pci was read
    #: (an older probe, or a host without sysfs, says nothing about binding)
    pci_gpus: tuple[PciGpu, ...] = ()
    pci_read: bool = False
