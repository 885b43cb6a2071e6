"""Build a fake host root (``--host-root``) in a temporary directory."""

from __future__ import annotations

import os
import socket
from pathlib import Path

NODE_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "node"
SECURE_BOOT = "sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-e7b6a6a3b6ad"
BOOT_TIME = 1_790_000_000


def put(root: Path, rel: str, text: str | bytes, mtime: float | None = None) -> Path:
    """Write one host file (parents created); optionally back-date it."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def kmsg_records(dmesg_text: str) -> str:
    """dmesg lines ``[  5.003561] msg`` as /dev/kmsg records ``6,N,5003561,-;msg``."""
    out = []
    for seq, line in enumerate(dmesg_text.splitlines()):
        if not line.startswith("["):
            continue
        stamp, _, message = line[1:].partition("] ")
        micros = round(float(stamp) * 1_000_000)
        out.append(f"4,{seq},{micros},-;{message}\n SUBSYSTEM=pci\n")
    return "".join(out)


def gpu_node(root: Path) -> Path:
    """An HGX-like node: driver loaded, toolkit drop-in, CDI via /var/run symlink,
    a device-plugin socket, one stale and one fresh validation marker, RDMA ports."""
    driver = (NODE_FIXTURES / "h200-vm" / "proc-driver-nvidia-version.txt").read_text()
    put(root, "proc/driver/nvidia/version", driver)
    put(root, "proc/modules", (NODE_FIXTURES / "h200-vm" / "proc-modules.txt").read_text())
    put(root, "proc/stat", f"cpu  1 2 3 4\nbtime {BOOT_TIME}\nprocesses 9\n")
    put(root, "proc/sys/kernel/osrelease", "5.15.0-119-generic\n")
    put(root, "proc/4242/comm", "nv-fabricmanage\n")
    put(root, "proc/17/comm", "containerd\n")
    put(root, "etc/os-release", 'ID=ubuntu\nVERSION_ID="22.04"\nPRETTY_NAME="Ubuntu 22.04.5 LTS"\n')
    for name in ("nvidia0", "nvidiactl", "nvidia-uvm", "nvidia-nvswitch0", "null"):
        put(root, f"dev/{name}", "")
    put(root, "dev/kmsg", kmsg_records((NODE_FIXTURES / "h100-hgx" / "dmesg.txt").read_text()))
    put(root, SECURE_BOOT, bytes([0x06, 0, 0, 0, 1]))
    runtime = NODE_FIXTURES / "runtime" / "containerd-dropin"
    put(root, "etc/containerd/config.toml", (runtime / "config.toml").read_text())
    put(root, "etc/containerd/conf.d/99-nvidia.toml", (runtime / "conf.d/99-nvidia.toml").read_text())
    put(root, "run/cdi/nvidia.yaml", (NODE_FIXTURES / "runtime/cdi/nvidia.yaml").read_text())
    (root / "var").mkdir(exist_ok=True)
    os.symlink("/run", root / "var" / "run")  # absolute link: must stay inside the root
    _unix_socket(root / "var/lib/kubelet/device-plugins/nvidia-gpu.sock")
    _unix_socket(root / "var/lib/kubelet/device-plugins/kubelet.sock")
    loaded_at = BOOT_TIME + 5.003561
    put(root, "run/nvidia/validations/toolkit-ready", "", mtime=loaded_at - 3600)
    put(root, "run/nvidia/validations/driver-ready", "IS_HOST_DRIVER=false\n", mtime=loaded_at + 60)
    port = "sys/class/infiniband/mlx5_0/ports/1"
    for name, text in (
        ("state", "4: ACTIVE\n"),
        ("phys_state", "5: LinkUp\n"),
        ("link_layer", "Ethernet\n"),
        ("rate", "400 Gb/sec (4X NDR)\n"),
    ):
        put(root, f"{port}/{name}", text)
    put(root, "sys/class/infiniband/mlx5_0/hca_type", "MT4129\n")
    return root


def _unix_socket(path: Path) -> None:
    """A real socket file; bound by relative name since tmp paths exceed 108 bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    previous = os.getcwd()
    sock = socket.socket(socket.AF_UNIX)
    try:
        os.chdir(path.parent)
        sock.bind(path.name)
    finally:
        sock.close()
        os.chdir(previous)
