"""Platform profiles: which parts of the GPU stack a platform installs itself and
where it keeps their files, as validated data (data/platforms.toml).

Detection is a pure function of one node's labels and nodeInfo, so checks can
ask "is the device plugin this platform's job?" or "which containerd config does
this node read?" without I/O.
"""

from __future__ import annotations

import threading
import tomllib
from collections.abc import Mapping
from functools import cache
from importlib import resources

import msgspec

from gpunode.catalog import load_catalog
from gpunode.datatoml import load_data_toml
from gpunode.errors import BundleError


class Platform(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One platform: how to recognise its nodes and what it brings."""

    id: str
    title: str
    labels: tuple[str, ...] = ()
    kubelet_version: tuple[str, ...] = ()
    os_image: tuple[str, ...] = ()
    runtime: tuple[str, ...] = ()
    provides: tuple[str, ...] = ()
    not_used: tuple[str, ...] = ()
    runtime_handlers: tuple[str, ...] = ()
    containerd_configs: tuple[str, ...] | None = None
    driver_root: str = "/run/nvidia/driver"
    own_plugin_off_label: str = ""
    #: where the platform's container runtime finds its CNI plugins, where not containerd's
    #: default (/opt/cni/bin); empty where it is the default or unknown
    cni_bin_dir: str = ""
    system_namespaces: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str], kubelet: str, os_image: str, runtime: str) -> bool:
        """Any of the profile's rules holds for the node."""
        return (
            any(key in labels for key in self.labels)
            or any(part in kubelet for part in self.kubelet_version)
            or any(os_image.startswith(prefix) for prefix in self.os_image)
            or any(runtime.startswith(prefix) for prefix in self.runtime)
        )


GENERIC = Platform("generic", "Kubernetes (no platform profile)")


class _File(msgspec.Struct, forbid_unknown_fields=True):
    platform: list[Platform]


def parse_platforms(text: str, origin: str = "platforms.toml") -> tuple[Platform, ...]:
    """Decode and validate profiles; errors name the file and the profile."""
    try:
        parsed = msgspec.convert(load_data_toml(text), _File).platform
    except (tomllib.TOMLDecodeError, msgspec.ValidationError) as exc:
        raise BundleError(f"{origin}: invalid platform profile: {exc}") from exc
    known = set(load_catalog().ids)
    seen: set[str] = set()
    for p in parsed:
        if p.id in seen:
            raise BundleError(f"{origin}: platform {p.id!r}: duplicate id")
        seen.add(p.id)
        unknown = sorted((set(p.provides) | set(p.not_used)) - known)
        if unknown:
            raise BundleError(f"{origin}: platform {p.id!r}: unknown components {unknown}")
        if not (p.labels or p.kubelet_version or p.os_image or p.runtime):
            raise BundleError(f"{origin}: platform {p.id!r}: no detection rule")
    return tuple(parsed)


_LOCK = threading.Lock()


def load_platforms() -> tuple[Platform, ...]:
    """The shipped profiles (read once per process, under a lock: see kb.load_kb)."""
    with _LOCK:
        return _load()


@cache
def _load() -> tuple[Platform, ...]:
    text = resources.files("gpunode").joinpath("data/platforms.toml").read_text("utf-8")
    return parse_platforms(text)


def detect(labels: Mapping[str, str], kubelet: str = "", os_image: str = "", runtime: str = "") -> Platform:
    """The node's platform: the first profile whose rules match, else ``GENERIC``.

    The answer depends only on which profile label keys the node has and its three
    versions, so a fleet's nodes (alike in those) are matched once per distinct kind."""
    platforms = load_platforms()
    keys = _label_keys(platforms)
    key = (tuple(filter(labels.__contains__, keys)), kubelet, os_image, runtime)  # (in C)
    found = _DETECTED.get(key)
    if found is None:
        found = next((p for p in platforms if p.matches(labels, kubelet, os_image, runtime)), GENERIC)
        if len(_DETECTED) >= _DETECTED_MAX:
            _DETECTED.clear()
        _DETECTED[key] = found
    return found


def _label_keys(platforms: tuple[Platform, ...]) -> tuple[str, ...]:
    """Every label key a profile looks for (kept for the profiles' tuple itself)."""
    known = _KEYS.get(id(platforms))
    if known is None or known[0] is not platforms:
        keys = tuple(dict.fromkeys(k for p in platforms for k in p.labels))
        known = _KEYS[id(platforms)] = (platforms, keys)
    return known[1]


_KEYS: dict[int, tuple[tuple[Platform, ...], tuple[str, ...]]] = {}


#: Detected platforms by the inputs that decide them; bounded so odd fleets cannot grow it.
_DETECTED: dict[tuple[tuple[str, ...], str, str, str], Platform] = {}
_DETECTED_MAX = 256
