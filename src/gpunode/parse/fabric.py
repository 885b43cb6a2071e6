"""The ``Fabric`` section of ``nvidia-smi -q`` (text), per GPU::

    GPU 00000000:18:00.0
        ...
        Fabric
            State                             : Completed
            Status                            : Success
            CliqueId                          : 2
            ClusterUUID                       : dc6e40c4-d722-4357-9ba6-5291dd461278
            Health
                Summary                       : Unhealthy
                Bandwidth                     : Full

``State`` is the GPU's registration with Fabric Manager / the NVLink subnet manager
(``Not Supported``/``N/A`` on GPUs outside an NVSwitch fabric, ``Not Started``, ``In
Progress``, ``Completed``); ``Status`` matters only once Completed. A grep of that
section (``nvidia-smi -q | grep -A6 Fabric``) without the GPU lines is read too, the
GPUs then numbered in order.
"""

from __future__ import annotations

import msgspec

from gpunode.relazy import lazy_compile

_GPU = lazy_compile(r"^GPU ([0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f]+\.[0-9A-Fa-f])\s*$")
_FIELD = lazy_compile(r"^(\s*)([^:]+?)\s*:\s*(.*?)\s*$")
#: Values that say nothing was reported.
UNSET: frozenset[str | None] = frozenset({None, "", "N/A", "Not Supported", "[N/A]"})
ZERO_UUID = "00000000-0000-0000-0000-000000000000"


class FabricInfo(msgspec.Struct, frozen=True):
    """One GPU's fabric registration; ``None`` where nvidia-smi printed N/A."""

    gpu: str  # the PCI bus id, or "GPU <n>" in order when the section was cut out
    state: str | None
    status: str | None
    clique_id: str | None
    cluster_uuid: str | None
    health: dict[str, str] = msgspec.field(default_factory=dict)

    @property
    def registered(self) -> bool:
        """Completed with Success and a real cluster: the GPU is in an NVLink domain."""
        return (
            self.state == "Completed"
            and self.status == "Success"
            and self.cluster_uuid not in (None, ZERO_UUID)
        )


def parse_fabric_sections(text: str) -> list[FabricInfo]:
    """Each ``Fabric`` section in order, named by the GPU header above it."""
    out: list[FabricInfo] = []
    gpu: str | None = None
    section: dict[str, str] | None = None
    indent = 0
    for raw in [*text.splitlines(), "--"]:
        line = raw.rstrip()
        header = _GPU.match(line)
        depth = len(line) - len(line.lstrip())
        if section is not None and line.strip() and (depth <= indent or line == "--"):
            out.append(_info(gpu or f"GPU {len(out)}", section))
            section = None
        if header:
            gpu = header.group(1)
        elif line.strip() == "Fabric":
            section, indent = {}, depth
        elif section is not None and (found := _FIELD.match(line)):
            section.setdefault(found.group(2), found.group(3))
    return out


def _info(gpu: str, fields: dict[str, str]) -> FabricInfo:
    health_keys = ("Summary", "Bandwidth", "Route Recovery in progress", "Route Unhealthy",
                   "Access Timeout Recovery", "Incorrect Configuration")
    return FabricInfo(
        gpu=gpu,
        state=_set(fields.get("State")),
        status=_set(fields.get("Status")),
        clique_id=_set(fields.get("CliqueId")),
        cluster_uuid=_set(fields.get("ClusterUUID")),
        health={k: v for k in health_keys if (v := fields.get(k, "")) not in UNSET},
    )


def _set(value: str | None) -> str | None:
    return None if value is None or value in UNSET else value


def fabric_troubles(info: FabricInfo) -> list[str]:
    """What a GPU's fabric section says is wrong, in nvidia-smi's words (empty when
    healthy or not on a fabric)."""
    if info.state is None:
        return []
    if info.state != "Completed":
        return [f"State {info.state}"]
    # (a zero ClusterUUID with Success is a single-node NVSwitch system: HGX H100)
    troubles = [] if info.status in (None, "Success") else [f"Status {info.status}"]
    summary = info.health.get("Summary")
    if summary is not None and summary not in ("Healthy",):
        troubles.append(f"Health Summary {summary}")
    return troubles
