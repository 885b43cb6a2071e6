"""Host facts for layers 0-2, read under ``--host-root`` and judged elsewhere.

The facts' Structs are in ``probe.host_facts``; this module holds the readers.

Each collector reads a few bounded files through :class:`HostFS` (which keeps the
raw text for the bundle) and returns parsed facts; a parse failure becomes an
``error`` string on the fact, never an exception out of the probe.
"""

from __future__ import annotations

import os
import posixpath
import subprocess
from collections.abc import Callable
from typing import Any

import msgspec

from gpunode.errors import ParseError
from gpunode.parse._toml import load_toml
from gpunode.parse.cdi import parse_cdi_spec
from gpunode.parse.cgroup_driver import KUBELET_CONFIG, kubelet_config_kept
from gpunode.parse.containerd import CONTAINERD_CONFIG_BY_DISTRIBUTION, parse_containerd_config
from gpunode.parse.crio import CRIO_CONFIG_PATHS, parse_crio_config
from gpunode.parse.dkms import (
    DKMS_DIR,
    DRIVER_MODULE,
    PORTAGE_DRIVERS_DIR,
    PORTAGE_PACKAGE,
    make_log,
    portage_log,
    version_order,
)
from gpunode.parse.driver_version import DriverVersion, parse_proc_driver_version
from gpunode.parse.infiniband import PORT_ERROR_COUNTERS, SYSFS_INFINIBAND, RdmaPort, parse_rdma_port
from gpunode.parse.kernel_log import parse_kernel_log
from gpunode.parse.modules import KernelModule, parse_modules
from gpunode.parse.oci_hooks import MAX_HOOK_BYTES, OCI_HOOK_DIRS, parse_oci_hook
from gpunode.parse.syslog import SYSLOG_FILES, SYSLOG_READ_BYTES, syslog_kept
from gpunode.probe.host_facts import (
    CdiSpecFact,
    HostFacts,
    KernelLogFacts,
    OciHookFact,
    PciGpu,
    RuntimeConfigFact,
    ValidationMarker,
)
from gpunode.probe.hostfs import HostFS
from gpunode.probe.kernel import read_kmsg, run_dmesg
from gpunode.relazy import lazy_compile

SECURE_BOOT_VAR = "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-e7b6a6a3b6ad"
VALIDATIONS_DIR = "/run/nvidia/validations"
DEVICE_PLUGIN_DIR = "/var/lib/kubelet/device-plugins"
PCI_DEVICES = "/sys/bus/pci/devices"
NVIDIA_PCI_VENDOR = "0x10de"
#: PCI base class 0x03 (display: VGA 0x0300, 3D controller 0x0302): GPUs, not NVSwitches (0x0680)
DISPLAY_CLASS = "0x03"
CDI_DIRS = ("/etc/cdi", "/var/run/cdi")
INTERESTING_MODULES = (
    "nvidia",
    "nvidia_uvm",
    "nvidia_modeset",
    "nvidia_drm",
    "nvidia_peermem",
    "nvidia_fs",
    "gdrdrv",
    "nouveau",
    "mlx5_core",
    "mlx5_ib",
    "ib_core",
    "ib_uverbs",
    "rdma_ucm",
)
# comm names (the kernel truncates them to 15 characters)
WATCHED_PROCESSES = (
    "kubelet",
    "k3s-server",
    "k3s-agent",
    "rke2",
    "kubelite",
    "containerd",
    "crio",
    "dockerd",
    "nvidia-persistenced",
    "nv-fabricmanager",
    "nvlsm",
    "nvidia-imex",
    "nv-hostengine",
    "dcgm-exporter",
)
MAX_PROCESSES = 65536
MAX_CDI_SPECS = 64
MAX_OCI_HOOKS = 64
MAX_VALIDATION_BYTES = 4096
FABRIC_MANAGER_LOG = "/var/log/fabricmanager.log"
#: The NVIDIA runtime's own log, where its config.toml turns it on (checks/toolkit.py).
RUNTIME_LOG = "/var/log/nvidia-container-runtime.log"
#: nvidia-container-cli's debug log, where config.toml turns it on (checks/toolkit.py).
CLI_LOG = "/var/log/nvidia-container-toolkit.log"
#: The host driver installer's log (nvidia-installer rewrites it on each run): why the
#: driver's kernel module did not build or install (checks by its signatures, layer1.toml).
INSTALLER_LOG = "/var/log/nvidia-installer.log"
#: Host programs' own log files whose tails the bundle keeps.
LOG_TAILS = (FABRIC_MANAGER_LOG, RUNTIME_LOG, CLI_LOG, INSTALLER_LOG)
#: gVisor's runsc debug logs, where runsc.toml's ``debug-log`` names this folder (one file a
#: command, ``runsc.log.<timestamp>.<command>.txt``): nvproxy's refusals are in the sandbox's
#: boot logs (checks/runsc_log.py), of which the newest few are kept.
RUNSC_LOG_DIR = "/var/log/runsc"
RUNSC_BOOT_LOGS = 4
#: The newest driver versions whose DKMS build log is kept (gpunode.parse.dkms).
DKMS_MAKE_LOGS = 2
_DMESG_SECONDS = lazy_compile(r"^\[\s*(\d+\.\d+)\]")


def collect_host(fs: HostFS, kernel_log: bool = True) -> tuple[HostFacts, str | None]:
    """All host facts plus the kernel log text (for the bundle's cmd/dmesg.txt)."""
    log_facts, log_text = _kernel_log(fs) if kernel_log else (KernelLogFacts(None), None)
    boot_time = _boot_time(fs)
    loaded_at = _driver_loaded_at(boot_time, log_facts)
    driver, driver_error = _driver(fs)
    modules, modules_error = _modules(fs)
    rdma_ports, rdma_errors = _rdma_ports(fs)
    runtime_configs = _runtime_configs(fs)
    hook_dirs = oci_hook_dirs(runtime_configs)
    facts = HostFacts(
        kernel_release=_strip(fs.read("/proc/sys/kernel/osrelease")),
        os_release=_os_release(fs),
        boot_time=boot_time,
        driver=driver,
        driver_error=driver_error,
        driver_loaded_at=loaded_at,
        modules=modules,
        modules_error=modules_error,
        device_nodes=_device_nodes(fs),
        secure_boot=secure_boot_state(fs),
        kernel_log=log_facts,
        runtime_configs=runtime_configs,
        cdi_specs=_cdi_specs(fs),
        oci_hooks=_oci_hooks(fs, hook_dirs),
        oci_hook_dirs=hook_dirs,
        device_plugin_sockets=_device_plugin_sockets(fs),
        kubelet_registration_socket=fs.is_socket(f"{DEVICE_PLUGIN_DIR}/kubelet.sock"),
        validations=_validations(fs, loaded_at),
        rdma_ports=rdma_ports,
        rdma_errors=rdma_errors,
        processes=_processes(fs),
        pci_gpus=_pci_gpus(fs),
        pci_read=bool(fs.listdir(PCI_DEVICES)),
    )
    for path in (*LOG_TAILS, *_runsc_boot_logs(fs), *dkms_make_logs(fs), *portage_build_logs(fs)):
        _log_tail(fs, path)
    _kubelet_config(fs)
    for path in SYSLOG_FILES:
        _syslog(fs, path)
    return msgspec.structs.replace(facts, read_errors=tuple(fs.errors)), log_text


def _pci_gpus(fs: HostFS) -> tuple[PciGpu, ...]:
    """NVIDIA display-class functions on the PCI bus and the driver each is bound to (the
    basename of its ``driver`` symlink): what tells a GPU handed to VMs (vfio-pci) from one
    the NVIDIA driver holds, also while no driver is loaded."""
    found = []
    for address in fs.listdir(PCI_DEVICES):
        base = f"{PCI_DEVICES}/{address}"
        vendor = (fs.read(f"{base}/vendor", limit=16, keep=False) or "").strip()
        pci_class = (fs.read(f"{base}/class", limit=16, keep=False) or "").strip()
        if vendor != NVIDIA_PCI_VENDOR or not pci_class.startswith(DISPLAY_CLASS):
            continue
        device = (fs.read(f"{base}/device", limit=16, keep=False) or "").strip()
        link = fs.readlink(f"{base}/driver")
        found.append(PciGpu(address, device, posixpath.basename(link.rstrip("/")) if link else None))
    return tuple(found)


def _strip(text: str | None) -> str | None:
    return text.strip() if text is not None else None


def _os_release(fs: HostFS) -> dict[str, str]:
    """ID, VERSION_ID and PRETTY_NAME from os-release (drivers are built per OS)."""
    text = fs.read("/etc/os-release") or fs.read("/usr/lib/os-release") or ""
    wanted = {"ID", "VERSION_ID", "PRETTY_NAME"}
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key in wanted:
            out[key] = value.strip().strip('"')
    return out


def _boot_time(fs: HostFS) -> float | None:
    """``btime`` from /proc/stat: epoch seconds of boot, to date kernel log lines."""
    for line in (fs.read("/proc/stat", keep=False) or "").splitlines():
        if line.startswith("btime "):
            return float(line.split()[1])
    return None


def _driver(fs: HostFS) -> tuple[DriverVersion | None, str | None]:
    """The loaded kernel module's version file; ``absent`` means no module loaded."""
    text = fs.read("/proc/driver/nvidia/version")
    if text is None:
        return None, "absent"
    try:
        return parse_proc_driver_version(text), None
    except ParseError as exc:
        return None, str(exc)


def _modules(fs: HostFS) -> tuple[dict[str, KernelModule], str | None]:
    """GPU and RDMA related modules from /proc/modules."""
    text = fs.read("/proc/modules")
    if text is None:
        return {}, "absent"
    try:
        modules = parse_modules(text)
    except ParseError as exc:
        return {}, str(exc)
    return {name: modules[name] for name in INTERESTING_MODULES if name in modules}, None


def _device_nodes(fs: HostFS) -> tuple[str, ...]:
    """``/dev/nvidia*`` names (nvidia0.., nvidiactl, nvidia-uvm, nvidia-nvswitchN, ...)."""
    return tuple(name for name in fs.listdir("/dev") if name.startswith("nvidia"))


def secure_boot_state(fs: HostFS) -> str:
    """``enabled``/``disabled`` from the EFI variable (5th byte), ``not_efi`` on BIOS."""
    if not fs.exists("/sys/firmware/efi"):
        return "not_efi"
    data = fs.read_bytes(SECURE_BOOT_VAR)
    if data is None or len(data) < 5:
        return "unknown"
    return "enabled" if data[4] == 1 else "disabled"


def _kernel_log(fs: HostFS) -> tuple[KernelLogFacts, str | None]:
    """Read the ring buffer (host's /dev/kmsg, own /dev/kmsg, then dmesg) and parse it."""
    attempts: list[tuple[str, Callable[[], tuple[str, bool]]]] = [
        ("/dev/kmsg", lambda: read_kmsg(fs.resolve("/dev/kmsg"))),
        ("dmesg", run_dmesg),
    ]
    if fs.root != "/":
        attempts.insert(1, ("/dev/kmsg (probe's own)", lambda: read_kmsg("/dev/kmsg")))
    errors: list[str] = []
    for source, reader in attempts:
        try:
            text, truncated = reader()
        except (OSError, subprocess.SubprocessError) as exc:
            errors.append(f"{source}: {getattr(exc, 'strerror', None) or exc}")
            continue
        return _parsed_log(source, text, truncated), text
    return KernelLogFacts(source=None, error="; ".join(errors)), None


def _parsed_log(source: str, text: str, truncated: bool) -> KernelLogFacts:
    log = parse_kernel_log(text)
    return KernelLogFacts(
        source=source,
        truncated=truncated,
        xids=log.xids,
        fallen_off_bus=log.fallen_off_bus,
        nvrm_errors=log.nvrm_errors,
        driver_loaded=log.driver_loaded,
        driver_loaded_uptime_s=_driver_load_uptime(text),
        pci_to_uuid=log.pci_to_uuid,
    )


def _driver_load_uptime(text: str) -> float | None:
    """Seconds after boot of the last "NVRM: loading NVIDIA UNIX" line."""
    found = None
    for line in text.splitlines():
        if "NVRM: loading NVIDIA UNIX" in line:
            match = _DMESG_SECONDS.match(line)
            found = float(match.group(1)) if match else found
    return found


def _driver_loaded_at(boot_time: float | None, log: KernelLogFacts) -> float | None:
    """Epoch seconds the kernel module was loaded, when the log still holds the line."""
    if boot_time is None or log.driver_loaded_uptime_s is None:
        return None
    return boot_time + log.driver_loaded_uptime_s


def _runtime_configs(fs: HostFS) -> tuple[RuntimeConfigFact, ...]:
    """Every containerd config at its distribution's path, then CRI-O."""
    found: list[RuntimeConfigFact] = []
    for distribution, paths in CONTAINERD_CONFIG_BY_DISTRIBUTION.items():
        found.extend(_containerd(fs, distribution, p) for p in paths if fs.is_file(p))
    for path in CRIO_CONFIG_PATHS:
        if fs.is_file(path) or fs.listdir(f"{os.path.dirname(path)}/crio.conf.d"):
            found.append(_crio(fs, path))
            break
    return tuple(found)


def _containerd(fs: HostFS, distribution: str, path: str) -> RuntimeConfigFact:
    """Read the file, its imports (recursively) and the toolkit drop-in dir, then merge."""
    files = _containerd_files(fs, path)
    try:
        config = parse_containerd_config(files, path)
    except ParseError as exc:
        return RuntimeConfigFact("containerd", distribution, path, error=str(exc))
    return RuntimeConfigFact("containerd", distribution, path, containerd=config)


def _containerd_files(fs: HostFS, path: str) -> dict[str, str]:
    """Top-level file plus everything its ``imports`` reach, plus conf.d for evidence."""
    files: dict[str, str] = {}
    queue = [path, *fs.glob(f"{os.path.dirname(path)}/conf.d/*.toml")]
    while queue and len(files) < 64:
        current = queue.pop(0)
        text = None if current in files else fs.read(current)
        if text is None:
            continue
        files[current] = text
        queue.extend(_import_targets(fs, current, text))
    return files


def _import_targets(fs: HostFS, path: str, text: str) -> list[str]:
    """Node paths an ``imports`` array names (globs expanded on the host)."""
    try:
        imports: Any = load_toml(path, text).get("imports", [])
    except ParseError:
        return []
    targets: list[str] = []
    for entry in imports if isinstance(imports, list) else []:
        if not isinstance(entry, str):
            continue
        absolute = os.path.normpath(os.path.join(os.path.dirname(path), entry))
        targets.extend(fs.glob(absolute) if "*" in absolute else [absolute])
    return targets


def _crio(fs: HostFS, path: str) -> RuntimeConfigFact:
    files = {
        p: t
        for p in [path, *fs.glob(f"{os.path.dirname(path)}/crio.conf.d/*")]
        if (t := fs.read(p)) is not None
    }
    try:
        return RuntimeConfigFact("crio", "cri-o", path, crio=parse_crio_config(files, path))
    except ParseError as exc:
        return RuntimeConfigFact("crio", "cri-o", path, error=str(exc))


def oci_hook_dirs(configs: tuple[RuntimeConfigFact, ...]) -> tuple[str, ...]:
    """The packaged and local hook directories, then those CRI-O's ``hooks_dir`` names."""
    named = [d.rstrip("/") for c in configs if c.crio is not None for d in c.crio.hooks_dirs]
    return tuple(dict.fromkeys([*OCI_HOOK_DIRS, *named]))


def _oci_hooks(fs: HostFS, directories: tuple[str, ...]) -> tuple[OciHookFact, ...]:
    """Every ``*.json`` hook file in those directories (kept for the bundle), parsed."""
    files = [f"{d}/{n}" for d in directories for n in fs.listdir(d) if n.endswith(".json")]
    return tuple(_oci_hook(fs, path) for path in files[:MAX_OCI_HOOKS])


def _oci_hook(fs: HostFS, path: str) -> OciHookFact:
    text = fs.read(path, limit=MAX_HOOK_BYTES)
    if text is None:
        return OciHookFact(path, error="unreadable")
    try:
        hook = parse_oci_hook(path, text)
    except ParseError as exc:
        return OciHookFact(path, error=str(exc))
    return OciHookFact(path, hook, binary_present=fs.exists(hook.path))


def _cdi_specs(fs: HostFS) -> tuple[CdiSpecFact, ...]:
    """Spec files in the static and dynamic CDI directories."""
    specs: list[CdiSpecFact] = []
    for directory in CDI_DIRS:
        for name in fs.listdir(directory)[:MAX_CDI_SPECS]:
            if name.endswith((".json", ".yaml", ".yml")):
                specs.append(_cdi_spec(fs, f"{directory}/{name}"))
    return tuple(specs)


def _cdi_spec(fs: HostFS, path: str) -> CdiSpecFact:
    text = fs.read(path)
    if text is None:
        return CdiSpecFact(path, None, (), error="unreadable")
    try:
        spec = parse_cdi_spec(path, text)
    except ParseError as exc:
        return CdiSpecFact(path, None, (), error=str(exc))
    return CdiSpecFact(path, spec.kind, spec.devices)


def _device_plugin_sockets(fs: HostFS) -> tuple[str, ...]:
    """Plugin sockets registered with the kubelet (``nvidia-gpu.sock``, ...)."""
    return tuple(
        name for name in fs.listdir(DEVICE_PLUGIN_DIR) if name.endswith(".sock") and name != "kubelet.sock"
    )


def _validations(fs: HostFS, driver_loaded_at: float | None) -> tuple[ValidationMarker, ...]:
    """Marker files, their age, and whether they predate the current driver load."""
    markers: list[ValidationMarker] = []
    for name in fs.listdir(VALIDATIONS_DIR):
        path = f"{VALIDATIONS_DIR}/{name}"
        info = fs.lstat(path)
        if info is None or not fs.is_file(path):
            continue
        fs.read(path, limit=MAX_VALIDATION_BYTES)
        older = None if driver_loaded_at is None else info.st_mtime < driver_loaded_at
        markers.append(ValidationMarker(name, info.st_mtime, info.st_size, older))
    return tuple(markers)


def _rdma_ports(fs: HostFS) -> tuple[tuple[RdmaPort, ...], tuple[str, ...]]:
    """Every port of every HCA under /sys/class/infiniband."""
    ports: list[RdmaPort] = []
    errors: list[str] = []
    for device in fs.listdir(SYSFS_INFINIBAND):
        for attr in ("fw_ver", "hca_type", "board_id"):
            fs.read(f"{SYSFS_INFINIBAND}/{device}/{attr}")
        for port in fs.listdir(f"{SYSFS_INFINIBAND}/{device}/ports"):
            if not port.isdigit():
                continue
            try:
                ports.append(_rdma_port(fs, device, int(port)))
            except ParseError as exc:
                errors.append(f"{device}/{port}: {exc}")
    return tuple(ports), tuple(errors)


def _rdma_port(fs: HostFS, device: str, port: int) -> RdmaPort:
    base = f"{SYSFS_INFINIBAND}/{device}/ports/{port}"
    names = ("state", "phys_state", "link_layer", "rate", *(f"counters/{c}" for c in PORT_ERROR_COUNTERS))
    files = {name: text for name in names if (text := fs.read(f"{base}/{name}", limit=4096)) is not None}
    parsed = parse_rdma_port(device, port, files)
    netdev = _port_netdev(fs, device, port, roce=parsed.link_layer == "Ethernet")
    mtu = fs.read(f"/sys/class/net/{netdev}/mtu", limit=32) if netdev else None
    return msgspec.structs.replace(
        parsed, netdev=netdev, mtu=int(mtu.strip()) if mtu and mtu.strip().isdigit() else None
    )


def _port_netdev(fs: HostFS, device: str, port: int, *, roce: bool) -> str | None:
    """The interface of a port: RoCE names it in its GID table (InfiniBand ports refuse
    that read), else the PCI function's first interface (IPoIB on InfiniBand)."""
    gid = f"{SYSFS_INFINIBAND}/{device}/ports/{port}/gid_attrs/ndevs/0"
    ndev = fs.read(gid, limit=64, keep=False) if roce and fs.exists(gid) else None
    if ndev and ndev.strip():
        return ndev.strip()
    names = fs.listdir(f"{SYSFS_INFINIBAND}/{device}/device/net")
    return names[0] if names else None


def _processes(fs: HostFS) -> dict[str, bool]:
    """Whether each watched daemon runs (needs the host PID namespace in a pod)."""
    wanted = {name[:15]: name for name in WATCHED_PROCESSES}
    running = dict.fromkeys(WATCHED_PROCESSES, False)
    for pid in _pids(fs):
        comm = _strip(fs.read(f"/proc/{pid}/comm", limit=64, keep=False))
        if comm in wanted:
            running[wanted[comm]] = True
    return running


def _pids(fs: HostFS) -> list[str]:
    try:
        names = os.listdir(fs.resolve("/proc"))
    except OSError:
        return []
    return [name for name in names if name.isdigit()][:MAX_PROCESSES]


def _kubelet_config(fs: HostFS) -> None:
    """Keep the kubelet config's ``cgroupDriver`` line alone for the bundle (checks/cgroup_driver.py
    compares it with the runtime's): the rest of the file (paths, addresses) is not read."""
    text = fs.read(KUBELET_CONFIG, keep=False)
    kept = kubelet_config_kept(text) if text else ""
    if kept:
        fs.texts[KUBELET_CONFIG] = kept


def _runsc_boot_logs(fs: HostFS) -> list[str]:
    """The newest runsc boot logs (their names start with runsc's timestamp, so they sort by
    time); none where runsc's debug log is off or written elsewhere. The whole folder is
    listed (``fs.listdir`` keeps the first names, the oldest): runsc writes a file for every
    command of every sandbox."""
    try:
        names = os.listdir(fs.resolve(RUNSC_LOG_DIR))
    except OSError:
        return []
    boots = sorted(name for name in names if name.endswith(".boot.txt"))
    return [f"{RUNSC_LOG_DIR}/{name}" for name in boots[-RUNSC_BOOT_LOGS:]]


def _syslog(fs: HostFS, path: str) -> None:
    """Keep the lines of the syslog's tail that name the GPU or its driver (gpunode.parse.syslog),
    where a host driver's installer (configuration management, a provisioning script) logs."""
    info = fs.lstat(path)
    if info is None:
        return
    try:
        with open(fs.resolve(path), "rb") as handle:
            start = max(0, info.st_size - SYSLOG_READ_BYTES)
            handle.seek(start)
            text = handle.read().decode("utf-8", errors="replace")
    except OSError as exc:
        fs.errors.append(f"{path}: {exc.strerror or exc}")
        return
    kept = syslog_kept(text if start else "\n" + text)
    if kept:
        fs.texts[path] = kept


def dkms_make_logs(fs: HostFS) -> list[str]:
    """The make.log of DKMS's build tree for the newest driver versions DKMS holds of the
    driver's modules (``nvidia``, ``nvidia-open``, ...; version folders only: DKMS also keeps
    ``kernel-<release>-<arch>`` links there)."""
    builds = [(version, module) for module in fs.listdir(DKMS_DIR) if DRIVER_MODULE.match(module)
              for version in fs.listdir(f"{DKMS_DIR}/{module}") if version[:1].isdigit()]
    builds.sort(key=lambda build: version_order(build[0]))
    return [make_log(version, module) for version, module in builds[-DKMS_MAKE_LOGS:]]


def portage_build_logs(fs: HostFS) -> list[str]:
    """The build log Portage keeps of its newest failed builds of the driver's package
    (Gentoo's nvidia-drivers, gpunode.parse.dkms)."""
    packages = [(found[1], name) for name in fs.listdir(PORTAGE_DRIVERS_DIR)
                if (found := PORTAGE_PACKAGE.match(name)) is not None]
    packages.sort(key=lambda package: version_order(package[0]))
    return [portage_log(name) for _, name in packages[-DKMS_MAKE_LOGS:]]


def _log_tail(fs: HostFS, path: str) -> None:
    """Keep the tail of a host program's own log for the bundle (Fabric Manager's on NVSwitch
    systems, the NVIDIA runtime's and its CLI's where their debug logs are on)."""
    info = fs.lstat(path)
    if info is None:
        return
    try:
        with open(fs.resolve(path), "rb") as handle:
            handle.seek(max(0, info.st_size - 64 * 1024))
            fs.texts[path] = handle.read().decode("utf-8", errors="replace")
    except OSError as exc:
        fs.errors.append(f"{path}: {exc.strerror or exc}")
