"""GPU facts through NVML (``nvidia-ml-py``), read-only.

Every NVML call goes through :class:`_Recorder`, which stores its outcome in a
``calls`` table: ``"ok"``, ``"not_supported"`` (the feature does not exist on this
GPU or mode: a fact, not a failure), or the NVML error name in lower case
(``"gpu_is_lost"``, ``"no_permission"``, ...). Initialisation failures
(``library_not_found``, ``driver_not_loaded``, ``lib_rm_version_mismatch``, ...) are
facts too: the probe never raises because the driver is broken, that is what it is
there to report. Only query functions are called; nothing changes GPU state.
"""

from __future__ import annotations

import ctypes
import os
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

NvmlLib = Any  # the pynvml module, or a test double with the same functions


class NvLink(msgspec.Struct, frozen=True):
    """One NVLink: whether it is up, what it reaches, and its error counters.

    ``errors`` holds the data-link counters since the driver loaded (``replay``,
    ``recovery``, ``crc_flit``, ``crc_data``), only those NVML answered; newer GPUs
    answer some of them ``not_supported`` (recorded once per GPU in ``calls``).
    """

    link: int
    active: bool
    version: int | None = None
    remote_pci_bus_id: str | None = None
    remote_device_type: str | None = None  # "GPU", "NVSwitch", "IBMNPU", "unknown"
    errors: dict[str, int] = msgspec.field(default_factory=dict)


class GpuPair(msgspec.Struct, frozen=True):
    """How two GPUs reach each other, in ``nvidia-smi topo -m`` words.

    ``link`` is ``NV<n>`` when ``n`` NVLinks join them directly (an NVSwitch system
    shows its switch-routed links as ``NV<n>`` too, from each GPU's own links), else the
    PCIe path NVML reports: ``PIX`` (one bridge), ``PXB`` (several bridges), ``PHB``
    (the host bridge), ``NODE`` (across host bridges of one NUMA node), ``SYS`` (across
    NUMA nodes), ``SELF``/``INTERNAL`` for two halves of one board.
    """

    a: int
    b: int
    link: str
    pcie: str | None = None
    nvlinks: int = 0


class NvmlGpu(msgspec.Struct, frozen=True):
    """One GPU; a ``None`` value is explained by the call's entry in ``calls``."""

    index: int
    calls: dict[str, str]
    lost: bool = False
    seconds: float = 0.0
    name: str | None = None
    uuid: str | None = None
    serial: str | None = None
    pci_bus_id: str | None = None
    minor_number: int | None = None
    architecture: str | None = None
    cuda_compute_capability: str | None = None
    vbios_version: str | None = None
    memory_total_mib: int | None = None
    memory_used_mib: int | None = None
    temperature_c: int | None = None
    slowdown_temp_c: int | None = None
    shutdown_temp_c: int | None = None
    power_draw_w: float | None = None
    power_limit_w: float | None = None
    ecc_mode_current: str | None = None
    ecc_mode_pending: str | None = None
    ecc_volatile_dbe: int | None = None
    ecc_aggregate_dbe: int | None = None
    ecc_volatile_sbe: int | None = None
    retired_pages_dbe: int | None = None
    retired_pages_pending: bool | None = None
    remapped_rows_correctable: int | None = None
    remapped_rows_uncorrectable: int | None = None
    remapped_rows_pending: bool | None = None
    remapped_rows_failure: bool | None = None
    clock_event_reasons_active: tuple[str, ...] | None = None
    pcie_gen_current: int | None = None
    pcie_gen_max: int | None = None
    pcie_width_current: int | None = None
    pcie_width_max: int | None = None
    utilization_gpu_pct: int | None = None
    performance_state: str | None = None
    virtualization_mode: str | None = None
    mig_mode_current: str | None = None
    mig_mode_pending: str | None = None
    persistence_mode: str | None = None
    compute_mode: str | None = None
    nvlinks: tuple[NvLink, ...] = ()
    fabric_state: str | None = None
    fabric_status: str | None = None
    fabric_cluster_uuid: str | None = None
    fabric_clique_id: int | None = None
    fabric_health: tuple[str, ...] | None = None
    recovery_action: str | None = None


class NvmlFacts(msgspec.Struct, frozen=True):
    """Driver-level NVML answers and one entry per GPU."""

    bindings_version: str | None
    init_ok: bool
    init_error: str | None
    init_error_message: str | None
    init_seconds: float
    query_seconds: float
    library_path: str | None = None
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    nvml_version: str | None = None
    device_count: int | None = None
    gpus: tuple[NvmlGpu, ...] = ()
    calls: dict[str, str] = msgspec.field(default_factory=dict)
    topology: tuple[GpuPair, ...] = ()


# Where a driver's libnvidia-ml lives on the host, relative to --host-root; used only
# when the probe's own loader cannot find the library (probe running in a pod).
HOST_LIBRARY_DIRS = (
    "usr/lib/x86_64-linux-gnu",
    "usr/lib64",
    "usr/lib/aarch64-linux-gnu",
    "usr/lib",
    "run/nvidia/driver/usr/lib/x86_64-linux-gnu",
    "run/nvidia/driver/usr/lib64",
    "run/nvidia/driver/usr/lib/aarch64-linux-gnu",
    "home/kubernetes/bin/nvidia/lib64",
)
_CLOCK_REASON_BITS = (
    (0x1, "gpu_idle"),
    (0x2, "applications_clocks_setting"),
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"),
    (0x100, "display_clocks_setting"),
)
_FABRIC_STATES = {1: "Not Started", 2: "In Progress", 3: "Completed"}
_RECOVERY_ACTIONS = {
    0: "None",
    1: "GPU Reset Required",
    2: "Node Reboot Required",
    3: "Drain P2P",
    4: "Drain and Reset",
    5: "Recover IMEX Domain",
    6: "Bus Reset",
    7: "System Reboot",
}
_COMPUTE_MODES = {0: "Default", 1: "Exclusive_Thread", 2: "Prohibited", 3: "Exclusive_Process"}


def import_pynvml() -> NvmlLib | None:
    """The bindings module, or None when nvidia-ml-py is not installed."""
    try:
        import pynvml
    except ImportError:
        return None
    return pynvml


_CONSTANT_CACHE: weakref.WeakKeyDictionary[Any, dict[str, dict[int, str]]] = (
    weakref.WeakKeyDictionary()
)
_BINDINGS_VERSION: list[str | None] = []


def constants(lib: NvmlLib, prefix: str) -> dict[int, str]:
    """Value -> name (prefix removed) of the bindings' integer constants, cached per module."""
    per_lib = _CONSTANT_CACHE.setdefault(lib, {})
    if prefix not in per_lib:
        table: dict[int, str] = {}
        for attr in sorted(dir(lib)):
            value = getattr(lib, attr)
            if attr.startswith(prefix) and isinstance(value, int):
                table.setdefault(value, attr.removeprefix(prefix))
        per_lib[prefix] = table
    return per_lib[prefix]


def error_name(lib: NvmlLib, exc: BaseException) -> str:
    """``NVML_ERROR_GPU_IS_LOST`` -> ``gpu_is_lost``; non-NVML errors keep their type."""
    value = getattr(exc, "value", None)
    if isinstance(exc, lib.NVMLError) and isinstance(value, int):
        name = constants(lib, "NVML_ERROR_").get(value)
        return name.lower() if name else f"nvml_error_{value}"
    return type(exc).__name__


def bindings_version(lib: NvmlLib) -> str | None:
    """The installed nvidia-ml-py version (looked up once; metadata scans are slow)."""
    if not _BINDINGS_VERSION:
        _BINDINGS_VERSION.append(_dist_info_version(lib) or _metadata_version(lib))
    return _BINDINGS_VERSION[0]


def _dist_info_version(lib: NvmlLib) -> str | None:
    """The version in the name of the ``nvidia_ml_py-<version>.dist-info`` folder beside the
    module: what ``importlib.metadata`` would read, without loading it (15 ms of imports)."""
    where = getattr(lib, "__file__", None)
    if not where:
        return None
    found = sorted(Path(where).parent.glob("nvidia_ml_py-*.dist-info"))
    return found[0].name[len("nvidia_ml_py-"):-len(".dist-info")] if len(found) == 1 else None


def _metadata_version(lib: NvmlLib) -> str | None:
    from importlib import metadata

    try:
        return metadata.version("nvidia-ml-py")
    except metadata.PackageNotFoundError:
        return getattr(lib, "__version__", None)


class _Recorder:
    """Runs NVML calls, records each outcome, and stops querying a lost GPU."""

    def __init__(self, lib: NvmlLib) -> None:
        self.lib = lib
        self.calls: dict[str, str] = {}
        self.lost = False

    def call(self, label: str, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)``, or None with the reason recorded under ``label``."""
        if self.lost:
            self.calls[label] = "skipped_gpu_lost"
            return None
        try:
            result = fn(*args)
        except Exception as exc:  # any NVML failure is a recorded fact
            self.calls[label] = error_name(self.lib, exc)
            self.lost = self.calls[label] == "gpu_is_lost"
            return None
        self.calls[label] = "ok"
        return result


def collect_nvml(host_root: str = "/", lib: NvmlLib | None = None) -> NvmlFacts:
    """Initialise NVML, read the driver and every GPU, shut NVML down again."""
    lib = lib if lib is not None else import_pynvml()
    if lib is None:
        return NvmlFacts(None, False, "bindings_missing", "nvidia-ml-py is not installed", 0, 0)
    started = time.perf_counter()
    error, message, library = _init(lib, host_root)
    init_seconds = time.perf_counter() - started
    version = bindings_version(lib)
    if error is not None:
        return NvmlFacts(version, False, error, message, init_seconds, 0.0, library)
    try:
        return _query(lib, version, init_seconds, library)
    finally:
        _shutdown(lib)


def _init(lib: NvmlLib, host_root: str) -> tuple[str | None, str | None, str | None]:
    """nvmlInit; on library_not_found retry with the host's library under host_root."""
    error, message = _try_init(lib)
    if error != "library_not_found" or host_root in ("", "/"):
        return error, message, None
    library = _load_host_library(lib, host_root)
    if library is None:
        return error, message, None
    error, message = _try_init(lib)
    return error, message, library


def _try_init(lib: NvmlLib) -> tuple[str | None, str | None]:
    try:
        lib.nvmlInit()
    except Exception as exc:  # init failures are the facts we are after
        return error_name(lib, exc), str(exc)
    return None, None


def _load_host_library(lib: NvmlLib, host_root: str) -> str | None:
    """Point the bindings at the host's libnvidia-ml.so.1 (they load it lazily)."""
    for directory in HOST_LIBRARY_DIRS:
        path = os.path.join(host_root, directory, "libnvidia-ml.so.1")
        if not os.path.exists(path):
            continue
        try:
            lib.nvmlLib = ctypes.CDLL(path)
        except OSError:
            continue
        return path
    return None


def _shutdown(lib: NvmlLib) -> None:
    try:
        lib.nvmlShutdown()
    except Exception:  # nothing useful to report after the facts are read
        return


def _query(lib: NvmlLib, version: str | None, init_seconds: float, library: str | None) -> NvmlFacts:
    """System answers and every GPU."""
    started = time.perf_counter()
    rec = _Recorder(lib)
    count = rec.call("nvmlDeviceGetCount", lib.nvmlDeviceGetCount)
    gpus = tuple(_gpu(lib, index) for index in range(count or 0))
    topology = _topology(lib, gpus, rec.calls)
    return NvmlFacts(
        bindings_version=version,
        init_ok=True,
        init_error=None,
        init_error_message=None,
        init_seconds=init_seconds,
        query_seconds=time.perf_counter() - started,
        library_path=library,
        driver_version=rec.call("nvmlSystemGetDriverVersion", lib.nvmlSystemGetDriverVersion),
        cuda_driver_version=_cuda_version(
            rec.call("nvmlSystemGetCudaDriverVersion", lib.nvmlSystemGetCudaDriverVersion)
        ),
        nvml_version=rec.call("nvmlSystemGetNVMLVersion", lib.nvmlSystemGetNVMLVersion),
        device_count=count,
        gpus=gpus,
        calls=rec.calls,
        topology=topology,
    )


def _cuda_version(value: int | None) -> str | None:
    """12080 -> "12.8" (the form nvidia-smi prints)."""
    if value is None:
        return None
    return f"{value // 1000}.{(value % 1000) // 10}"


def _gpu(lib: NvmlLib, index: int) -> NvmlGpu:
    """Every fact for GPU ``index``; a lost GPU stops after the failing call."""
    started = time.perf_counter()
    rec = _Recorder(lib)
    handle = rec.call("nvmlDeviceGetHandleByIndex", lib.nvmlDeviceGetHandleByIndex, index)
    fields: dict[str, Any] = {}
    if handle is not None:
        for reader in _READERS:
            fields.update(reader(rec, lib, handle))
    return NvmlGpu(
        index=index,
        calls=rec.calls,
        lost=rec.lost,
        seconds=time.perf_counter() - started,
        **fields,
    )


Fields = dict[str, Any]


def _identity(rec: _Recorder, lib: NvmlLib, h: Any) -> Fields:
    pci = rec.call("nvmlDeviceGetPciInfo", lib.nvmlDeviceGetPciInfo, h)
    arch = rec.call("nvmlDeviceGetArchitecture", lib.nvmlDeviceGetArchitecture, h)
    cc = rec.call("nvmlDeviceGetCudaComputeCapability", lib.nvmlDeviceGetCudaComputeCapability, h)
    return {
        "name": rec.call("nvmlDeviceGetName", lib.nvmlDeviceGetName, h),
        "uuid": rec.call("nvmlDeviceGetUUID", lib.nvmlDeviceGetUUID, h),
        "serial": rec.call("nvmlDeviceGetSerial", lib.nvmlDeviceGetSerial, h),
        "pci_bus_id": _text(pci.busId) if pci is not None else None,
        "minor_number": rec.call("nvmlDeviceGetMinorNumber", lib.nvmlDeviceGetMinorNumber, h),
        "architecture": _architecture(lib, arch),
        "cuda_compute_capability": f"{cc[0]}.{cc[1]}" if cc is not None else None,
        "vbios_version": rec.call("nvmlDeviceGetVbiosVersion", lib.nvmlDeviceGetVbiosVersion, h),
    }


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _architecture(lib: NvmlLib, value: int | None) -> str | None:
    """NVML_DEVICE_ARCH_HOPPER -> "Hopper", looked up in the bindings' own constants."""
    if value is None:
        return None
    name = constants(lib, "NVML_DEVICE_ARCH_").get(value)
    return name.title() if name else str(value)


def _memory_and_thermal(rec: _Recorder, lib: NvmlLib, h: Any) -> Fields:
    mem = rec.call("nvmlDeviceGetMemoryInfo", lib.nvmlDeviceGetMemoryInfo, h)
    temp = rec.call("nvmlDeviceGetTemperature", lib.nvmlDeviceGetTemperature, h, lib.NVML_TEMPERATURE_GPU)
    threshold = lib.nvmlDeviceGetTemperatureThreshold
    return {
        "memory_total_mib": mem.total // 2**20 if mem is not None else None,
        "memory_used_mib": mem.used // 2**20 if mem is not None else None,
        "temperature_c": temp,
        "slowdown_temp_c": rec.call(
            "nvmlDeviceGetTemperatureThreshold(SLOWDOWN)",
            threshold,
            h,
            lib.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN,
        ),
        "shutdown_temp_c": rec.call(
            "nvmlDeviceGetTemperatureThreshold(SHUTDOWN)",
            threshold,
            h,
            lib.NVML_TEMPERATURE_THRESHOLD_SHUTDOWN,
        ),
    }


def _power(rec: _Recorder, lib: NvmlLib, h: Any) -> Fields:
    draw = rec.call("nvmlDeviceGetPowerUsage", lib.nvmlDeviceGetPowerUsage, h)
    limit = rec.call("nvmlDeviceGetEnforcedPowerLimit", lib.nvmlDeviceGetEnforcedPowerLimit, h)
    return {
        "power_draw_w": draw / 1000 if draw is not None else None,
        "power_limit_w": limit / 1000 if limit is not None else None,
    }


def _ecc(rec: _Recorder, lib: NvmlLib, h: Any) -> Fields:
    mode = rec.call("nvmlDeviceGetEccMode", lib.nvmlDeviceGetEccMode, h)
    total = lib.nvmlDeviceGetTotalEccErrors
    unc, cor = lib.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, lib.NVML_MEMORY_ERROR_TYPE_CORRECTED
    vol, agg = lib.NVML_VOLATILE_ECC, lib.NVML_AGGREGATE_ECC
    return {
        "ecc_mode_current": _enabled(lib, mode[0]) if mode is not None else None,
        "ecc_mode_pending": _enabled(lib, mode[1]) if mode is not None else None,
        "ecc_volatile_dbe": rec.call("nvmlDeviceGetTotalEccErrors(UNC,VOL)", total, h, unc, vol),
        "ecc_aggregate_dbe": rec.call("nvmlDeviceGetTotalEccErrors(UNC,AGG)", total, h, unc, agg),
        "ecc_volatile_sbe": rec.call("nvmlDeviceGetTotalEccErrors(COR,VOL)", total, h, cor, vol),
    }


def _enabled(lib: NvmlLib, value: int) -> str:
    return "Enabled" if value == lib.NVML_FEATURE_ENABLED else "Disabled"


def _memory_repair(rec: _Recorder, lib: NvmlLib, h: Any) -> Fields:
    """Retired pages (up to Volta) and remapped rows (Ampere on); one of them is N/A."""
    cause = lib.NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR
    pages = rec.call("nvmlDeviceGetRetiredPages(DBE)", lib.nvmlDeviceGetRetiredPages, h, cause)
    pending = rec.call(
        "nvmlDeviceGetRetiredPagesPendingStatus", lib.nvmlDeviceGetRetiredPagesPendingStatus, h
    )
    rows = rec.call("nvmlDeviceGetRemappedRows", lib.nvmlDeviceGetRemappedRows, h)
    return {
        "retired_pages_dbe": len(pages) if pages is not None else None,
        "retired_pages_pending": bool(pending) if pending is not None else None,
        "remapped_rows_correctable": rows[0] if rows is not None else None,
        "remapped_rows_uncorrectable": rows[1] if rows is not None else None,
        "remapped_rows_pending": bool(rows[2]) if rows is not None else None,
        "remapped_rows_failure": bool(rows[3]) if rows is not None else None,
    }


def _clocks_and_pcie(rec: _Recorder, lib: NvmlLib, h: Any) -> Fields:
    reasons_fn = (
        getattr(lib, "nvmlDeviceGetCurrentClocksEventReasons", None)
        or lib.nvmlDeviceGetCurrentClocksThrottleReasons
    )
    mask = rec.call("nvmlDeviceGetCurrentClocksEventReasons", reasons_fn, h)
    return {
        "clock_event_reasons_active": _reason_names(mask) if mask is not None else None,
        "pcie_gen_current": rec.call(
            "nvmlDeviceGetCurrPcieLinkGeneration", lib.nvmlDeviceGetCurrPcieLinkGeneration, h
        ),
        "pcie_gen_max": rec.call(
            "nvmlDeviceGetMaxPcieLinkGeneration", lib.nvmlDeviceGetMaxPcieLinkGeneration, h
        ),
        "pcie_width_current": rec.call(
            "nvmlDeviceGetCurrPcieLinkWidth", lib.nvmlDeviceGetCurrPcieLinkWidth, h
        ),
        "pcie_width_max": rec.call("nvmlDeviceGetMaxPcieLinkWidth", lib.nvmlDeviceGetMaxPcieLinkWidth, h),
    }


_VIRTUALIZATION_MODES = {0: "None", 1: "Pass-Through", 2: "VGPU", 3: "Host VGPU", 4: "Host VSGA"}


def _load(rec: _Recorder, lib: NvmlLib, h: Any) -> Fields:
    """Utilisation, performance state and virtualisation: whether a link reading can be judged."""
    util = rec.call("nvmlDeviceGetUtilizationRates", _function(lib, "nvmlDeviceGetUtilizationRates"), h)
    pstate = rec.call("nvmlDeviceGetPerformanceState", _function(lib, "nvmlDeviceGetPerformanceState"), h)
    virt = rec.call("nvmlDeviceGetVirtualizationMode", _function(lib, "nvmlDeviceGetVirtualizationMode"), h)
    return {
        "utilization_gpu_pct": int(util.gpu) if util is not None else None,
        "performance_state": f"P{int(pstate)}" if pstate is not None else None,
        "virtualization_mode": _VIRTUALIZATION_MODES.get(int(virt), str(virt)) if virt is not None else None,
    }


def _function(lib: NvmlLib, name: str) -> Callable[..., Any]:
    """``lib.<name>``; bindings too old to have it answer like an unsupported call."""
    found = getattr(lib, name, None)
    if callable(found):
        return found  # type: ignore[no-any-return]

    def missing(*_args: Any) -> Any:
        raise AttributeError(f"{name} not in these NVML bindings")

    return missing


def _reason_names(mask: int) -> tuple[str, ...]:
    """Bitmask to the reason names nvidia-smi's XML uses."""
    return tuple(name for bit, name in _CLOCK_REASON_BITS if mask & bit)


def _modes(rec: _Recorder, lib: NvmlLib, h: Any) -> Fields:
    mig = rec.call("nvmlDeviceGetMigMode", lib.nvmlDeviceGetMigMode, h)
    persistence = rec.call("nvmlDeviceGetPersistenceMode", lib.nvmlDeviceGetPersistenceMode, h)
    compute = rec.call("nvmlDeviceGetComputeMode", lib.nvmlDeviceGetComputeMode, h)
    migs = ["Enabled" if v == lib.NVML_DEVICE_MIG_ENABLE else "Disabled" for v in mig or ()]
    return {
        "mig_mode_current": migs[0] if migs else None,
        "mig_mode_pending": migs[1] if migs else None,
        "persistence_mode": _enabled(lib, persistence) if persistence is not None else None,
        "compute_mode": _COMPUTE_MODES.get(compute) if compute is not None else None,
    }


_NVLINK_COUNTERS = (
    ("replay", "NVML_NVLINK_ERROR_DL_REPLAY"),
    ("recovery", "NVML_NVLINK_ERROR_DL_RECOVERY"),
    ("crc_flit", "NVML_NVLINK_ERROR_DL_CRC_FLIT"),
    ("crc_data", "NVML_NVLINK_ERROR_DL_CRC_DATA"),
)
_REMOTE_TYPES = {0: "GPU", 1: "IBMNPU", 2: "NVSwitch", 0xFF: "unknown"}
_LINK_CALLS = (
    "nvmlDeviceGetNvLinkVersion",
    "nvmlDeviceGetNvLinkRemotePciInfo",
    "nvmlDeviceGetNvLinkRemoteDeviceType",
    "nvmlDeviceGetNvLinkErrorCounter",
)


def _nvlinks(rec: _Recorder, lib: NvmlLib, h: Any) -> Fields:
    """Links until the first one the GPU does not have (NVML answers past its last link
    with not_supported or invalid_argument); for each, what it reaches and its counters."""
    links: list[NvLink] = []
    probe = _Recorder(lib)
    outcomes: dict[str, list[str]] = {name: [] for name in _LINK_CALLS}
    for link in range(int(getattr(lib, "NVML_NVLINK_MAX_LINKS", 18))):
        state = probe.call("link", lib.nvmlDeviceGetNvLinkState, h, link)
        if state is None:
            break
        links.append(_link(lib, h, link, state == lib.NVML_FEATURE_ENABLED, outcomes))
    outcome = probe.calls.get("link", "ok")
    rec.calls["nvmlDeviceGetNvLinkState"] = "ok" if links else outcome
    for name, seen in outcomes.items():
        if seen:  # one entry per function: ok when any link answered, else the first failure
            rec.calls[name] = "ok" if "ok" in seen else seen[0]
    rec.lost = rec.lost or probe.lost or "gpu_is_lost" in (o for seen in outcomes.values() for o in seen)
    return {"nvlinks": tuple(links)}


def _link(lib: NvmlLib, h: Any, link: int, active: bool, outcomes: dict[str, list[str]]) -> NvLink:
    """One link's version, remote end and error counters; failures go to ``outcomes``."""

    def ask(name: str, *args: Any) -> Any:
        one = _Recorder(lib)
        value = one.call(name, _function(lib, name), h, link, *args)
        outcomes[name].append(one.calls[name])
        return value

    version = ask("nvmlDeviceGetNvLinkVersion")
    remote = ask("nvmlDeviceGetNvLinkRemotePciInfo") if active else None
    kind = ask("nvmlDeviceGetNvLinkRemoteDeviceType") if active else None
    errors: dict[str, int] = {}
    for key, constant in _NVLINK_COUNTERS:
        counter = getattr(lib, constant, None)
        value = ask("nvmlDeviceGetNvLinkErrorCounter", counter) if counter is not None else None
        if value is not None:
            errors[key] = int(value)
    return NvLink(
        link=link,
        active=active,
        version=int(version) if version is not None else None,
        remote_pci_bus_id=_text(remote.busId) if remote is not None else None,
        remote_device_type=_REMOTE_TYPES.get(int(kind), str(kind)) if kind is not None else None,
        errors=errors,
    )


_HEALTH_BITS = (  # (shift, value meaning trouble, name) from NVML_GPU_FABRIC_HEALTH_MASK_*
    (0, 1, "degraded_bandwidth"),
    (2, 1, "route_recovery_in_progress"),
    (4, 1, "route_unhealthy"),
    (6, 1, "access_timeout_recovery"),
    (14, 2, "fabric_manager_disconnected"),
)
_INCORRECT_CONFIGURATION = {
    2: "incorrect_sysguid",
    3: "incorrect_chassis_serial",
    4: "no_partition",
    5: "insufficient_nvlinks",
    6: "incompatible_gpu_firmware",
    7: "invalid_location",
    8: "gpu_state_invalid",
}


_FABRIC_CALL = "nvmlDeviceGetGpuFabricInfo"  # the fabric's outcome, whichever variant gave it


def _fabric(rec: _Recorder, lib: NvmlLib, h: Any) -> Fields:
    """GPU fabric registration (NVSwitch and multi-node NVLink systems): state, status,
    cluster UUID and clique, and the health mask where the driver has the V call."""
    info = _fabric_info(rec, lib, h)
    if info is None:
        return {}
    state = _FABRIC_STATES.get(int(info.state))
    if state is None:
        rec.calls[_FABRIC_CALL] = "not_supported"
        return {}
    status = None
    if state == "Completed":
        status = "Success" if info.status == 0 else error_name(lib, lib.NVMLError(info.status))
    mask = getattr(info, "healthMask", None)
    return {
        "fabric_state": state,
        "fabric_status": status,
        "fabric_cluster_uuid": _fabric_uuid(bytes(info.clusterUuid)),
        "fabric_clique_id": int(info.cliqueId),
        "fabric_health": _health(int(mask)) if mask is not None else None,
    }


def _fabric_info(rec: _Recorder, lib: NvmlLib, h: Any) -> Any:
    """The versioned call first (health mask, R550+), the older one when the driver lacks it.

    The bindings forward their argument as is: the struct must go by reference.
    """
    versioned = getattr(lib, "c_nvmlGpuFabricInfoV_t", None)
    if versioned is not None and hasattr(lib, "nvmlDeviceGetGpuFabricInfoV"):
        info = versioned()
        label = "nvmlDeviceGetGpuFabricInfoV"
        answered = rec.call(label, lib.nvmlDeviceGetGpuFabricInfoV, h, ctypes.byref(info)) is not None
        if answered or rec.calls[label] not in ("function_not_found", "argument_version_mismatch"):
            rec.calls[_FABRIC_CALL] = rec.calls[label]
            return info if answered else None
    info = lib.c_nvmlGpuFabricInfo_t()
    answered = rec.call(_FABRIC_CALL, lib.nvmlDeviceGetGpuFabricInfo, h, ctypes.byref(info)) is not None
    return info if answered else None


def _fabric_uuid(raw: bytes) -> str | None:
    """16 bytes as a UUID string; all zeros (no multi-node fabric) is None."""
    if not any(raw):
        return None
    text = raw.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:32]}"


def _health(mask: int) -> tuple[str, ...]:
    """The fabric health mask's troubles by name (empty: nothing wrong it can tell)."""
    found = [name for shift, bad, name in _HEALTH_BITS if (mask >> shift) & 0x3 == bad]
    config = _INCORRECT_CONFIGURATION.get((mask >> 8) & 0xF)
    if config:
        found.append(config)
    return tuple(found)


_TOPOLOGY_LEVELS = {0: "INTERNAL", 10: "PIX", 20: "PXB", 30: "PHB", 40: "NODE", 50: "SYS"}
MAX_TOPOLOGY_GPUS = 64


def _topology(lib: NvmlLib, gpus: tuple[NvmlGpu, ...], calls: dict[str, str]) -> tuple[GpuPair, ...]:
    """Every pair of GPUs that answered: direct NVLinks counted from each GPU's own links
    (remote PCI bus id), else NVML's common PCIe ancestor."""
    usable = [g for g in gpus if not g.lost and g.pci_bus_id][:MAX_TOPOLOGY_GPUS]
    if len(usable) < 2:
        return ()
    rec = _Recorder(lib)
    handles = {g.index: rec.call("handle", lib.nvmlDeviceGetHandleByIndex, g.index) for g in usable}
    outcomes: list[str] = []
    pairs: list[GpuPair] = []
    for i, first in enumerate(usable):
        for second in usable[i + 1:]:
            pairs.append(_pair(lib, first, second, handles, outcomes))
    if outcomes:
        calls["nvmlDeviceGetTopologyCommonAncestor"] = "ok" if "ok" in outcomes else outcomes[0]
    return tuple(pairs)


def _pair(
    lib: NvmlLib, a: NvmlGpu, b: NvmlGpu, handles: dict[int, Any], outcomes: list[str]
) -> GpuPair:
    pcie = None
    ha, hb = handles.get(a.index), handles.get(b.index)
    if ha is not None and hb is not None:
        one = _Recorder(lib)
        level = one.call("ancestor", _function(lib, "nvmlDeviceGetTopologyCommonAncestor"), ha, hb)
        outcomes.append(one.calls["ancestor"])
        pcie = _TOPOLOGY_LEVELS.get(int(level), str(level)) if level is not None else None
    count = _links_between(a, b)
    link = f"NV{count}" if count else (pcie or "unknown")
    return GpuPair(a=a.index, b=b.index, link=link, pcie=pcie, nvlinks=count)


def same_bus_id(first: str | None, second: str | None) -> bool:
    """PCI bus ids compared the way they differ between tools: case and domain width."""
    if not first or not second:
        return False
    return _short_bus_id(first) == _short_bus_id(second)


def _short_bus_id(bus_id: str) -> str:
    domain, _, rest = bus_id.strip().lower().rpartition(":")
    head, _, bus = domain.rpartition(":")
    return f"{int(head or '0', 16):04x}:{bus}:{rest}" if head or bus else bus_id.lower()


def _links_between(a: NvmlGpu, b: NvmlGpu) -> int:
    """Active links of ``a`` whose far end is ``b`` (and of ``b`` ending at ``a``, whichever
    says more: a GPU whose remote-PCI call failed still shows through its peer)."""
    there = sum(1 for link in a.nvlinks if link.active and same_bus_id(link.remote_pci_bus_id, b.pci_bus_id))
    back = sum(1 for link in b.nvlinks if link.active and same_bus_id(link.remote_pci_bus_id, a.pci_bus_id))
    return max(there, back)


def _recovery(rec: _Recorder, lib: NvmlLib, h: Any) -> Fields:
    """NVML_FI_DEV_GET_GPU_RECOVERY_ACTION (R565+), the action Xid 154 announces."""
    field_id = getattr(lib, "NVML_FI_DEV_GET_GPU_RECOVERY_ACTION", None)
    if field_id is None:
        rec.calls["nvmlDeviceGetFieldValues(GPU_RECOVERY_ACTION)"] = "function_not_found"
        return {}
    label = "nvmlDeviceGetFieldValues(GPU_RECOVERY_ACTION)"
    values = rec.call(label, lib.nvmlDeviceGetFieldValues, h, [field_id])
    if values is None:
        return {}
    if values[0].nvmlReturn != 0:
        rec.calls[label] = error_name(lib, lib.NVMLError(values[0].nvmlReturn))
        return {}
    action = int(values[0].value.uiVal)
    return {"recovery_action": _RECOVERY_ACTIONS.get(action, str(action))}


_READERS: tuple[Callable[[_Recorder, NvmlLib, Any], Fields], ...] = (
    _identity,
    _memory_and_thermal,
    _power,
    _ecc,
    _memory_repair,
    _clocks_and_pcie,
    _load,
    _modes,
    _nvlinks,
    _fabric,
    _recovery,
)
