"""Node-side files of a GPU node: kernel log, module list, driver version, runtime
configuration and the GPU Operator's validation markers, rendered from `Host` facts."""

from __future__ import annotations

from datetime import datetime, timedelta

from gpunode.sim.models import DRIVER_VERSION
from gpunode.sim.scenario import Scenario
from gpunode.sim.world import NodeState, World

VALIDATIONS = "files/run/nvidia/validations"


def healthy_validations(state: NodeState, scenario: Scenario) -> dict[str, str]:
    """Marker files under /run/nvidia/validations on a fully validated node."""
    if not scenario.has("gpu-operator"):
        return {}
    host = scenario.cluster.driver_mode == "host"
    root, ctr_root = ("/", "/host") if host else ("/run/nvidia/driver", "/driver-root")
    driver_ready = (
        f"IS_HOST_DRIVER={'true' if host else 'false'}\nNVIDIA_DRIVER_ROOT={root}\n"
        f"DRIVER_ROOT_CTR_PATH={ctr_root}\nNVIDIA_DEV_ROOT={root}\nDEV_ROOT_CTR_PATH={ctr_root}\n"
    )
    out = {"driver-ready": driver_ready, "toolkit-ready": "", "workload-type": "container\n"}
    if scenario.has("validator"):
        out |= {"cuda-ready": "", "plugin-ready": ""}
    if host:
        out["host-driver-ready"] = ""
    else:
        rdma = bool(state.spec and state.spec.nics and scenario.has("network-operator"))
        out[".driver-ctr-ready"] = (
            f"GDRCOPY_ENABLED: false\nGDS_ENABLED: false\n"
            f"GPU_DIRECT_RDMA_ENABLED: {'true' if rdma else 'false'}\n"
        )
    return out


# -- kernel log ----------------------------------------------------------------


def boot_time(world: World, node: NodeState) -> datetime:
    """GPU nodes were rebooted into their current kernel shortly before the stack was installed."""
    if node.host.booted_at is not None:
        return node.host.booted_at
    return world.installed_at - timedelta(hours=2, seconds=node.index * 7 % 600)


def uptime_stamp(world: World, node: NodeState, moment: datetime) -> str:
    """`[ 7381.482913]` for a moment in the node's life."""
    seconds = (moment - boot_time(world, node)).total_seconds() + (node.index % 997) / 1000.0
    return f"[{seconds:12.6f}]"


def driver_load_time(world: World, node: NodeState) -> datetime:
    """When the nvidia modules were loaded (boot for a host driver, install for the container)."""
    if node.host.host_driver or node.host.module_version:
        return boot_time(world, node) + timedelta(seconds=11)
    return world.installed_at + timedelta(minutes=3, seconds=41)


def nvrm_banner(version: str = DRIVER_VERSION) -> str:
    return (
        f"NVIDIA UNIX Open Kernel Module for x86_64  {version}  Release Build  "
        "(dvs-builder@U22-I3-AE18-23-3)  Wed Mar  5 00:51:54 UTC 2025"
    )


def dmesg(world: World, node: NodeState) -> str:
    """Kernel ring buffer: boot, NIC probe, driver load (if loaded), then fault events."""
    assert node.spec is not None
    kernel = node.spec.kernel
    flavour = kernel.rsplit("-", 1)[0]
    lines = [
        f"[    0.000000] Linux version {kernel} (buildd@lcy02-amd64-047) (x86_64-linux-gnu-gcc-11 "
        "(Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #141-Ubuntu SMP "
        f"Fri Jan 10 21:18:28 UTC 2025 (Ubuntu {flavour}.141-generic 5.15.173)",
        f"[    0.000000] Command line: BOOT_IMAGE=/vmlinuz-{kernel} root=/dev/mapper/vg0-root ro "
        "intel_iommu=on iommu=pt",
        "[    0.000000] KERNEL supported cpus:",
        "[    0.000000]   Intel GenuineIntel",
        *_secure_boot_lines(node),
        "[    1.734216] ACPI: PCI Root Bridge [PC00] (domain 0000 [bus 00-15])",
    ]
    lines += _nic_lines(node)
    if node.host.driver_loaded or node.host.nvml_error:
        stamp = uptime_stamp(world, node, driver_load_time(world, node))
        lines += _driver_load_lines(stamp, node, node.host.module_version or DRIVER_VERSION)
    lines += node.host.kernel_events
    return "\n".join(lines) + "\n"


def _secure_boot_lines(node: NodeState) -> list[str]:
    if not node.host.secure_boot:
        return ["[    0.012458] secureboot: Secure boot disabled"]
    return [
        "[    0.012458] secureboot: Secure boot enabled",
        "[    0.012459] Kernel is locked down from EFI Secure Boot mode; see man kernel_lockdown.7",
    ]


def _nic_lines(node: NodeState) -> list[str]:
    assert node.spec is not None
    out: list[str] = []
    for i in range(node.spec.nics):
        from gpunode.sim.world import NIC_BUSES

        pci = f"0000:{NIC_BUSES[i].lower()}:00.0"
        t = 4.1 + i * 0.37
        out += [
            f"[{t:12.6f}] mlx5_core {pci}: firmware version: 28.43.1014",
            f"[{t + 0.001:12.6f}] mlx5_core {pci}: 252.048 Gb/s available PCIe bandwidth "
            "(16.0 GT/s PCIe x16 link)",
            f"[{t + 0.22:12.6f}] mlx5_core {pci}: Rate limit: 127 rates are supported, "
            "range: 0Mbps to 195312Mbps",
            f"[{t + 0.31:12.6f}] mlx5_core {pci}: MLX5E: StrdRq(1) RqSz(8) StrdSz(2048) RxCqeCmprss(0 basic)",
        ]
    return out


def _driver_load_lines(stamp: str, node: NodeState, version: str) -> list[str]:
    mods = [
        f"{stamp} nvidia: loading out-of-tree module taints kernel.",
        f"{stamp} nvidia-nvlink: Nvlink Core is being initialized, major device number 234",
        f"{stamp} NVRM: loading {nvrm_banner(version)}",
        f"{stamp} nvidia-modeset: Loading NVIDIA UNIX Open Kernel Mode Setting Driver for x86_64  "
        f"{version}  Release Build  (dvs-builder@U22-I3-AE18-23-3)  Wed Mar  5 00:38:40 UTC 2025",
        f"{stamp} [drm] [nvidia-drm] [GPU ID 0x00001800] Loading driver",
        f"{stamp} [drm] Initialized nvidia-drm 0.0.0 20160202 for 0000:18:00.0 on minor 1",
        f"{stamp} nvidia_uvm: module uses symbols nvUvmInterfaceDisableAccessCntr from proprietary module "
        "nvidia, inheriting taint.",
    ]
    if node.spec and node.spec.nics and node.host.mofed_loaded and node.host.peermem_loaded:
        mods.append(
            f"{stamp} nvidia_peermem: module uses symbols nvidia_p2p_get_pages from proprietary "
            "module nvidia, inheriting taint."
        )
    return mods


def nvrm_kernel_lines(world: World, node: NodeState, moment: datetime, messages: list[str]) -> list[str]:
    """Kernel log lines stamped at `moment` (for faults)."""
    stamp = uptime_stamp(world, node, moment)
    return [f"{stamp} {m}" for m in messages]


# -- modules -------------------------------------------------------------------


def lsmod(node: NodeState) -> str:
    """`lsmod` output (column layout of kmod's lsmod)."""
    rows: list[tuple[str, int, str]] = []
    h = node.host
    loaded = h.driver_loaded or bool(h.nvml_error)
    peer = loaded and bool(node.spec and node.spec.nics and h.mofed_loaded and h.peermem_loaded)
    if loaded:
        rows += [
            ("nvidia_uvm", 4956160, "4"),
            ("nvidia_drm", 135168, "0"),
            ("nvidia_modeset", 1638400, "1 nvidia_drm"),
            (
                "nvidia",
                11739136,
                "43 nvidia_uvm,nvidia_peermem,nvidia_modeset" if peer else "42 nvidia_uvm,nvidia_modeset",
            ),
        ]
        if peer:
            rows.insert(0, ("nvidia_peermem", 16384, "0"))
    rows += node.host.extra_modules
    if node.host.mofed_loaded:
        rows += [
            ("mlx5_ib", 487424, "0"),
            (
                "ib_uverbs",
                200704,
                "2 nvidia_peermem,mlx5_ib" if h.driver_loaded and h.peermem_loaded else "1 mlx5_ib",
            ),
            ("ib_core", 499712, "8 rdma_cm,ib_ipoib,iw_cm,ib_umad,rdma_ucm,ib_uverbs,mlx5_ib,ib_cm"),
            ("mlx5_core", 2502656, "1 mlx5_ib"),
            ("mlxfw", 36864, "1 mlx5_core"),
            (
                "mlx_compat",
                69632,
                "11 rdma_cm,ib_ipoib,mlxdevm,iw_cm,ib_umad,ib_core,rdma_ucm,ib_uverbs,"
                "mlx5_ib,ib_cm,mlx5_core",
            ),
        ]
    rows += [
        ("ipmi_devintf", 20480, "0"),
        ("ipmi_msghandler", 77824, "2 ipmi_devintf,ipmi_si"),
        ("overlay", 151552, "32"),
        ("br_netfilter", 32768, "0"),
        ("nf_conntrack", 172032, "4 xt_conntrack,nf_nat,xt_nat,xt_MASQUERADE"),
    ]
    lines = ["Module                  Size  Used by"]
    lines += [f"{name:<19} {size:>8}  {users}" for name, size, users in rows]
    return "\n".join(lines) + "\n"


def proc_version(module_version: str | None = None) -> str:
    """/proc/driver/nvidia/version (of the loaded kernel module)."""
    banner = nvrm_banner(module_version or DRIVER_VERSION)
    return f"NVRM version: {banner}\nGCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04) \n"


# -- runtime configuration -----------------------------------------------------


_CONTAINERD_BASE_V2 = """version = 2
root = "/var/lib/containerd"
state = "/run/containerd"
oom_score = 0

[grpc]
  address = "/run/containerd/containerd.sock"

[plugins]

  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "registry.k8s.io/pause:3.10"
    max_container_log_line_size = 16384
{cdi}
    [plugins."io.containerd.grpc.v1.cri".containerd]
      default_runtime_name = "{default}"
      snapshotter = "overlayfs"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes]

        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
          runtime_type = "io.containerd.runc.v2"

          [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
            SystemdCgroup = true
{runtimes}
    [plugins."io.containerd.grpc.v1.cri".registry]
      config_path = "/etc/containerd/certs.d"
"""

_CONTAINERD_BASE_V3 = """version = 3
root = "/var/lib/containerd"
state = "/run/containerd"

[grpc]
  address = "/run/containerd/containerd.sock"

[plugins]

  [plugins."io.containerd.cri.v1.images"]
    snapshotter = "overlayfs"

    [plugins."io.containerd.cri.v1.images".pinned_images]
      sandbox = "registry.k8s.io/pause:3.10"

  [plugins."io.containerd.cri.v1.runtime"]
{cdi}
    [plugins."io.containerd.cri.v1.runtime".containerd]
      default_runtime_name = "{default}"

      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes]

        [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
          runtime_type = "io.containerd.runc.v2"

          [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
            SystemdCgroup = true
{runtimes}"""

_BINARIES = {
    "nvidia": "nvidia-container-runtime",
    "nvidia-cdi": "nvidia-container-runtime.cdi",
    "nvidia-legacy": "nvidia-container-runtime.legacy",
}


def _runtime_tables(table: str) -> str:
    """The three nvidia runtime handlers as the toolkit writes them."""
    out = []
    for handler, binary in _BINARIES.items():
        out.append(f"""
        [{table}.containerd.runtimes.{handler}]
          privileged_without_host_devices = false
          runtime_engine = ""
          runtime_root = ""
          runtime_type = "io.containerd.runc.v2"

          [{table}.containerd.runtimes.{handler}.options]
            BinaryName = "/usr/local/nvidia/toolkit/{binary}"
            SystemdCgroup = true
""")
    return "".join(out)


def runtime_files(scenario: Scenario, patched: bool) -> dict[str, str]:
    """containerd (v2/v3, drop-in when CDI) or CRI-O config files, patched or pristine."""
    runtime = scenario.cluster.runtime
    if runtime == "crio":
        return _crio_files(scenario.cluster.cdi, patched)
    v3 = runtime == "containerd2"
    table = 'plugins."io.containerd.cri.v1.runtime"' if v3 else 'plugins."io.containerd.grpc.v1.cri"'
    base = _CONTAINERD_BASE_V3 if v3 else _CONTAINERD_BASE_V2
    cdi = scenario.cluster.cdi
    if not patched:
        return {"files/etc/containerd/config.toml": base.format(cdi="", default="runc", runtimes="")}
    if not cdi:
        text = base.format(cdi="", default="nvidia", runtimes=_runtime_tables(table))
        return {"files/etc/containerd/config.toml": text}
    top = 'imports = ["/etc/containerd/conf.d/*.toml"]\n' + base.format(cdi="", default="runc", runtimes="")
    drop_in = (
        f"version = {3 if v3 else 2}\n\n[plugins]\n\n  [{table}]\n    enable_cdi = true\n"
        f'    cdi_spec_dirs = ["/etc/cdi", "/var/run/cdi"]\n\n    [{table}.containerd]\n\n'
        f"      [{table}.containerd.runtimes]\n" + _runtime_tables(table)
    )
    return {"files/etc/containerd/config.toml": top, "files/etc/containerd/conf.d/99-nvidia.toml": drop_in}


def _crio_files(cdi: bool, patched: bool) -> dict[str, str]:
    base = (
        '[crio]\n\n[crio.runtime]\ndefault_runtime = "crun"\n\n[crio.runtime.runtimes.crun]\n'
        'runtime_path = "/usr/libexec/crio/crun"\nruntime_type = "oci"\nruntime_root = "/run/crun"\n'
    )
    out = {"files/etc/crio/crio.conf": base}
    if not patched:
        return out
    body = "" if cdi else '[crio.runtime]\ndefault_runtime = "nvidia"\n\n'
    for handler, binary in _BINARIES.items():
        body += (
            f'[crio.runtime.runtimes.{handler}]\nruntime_path = "/usr/local/nvidia/toolkit/{binary}"\n'
            'runtime_type = "oci"\nmonitor_path = "/usr/libexec/crio/conmon"\n\n'
        )
    out["files/etc/crio/crio.conf.d/99-nvidia.toml"] = body
    return out
