"""The recent past of the host's services, from the host's journal.

When the kubelet, containerd, Fabric Manager or IMEX fails, its own journal says why;
the bundle keeps the last hours of it (``cmd/journal-kubelet.txt``,
``cmd/journal-runtime.txt``, ``cmd/journal-fabricmanager.txt``, ``cmd/journal-imex.txt``),
bounded in time, lines and bytes. A host without journald, or a probe that cannot
read it, simply has no such file: the components stay judged by what else shows.
"""

from __future__ import annotations

import os
import shutil
import subprocess

from gpunode.bounded import run_capped
from gpunode.probe.kernel import _Tail

#: How far back, how many lines and how many bytes of each journal are kept.
SINCE = "-2h"
MAX_LINES = 2000
MAX_BYTES = 512 * 1024
TIMEOUT_S = 5.0
#: Bundle file -> the systemd units it reads (those absent on the host are ignored).
UNITS: dict[str, tuple[str, ...]] = {
    "journal-kubelet.txt": (
        "kubelet", "k3s", "k3s-agent", "rke2-agent", "rke2-server", "snap.microk8s.daemon-kubelite"),
    "journal-runtime.txt": ("containerd", "crio", "docker"),
    # the host services of NVSwitch and multi-node NVLink systems (their packaged unit names)
    "journal-fabricmanager.txt": ("nvidia-fabricmanager",),
    "journal-imex.txt": ("nvidia-imex",),
}


def read_journals(root: str) -> dict[str, str]:
    """Bundle file name -> the units' recent journal lines; files without lines are left out."""
    binary = shutil.which("journalctl")
    if binary is None:
        return {}
    out: dict[str, str] = {}
    for name, units in UNITS.items():
        text = _journal(binary, root, units)
        if text.strip():
            out[name] = text
    return out


def _journal(binary: str, root: str, units: tuple[str, ...]) -> str:
    argv = [binary, "--no-pager", "-q", "-o", "short-iso", f"--since={SINCE}", "-n", str(MAX_LINES)]
    if root not in ("", "/"):
        argv.append(f"--directory={os.path.join(root, 'var/log/journal')}")
    for unit in units:
        argv += ["-u", unit]
    try:
        done = run_capped(argv, timeout=TIMEOUT_S, max_bytes=16 * MAX_BYTES)
    except (OSError, subprocess.SubprocessError):
        return ""
    tail = _Tail(MAX_BYTES)
    for line in done.stdout.decode("utf-8", errors="replace").splitlines():
        tail.add(line)
    return tail.text()
