"""Container Device Interface spec files (``/etc/cdi``, ``/var/run/cdi``), JSON or YAML."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from gpunode.errors import ParseError


class CdiSpec(msgspec.Struct, frozen=True):
    """A spec's kind (``vendor/class``) and the device names it defines."""

    path: str
    kind: str
    devices: tuple[str, ...]
    cdi_version: str

    def qualified_devices(self) -> tuple[str, ...]:
        """Fully qualified names as used in annotations: ``nvidia.com/gpu=0``."""
        return tuple(f"{self.kind}={name}" for name in self.devices)


def parse_cdi_spec(path: str, text: str) -> CdiSpec:
    """Decode one spec; ``.json`` files are JSON, anything else YAML."""
    doc = _load(path, text)
    if not isinstance(doc, dict):
        raise ParseError(f"{path}: CDI spec is not a mapping")
    kind, version = doc.get("kind"), doc.get("cdiVersion")
    if not isinstance(kind, str) or "/" not in kind:
        raise ParseError(f"{path}: CDI spec has no valid 'kind' (vendor/class)")
    if not isinstance(version, str):
        raise ParseError(f"{path}: CDI spec has no 'cdiVersion'")
    return CdiSpec(path=path, kind=kind, devices=_device_names(path, doc), cdi_version=version)


def _load(path: str, text: str) -> Any:
    """JSON or YAML (safe loader only); PyYAML is loaded only for a YAML spec (start-up time)."""
    syntax: tuple[type[Exception], ...] = (json.JSONDecodeError,)
    if not path.endswith(".json"):
        import yaml

        syntax = (yaml.YAMLError,)
    try:
        if path.endswith(".json"):
            return json.loads(text)
        from gpunode.limits import bounded_yaml  # PyYAML only when a YAML spec is read

        return bounded_yaml(text, path)
    except syntax as exc:
        raise ParseError(f"{path}: CDI spec is not valid {_format(path)}: {exc}") from None
    except RecursionError:
        raise ParseError(f"{path}: CDI spec is nested too deeply") from None
    except ValueError as exc:  # bounded_yaml: expands too far
        raise ParseError(str(exc)) from None


def _format(path: str) -> str:
    return "JSON" if path.endswith(".json") else "YAML"


def _device_names(path: str, doc: dict[str, Any]) -> tuple[str, ...]:
    """``devices[].name``; a spec may define none (container edits only)."""
    devices = doc.get("devices") or []
    if not isinstance(devices, list):
        raise ParseError(f"{path}: CDI 'devices' is not a list")
    names = [d.get("name") for d in devices if isinstance(d, dict)]
    if len(names) != len(devices) or not all(isinstance(n, str) for n in names):
        raise ParseError(f"{path}: a CDI device has no name")
    return tuple(str(n) for n in names)
