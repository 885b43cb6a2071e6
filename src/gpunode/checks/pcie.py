"""PCIe link speed and width, judged as the hardware reports them.

An idle GPU lowers its link generation (and consumer boards their width) to save
power, and trains back up under load; a virtual machine sees the link its host
shaped (T4, A10G and L4 instances show x8 of x16 by design). So a link is only
called downtrained when the GPU is busy (utilisation above zero in performance
state P0): the generation against the lowest maximum reported (link max, device
max, host max: the slot's real limit where the driver says it), the width only on
bare metal, where nvidia-smi's maximum is the slot's. Shared by the nvidia-smi and
the probe checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

_BARE_METAL = (None, "None")


@dataclass(frozen=True)
class LinkReading:
    """One GPU's link and load as nvidia-smi or NVML reported them (None: not reported)."""

    utilization_pct: int | None
    performance_state: str | None
    virtualization_mode: str | None
    gen_current: int | None
    gen_max: int | None
    width_current: int | None
    width_max: int | None
    gen_device_max: int | None = None
    gen_host_max: int | None = None

    @property
    def busy(self) -> bool:
        """Under load: a GPU at rest may lower its link to save power."""
        return bool(self.utilization_pct) and self.performance_state == "P0"


class LinkFacts(Protocol):
    """What nvidia-smi's XML and the probe's NVML facts both say about a GPU's link."""

    @property
    def utilization_gpu_pct(self) -> int | None: ...
    @property
    def performance_state(self) -> str | None: ...
    @property
    def virtualization_mode(self) -> str | None: ...
    @property
    def pcie_gen_current(self) -> int | None: ...
    @property
    def pcie_gen_max(self) -> int | None: ...
    @property
    def pcie_width_current(self) -> int | None: ...
    @property
    def pcie_width_max(self) -> int | None: ...


def reading_of(
    gpu: LinkFacts, gen_device_max: int | None = None, gen_host_max: int | None = None
) -> LinkReading:
    """One reading from either source; only nvidia-smi reports the device and host maxima."""
    return LinkReading(
        utilization_pct=gpu.utilization_gpu_pct,
        performance_state=gpu.performance_state,
        virtualization_mode=gpu.virtualization_mode,
        gen_current=gpu.pcie_gen_current,
        gen_max=gpu.pcie_gen_max,
        width_current=gpu.pcie_width_current,
        width_max=gpu.pcie_width_max,
        gen_device_max=gen_device_max,
        gen_host_max=gen_host_max,
    )


def shortfall(link: LinkReading) -> str | None:
    """How the link falls short of what it should train to under load; None when it does
    not, or when the reading cannot tell (idle GPU, no maximum known)."""
    if not link.busy:
        return None
    found: list[str] = []
    limits = [g for g in (link.gen_max, link.gen_device_max, link.gen_host_max) if g]
    if link.gen_current and limits and link.gen_current < min(limits):
        found.append(f"gen {link.gen_current} of {min(limits)}")
    bare_metal = link.virtualization_mode in _BARE_METAL
    if bare_metal and link.width_current and link.width_max and link.width_current < link.width_max:
        found.append(f"x{link.width_current} of x{link.width_max}")
    if not found:
        return None
    return f"PCIe link {', '.join(found)} at {link.utilization_pct}% utilisation ({link.performance_state})"
