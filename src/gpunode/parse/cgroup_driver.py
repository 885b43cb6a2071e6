"""The cgroup driver the kubelet and the container runtime each use, from their own configs.

The kubelet and the OCI runtime under the CRI must manage pod cgroups the same way
(``systemd`` or ``cgroupfs``); where they differ, system pods flap and sandboxes are
recreated. Only what the files say explicitly is read: a kubelet config without
``cgroupDriver`` (a ``--cgroup-driver`` flag may set it) and a Docker daemon.json without
``native.cgroupdriver`` (its default follows the host's cgroup version) are unknown. A
runc handler of containerd without ``SystemdCgroup`` runs with cgroupfs, runc's default.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpunode.parse._toml import load_toml, table
from gpunode.parse.runtime_config import ContainerdConfig
from gpunode.relazy import lazy_compile

#: The kubelet's config file as kubeadm and most installers write it.
KUBELET_CONFIG = "/var/lib/kubelet/config.yaml"
#: ``cgroupDriver: systemd`` at the top level of a KubeletConfiguration.
_KUBELET_KEY = lazy_compile(r"""^cgroupDriver:[ \t]*["']?([A-Za-z]+)["']?[ \t]*(?:#.*)?$""", re.M)
#: Docker's ``exec-opts`` entry.
_DOCKER_OPT = lazy_compile(r"^native\.cgroupdriver=([A-Za-z]+)$")
#: containerd's CRI table per config version (as parse.containerd reads them).
_CRI_TABLES = {1: ("plugins", "cri"), 2: ("plugins", "io.containerd.grpc.v1.cri"),
               3: ("plugins", "io.containerd.cri.v1.runtime"), 4: ("plugins", "io.containerd.cri.v1.runtime")}
#: Shims that run runc (or a runc-compatible wrapper) with runc's options.
_RUNC_SHIMS = ("io.containerd.runc.v2", "io.containerd.runc.v1", "io.containerd.runtime.v1.linux")
DRIVERS = ("systemd", "cgroupfs")


@dataclass(frozen=True)
class RuntimeCgroup:
    """The cgroup driver of the handler that runs pods, and where the config says so."""

    driver: str  # "systemd" | "cgroupfs"
    handler: str  # the runtime handler (containerd) or "dockerd"
    setting: str  # the setting as written, or what its absence means
    source: str  # the file that decided it


def kubelet_cgroup_driver(text: str) -> str | None:
    """``cgroupDriver`` of a KubeletConfiguration; None where the file does not set it."""
    found = _KUBELET_KEY.findall(text)
    driver = found[-1].lower() if found else None
    return driver if driver in DRIVERS else None


def kubelet_config_kept(text: str) -> str:
    """What a collector keeps of the kubelet's config: its ``cgroupDriver`` line alone (no
    paths, addresses or credentials the rest of the file may hold)."""
    driver = kubelet_cgroup_driver(text)
    return f"cgroupDriver: {driver}\n" if driver else ""


def docker_cgroup_driver(doc: Mapping[str, Any]) -> str | None:
    """``exec-opts: ["native.cgroupdriver=systemd"]`` of a daemon.json object; None if unset."""
    opts = doc.get("exec-opts")
    found = [m.group(1).lower() for o in opts if isinstance(o, str) and (m := _DOCKER_OPT.match(o.strip()))] \
        if isinstance(opts, list) else []
    return found[-1] if found and found[-1] in DRIVERS else None


def containerd_cgroup(files: Mapping[str, str], config: ContainerdConfig, handler: str,
                      containerd2: bool = False) -> RuntimeCgroup | None:
    """The driver ``handler`` runs with across the config's files (later files win key by key):
    ``options.SystemdCgroup`` in any letter case (Go's TOML decoder), for config v1's v1 shim
    the CRI table's ``systemd_cgroup``. None where the handler is not defined or runs another
    shim (Kata, gVisor manage cgroups their own way)."""
    runtime_type: str | None = None
    value: tuple[bool, str] | None = None
    defined = False
    for path in config.sources:
        doc = load_toml(path, files.get(path, ""))
        for version in _versions(doc, config.version, containerd2):
            cri = table(doc, *_CRI_TABLES[version]) or {}
            spec = table(cri, "containerd", "runtimes", handler)
            if spec is None:
                continue
            defined = True
            declared = spec.get("runtime_type")
            runtime_type = declared if isinstance(declared, str) else runtime_type
            found = _systemd_option(table(spec, "options") or {})
            if found is None and version == 1 and isinstance(cri.get("systemd_cgroup"), bool):
                found = (cri["systemd_cgroup"], "systemd_cgroup")
            if found is not None:
                value = (found[0], f"{found[1]} = {str(found[0]).lower()} ({path})")
    if not defined or (runtime_type or _RUNC_SHIMS[0]) not in _RUNC_SHIMS:
        return None
    if value is None:
        return RuntimeCgroup("cgroupfs", handler, "SystemdCgroup not set (runc's default: cgroupfs)",
                             config.sources[-1] if config.sources else "")
    on, setting = value
    return RuntimeCgroup("systemd" if on else "cgroupfs", handler, setting, setting.rsplit("(", 1)[-1][:-1])


def _versions(doc: Mapping[str, Any], top: int | None, containerd2: bool) -> tuple[int, ...]:
    raw = doc.get("version")
    own = raw if isinstance(raw, int) and raw in _CRI_TABLES else (top if top in _CRI_TABLES else 1)
    return (own, 3) if containerd2 and own == 2 else (own or 1,)


def _systemd_option(options: Mapping[str, Any]) -> tuple[bool, str] | None:
    """The last ``SystemdCgroup`` key in any letter case that holds a boolean."""
    for key in reversed(list(options)):
        if key.casefold() == "systemdcgroup" and isinstance(options[key], bool):
            return options[key], key
    return None


def docker_cgroup(text: str, path: str) -> RuntimeCgroup | None:
    """dockerd's driver where daemon.json sets ``native.cgroupdriver``; None otherwise
    (absent, or a file that is not a JSON object: its parse error is reported elsewhere)."""
    try:
        doc = json.loads(text) if text.strip() else {}
    except (ValueError, RecursionError):
        return None
    driver = docker_cgroup_driver(doc) if isinstance(doc, dict) else None
    if driver is None:
        return None
    return RuntimeCgroup(driver, "dockerd", f'exec-opts "native.cgroupdriver={driver}" ({path})', path)
