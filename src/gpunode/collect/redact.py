"""Remove secret-looking values from collected pod specs before they are written.

A bundle travels (to support, into tickets), so environment values and
command-line arguments whose names suggest credentials are replaced. Only
objects that contain such a name are decoded and re-encoded; the rest keep
their bytes exactly as the API returned them.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

REDACTED = "<redacted>"
SENSITIVE = re.compile(r"(?i)(token|passw(or)?d|secret|credential|api[-_]?key|(^|[-_.])key($|[-_.])"
                       r"|private[-_]?key|access[-_]?key)")


def is_sensitive(name: str) -> bool:
    return bool(SENSITIVE.search(name))


class _EnvName(msgspec.Struct):
    name: str = ""


class _ProbeContainer(msgspec.Struct):
    env: list[_EnvName] = []
    args: list[str] = []
    command: list[str] = []


class _ProbeSpec(msgspec.Struct, rename="camel"):
    containers: list[_ProbeContainer] = []
    init_containers: list[_ProbeContainer] = []
    ephemeral_containers: list[_ProbeContainer] = []


class _ProbeTemplate(msgspec.Struct):
    spec: _ProbeSpec | None = None


class _ProbeWorkloadSpec(msgspec.Struct):
    template: _ProbeTemplate | None = None


class _ProbePod(msgspec.Struct):
    spec: _ProbeSpec | None = None


class _ProbeWorkload(msgspec.Struct):
    spec: _ProbeWorkloadSpec | None = None


_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


def _spec_needs_redaction(spec: _ProbeSpec | None) -> bool:
    if spec is None:
        return False
    containers = (*spec.containers, *spec.init_containers, *spec.ephemeral_containers)
    return any(any(is_sensitive(e.name) for e in c.env) or _args_need_redaction(c.args)
               or _args_need_redaction(c.command) for c in containers)


def _args_need_redaction(args: list[str]) -> bool:
    return any(arg.startswith("-") and is_sensitive(arg.lstrip("-").split("=", 1)[0])
               for arg in args)


#: Built once here (also faster per item): list threads decode into these concurrently,
#: and msgspec building a type's information in several threads at once can crash.
_POD_PROBE = msgspec.json.Decoder(_ProbePod)
_WORKLOAD_PROBE = msgspec.json.Decoder(_ProbeWorkload)


def redact_pod(item: bytes) -> bytes:
    """A Pod's JSON with sensitive env values and flag values replaced."""
    probe = _POD_PROBE.decode(item)
    if not _spec_needs_redaction(probe.spec):
        return item
    obj = msgspec.json.decode(item)
    redact_pod_spec(obj.get("spec") or {})
    return msgspec.json.encode(obj)


def redact_workload(item: bytes) -> bytes:
    """The same for a DaemonSet/Deployment, whose pod spec sits in spec.template."""
    probe = _WORKLOAD_PROBE.decode(item)
    template = probe.spec.template if probe.spec else None
    if template is None or not _spec_needs_redaction(template.spec):
        return item
    obj = msgspec.json.decode(item)
    redact_pod_spec(obj["spec"]["template"].get("spec") or {})
    return msgspec.json.encode(obj)


def redact_pod_spec(spec: dict[str, Any]) -> None:
    """In place: env values and ``--secret=x`` / ``--secret x`` argument values."""
    for key in _CONTAINER_LISTS:
        for container in spec.get(key) or []:
            for env in container.get("env") or []:
                if is_sensitive(env.get("name", "")) and "value" in env:
                    env["value"] = REDACTED
            for field in ("args", "command"):
                if container.get(field):
                    container[field] = redact_args(container[field])


def redact_args(args: list[str]) -> list[str]:
    out: list[str] = []
    hide_next = False
    for arg in args:
        if hide_next and not arg.startswith("-"):
            out.append(REDACTED)
            hide_next = False
            continue
        flag, eq, _value = arg.partition("=")
        sensitive = arg.startswith("-") and is_sensitive(flag.lstrip("-"))
        out.append(f"{flag}={REDACTED}" if sensitive and eq else arg)
        hide_next = sensitive and not eq
    return out
