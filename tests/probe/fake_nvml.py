"""A stand-in for the ``pynvml`` module, for tests on machines without a GPU.

Constants, ``NVMLError`` and the ctypes structs come from the real bindings; only the
NVML calls are answered from a per-GPU table, and an entry that is an NVML error
code makes that call raise exactly what the real library raises.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pynvml

NOT_SUPPORTED = pynvml.NVML_ERROR_NOT_SUPPORTED
GPU_IS_LOST = pynvml.NVML_ERROR_GPU_IS_LOST


@dataclass
class FakeGpu:
    """Answers for one GPU; ``errors`` maps an NVML function name to an error code."""

    name: str = "NVIDIA H100 80GB HBM3"
    uuid: str = "GPU-0b1cd8a4-36d2-9e1f-4f7e-8a1a4c3e2b61"
    bus_id: str = "00000000:18:00.0"
    minor: int = 0
    memory_total: int = 81559 * 2**20
    temperature: int = 41
    nvlinks: int = 18
    fabric_state: int = pynvml.NVML_GPU_FABRIC_STATE_COMPLETED
    clock_reasons: int = 0x1
    recovery_action: int = 0
    handle_error: int | None = None
    errors: dict[str, int] = field(default_factory=dict)
    inactive_links: tuple[int, ...] = (3,)
    #: link -> remote PCI bus id; links not listed end at an NVSwitch
    remote: dict[int, str] = field(default_factory=dict)
    #: link -> {NVML counter constant: value}
    link_errors: dict[int, dict[int, int]] = field(default_factory=dict)
    cluster_uuid: bytes = bytes(16)
    clique_id: int = 0
    health_mask: int = 0
    fabric_v: bool = True  # the driver has nvmlDeviceGetGpuFabricInfoV


class FakeNvml:
    """Module-like object with the pynvml API subset the probe calls."""

    def __init__(
        self,
        gpus: list[FakeGpu],
        init_error: int | None = None,
        ancestor: int = pynvml.NVML_TOPOLOGY_SYSTEM,
    ) -> None:
        self.gpus = gpus
        self.ancestor = ancestor
        self.init_error = init_error
        self.shutdowns = 0
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(pynvml, name)

    def __dir__(self) -> list[str]:
        return sorted(set(dir(pynvml)) | set(super().__dir__()))

    # library
    def nvmlInit(self) -> None:
        if self.init_error is not None:
            raise pynvml.NVMLError(self.init_error)

    def nvmlShutdown(self) -> None:
        self.shutdowns += 1

    def nvmlSystemGetDriverVersion(self) -> str:
        return "570.133.20"

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        return 12080

    def nvmlSystemGetNVMLVersion(self) -> str:
        return "12.570.133.20"

    def nvmlDeviceGetCount(self) -> int:
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> FakeGpu:
        gpu = self.gpus[index]
        if gpu.handle_error is not None:
            raise pynvml.NVMLError(gpu.handle_error)
        return gpu

    def _answer(self, fn: str, gpu: FakeGpu, value: Any) -> Any:
        self.calls.append(fn)
        if fn in gpu.errors:
            raise pynvml.NVMLError(gpu.errors[fn])
        return value

    # per device
    def nvmlDeviceGetName(self, h: FakeGpu) -> str:
        return self._answer("nvmlDeviceGetName", h, h.name)

    def nvmlDeviceGetUUID(self, h: FakeGpu) -> str:
        return self._answer("nvmlDeviceGetUUID", h, h.uuid)

    def nvmlDeviceGetSerial(self, h: FakeGpu) -> str:
        return self._answer("nvmlDeviceGetSerial", h, "1653923000000")

    def nvmlDeviceGetPciInfo(self, h: FakeGpu) -> Any:
        return self._answer("nvmlDeviceGetPciInfo", h, SimpleNamespace(busId=h.bus_id.encode()))

    def nvmlDeviceGetMinorNumber(self, h: FakeGpu) -> int:
        return self._answer("nvmlDeviceGetMinorNumber", h, h.minor)

    def nvmlDeviceGetArchitecture(self, h: FakeGpu) -> int:
        return self._answer("nvmlDeviceGetArchitecture", h, pynvml.NVML_DEVICE_ARCH_HOPPER)

    def nvmlDeviceGetCudaComputeCapability(self, h: FakeGpu) -> tuple[int, int]:
        return self._answer("nvmlDeviceGetCudaComputeCapability", h, (9, 0))

    def nvmlDeviceGetVbiosVersion(self, h: FakeGpu) -> str:
        return self._answer("nvmlDeviceGetVbiosVersion", h, "96.00.99.00.01")

    def nvmlDeviceGetMemoryInfo(self, h: FakeGpu) -> Any:
        info = SimpleNamespace(total=h.memory_total, used=h.memory_total // 4)
        return self._answer("nvmlDeviceGetMemoryInfo", h, info)

    def nvmlDeviceGetTemperature(self, h: FakeGpu, sensor: int) -> int:
        return self._answer("nvmlDeviceGetTemperature", h, h.temperature)

    def nvmlDeviceGetTemperatureThreshold(self, h: FakeGpu, kind: int) -> int:
        value = 87 if kind == pynvml.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN else 92
        return self._answer("nvmlDeviceGetTemperatureThreshold", h, value)

    def nvmlDeviceGetPowerUsage(self, h: FakeGpu) -> int:
        return self._answer("nvmlDeviceGetPowerUsage", h, 583417)

    def nvmlDeviceGetEnforcedPowerLimit(self, h: FakeGpu) -> int:
        return self._answer("nvmlDeviceGetEnforcedPowerLimit", h, 700000)

    def nvmlDeviceGetEccMode(self, h: FakeGpu) -> list[int]:
        return self._answer("nvmlDeviceGetEccMode", h, [1, 1])

    def nvmlDeviceGetTotalEccErrors(self, h: FakeGpu, kind: int, counter: int) -> int:
        uncorrected = kind == pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED
        return self._answer("nvmlDeviceGetTotalEccErrors", h, 2 if uncorrected else 7)

    def nvmlDeviceGetRetiredPages(self, h: FakeGpu, cause: int) -> list[int]:
        return self._answer("nvmlDeviceGetRetiredPages", h, [])

    def nvmlDeviceGetRetiredPagesPendingStatus(self, h: FakeGpu) -> int:
        return self._answer("nvmlDeviceGetRetiredPagesPendingStatus", h, 0)

    def nvmlDeviceGetRemappedRows(self, h: FakeGpu) -> tuple[int, int, int, int]:
        return self._answer("nvmlDeviceGetRemappedRows", h, (0, 1, 1, 0))

    def nvmlDeviceGetCurrentClocksEventReasons(self, h: FakeGpu) -> int:
        return self._answer("nvmlDeviceGetCurrentClocksEventReasons", h, h.clock_reasons)

    def nvmlDeviceGetCurrPcieLinkGeneration(self, h: FakeGpu) -> int:
        return self._answer("nvmlDeviceGetCurrPcieLinkGeneration", h, 5)

    def nvmlDeviceGetMaxPcieLinkGeneration(self, h: FakeGpu) -> int:
        return self._answer("nvmlDeviceGetMaxPcieLinkGeneration", h, 5)

    def nvmlDeviceGetCurrPcieLinkWidth(self, h: FakeGpu) -> int:
        return self._answer("nvmlDeviceGetCurrPcieLinkWidth", h, 8)

    def nvmlDeviceGetMaxPcieLinkWidth(self, h: FakeGpu) -> int:
        return self._answer("nvmlDeviceGetMaxPcieLinkWidth", h, 16)

    def nvmlDeviceGetUtilizationRates(self, h: FakeGpu) -> SimpleNamespace:
        return self._answer("nvmlDeviceGetUtilizationRates", h, SimpleNamespace(gpu=0, memory=0))

    def nvmlDeviceGetPerformanceState(self, h: FakeGpu) -> int:
        return self._answer("nvmlDeviceGetPerformanceState", h, 0)

    def nvmlDeviceGetVirtualizationMode(self, h: FakeGpu) -> int:
        return self._answer("nvmlDeviceGetVirtualizationMode", h, 0)

    def nvmlDeviceGetMigMode(self, h: FakeGpu) -> list[int]:
        return self._answer("nvmlDeviceGetMigMode", h, [0, 1])

    def nvmlDeviceGetPersistenceMode(self, h: FakeGpu) -> int:
        return self._answer("nvmlDeviceGetPersistenceMode", h, 1)

    def nvmlDeviceGetComputeMode(self, h: FakeGpu) -> int:
        return self._answer("nvmlDeviceGetComputeMode", h, 0)

    def nvmlDeviceGetNvLinkState(self, h: FakeGpu, link: int) -> int:
        self._answer("nvmlDeviceGetNvLinkState", h, None)
        if link >= h.nvlinks:
            raise pynvml.NVMLError(NOT_SUPPORTED)
        return 0 if link in h.inactive_links else 1

    def nvmlDeviceGetNvLinkVersion(self, h: FakeGpu, link: int) -> int:
        return self._answer("nvmlDeviceGetNvLinkVersion", h, 4)

    def nvmlDeviceGetNvLinkRemotePciInfo(self, h: FakeGpu, link: int) -> Any:
        bus = h.remote.get(link, "00000000:07:00.0")
        return self._answer("nvmlDeviceGetNvLinkRemotePciInfo", h, SimpleNamespace(busId=bus.encode()))

    def nvmlDeviceGetNvLinkRemoteDeviceType(self, h: FakeGpu, link: int) -> int:
        gpu, switch = pynvml.NVML_NVLINK_DEVICE_TYPE_GPU, pynvml.NVML_NVLINK_DEVICE_TYPE_SWITCH
        kind = gpu if link in h.remote else switch
        return self._answer("nvmlDeviceGetNvLinkRemoteDeviceType", h, kind)

    def nvmlDeviceGetNvLinkErrorCounter(self, h: FakeGpu, link: int, counter: int) -> int:
        return self._answer("nvmlDeviceGetNvLinkErrorCounter", h, h.link_errors.get(link, {}).get(counter, 0))

    def nvmlDeviceGetTopologyCommonAncestor(self, a: FakeGpu, b: FakeGpu) -> int:
        return self._answer("nvmlDeviceGetTopologyCommonAncestor", a, self.ancestor)

    def _fill_fabric(self, h: FakeGpu, info: Any) -> None:
        info.state = h.fabric_state
        info.status = 0
        info.cliqueId = h.clique_id
        for n, byte in enumerate(h.cluster_uuid):
            info.clusterUuid[n] = byte
        if hasattr(info, "healthMask"):
            info.healthMask = h.health_mask

    def nvmlDeviceGetGpuFabricInfo(self, h: FakeGpu, ref: Any) -> int:
        self._answer("nvmlDeviceGetGpuFabricInfo", h, None)
        self._fill_fabric(h, ref._obj)  # like the C library, write through the pointer (byref)
        return 0

    def nvmlDeviceGetGpuFabricInfoV(self, h: FakeGpu, ref: Any) -> int:
        if not h.fabric_v:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_FUNCTION_NOT_FOUND)
        self._answer("nvmlDeviceGetGpuFabricInfoV", h, None)
        self._fill_fabric(h, ref._obj)
        return 0

    def nvmlDeviceGetFieldValues(self, h: FakeGpu, ids: list[int]) -> Any:
        self._answer("nvmlDeviceGetFieldValues", h, None)
        values = (pynvml.c_nvmlFieldValue_t * len(ids))()
        values[0].fieldId = ids[0]
        values[0].nvmlReturn = 0
        values[0].value.uiVal = h.recovery_action
        return values
