"""OCI hook files (``hooks.d/*.json``) that CRI-O and Podman inject into containers.

A CRI-O node without an NVIDIA runtime handler gets GPUs through the toolkit's hook
(``oci-nvidia-hook.json``: ``/usr/bin/nvidia-container-toolkit prestart``). Schema
1.0.0 is ``{version, hook: {path, args, env, timeout}, when: {always, annotations,
commands, hasBindMounts}, stages}``; the older 0.1.0 files put the path in ``hook``
and the arguments in ``arguments``. CRI-O skips a hook whose file does not parse,
names no path or stage, or whose path does not exist.
"""

from __future__ import annotations

import json
from pathlib import PurePosixPath
from typing import Any

import msgspec

from gpunode.errors import ParseError

#: Where CRI-O looks when its config sets no ``hooks_dir`` (the packaged and the local dir).
OCI_HOOK_DIRS: tuple[str, ...] = ("/usr/share/containers/oci/hooks.d", "/etc/containers/oci/hooks.d")
#: The toolkit's hook binary under its two names (``nvidia-container-toolkit`` links to it).
NVIDIA_HOOK_BINARIES: frozenset[str] = frozenset(
    {"nvidia-container-runtime-hook", "nvidia-container-toolkit"}
)
STAGES: frozenset[str] = frozenset(
    {"prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop"}
)
MAX_HOOK_BYTES = 64 * 1024


class OciHook(msgspec.Struct, frozen=True):
    """One hook file, as CRI-O reads it."""

    file: str
    version: str
    path: str
    args: tuple[str, ...] = ()
    stages: tuple[str, ...] = ()
    always: bool | None = None
    commands: tuple[str, ...] = ()
    annotations: dict[str, str] = msgspec.field(default_factory=dict)
    has_bind_mounts: bool | None = None

    @property
    def nvidia(self) -> bool:
        """The hook runs NVIDIA's runtime hook (by its path or its argv[0])."""
        names = {PurePosixPath(self.path).name, *(PurePosixPath(a).name for a in self.args[:1])}
        return bool(names & NVIDIA_HOOK_BINARIES)

    @property
    def injected(self) -> bool:
        """Some condition can match: ``always: false`` matches nothing, and CRI-O
        injects a hook only when every condition it sets matches and one is set."""
        if self.always is False:
            return False
        return bool(self.always or self.commands or self.annotations or self.has_bind_mounts)


def parse_oci_hook(file: str, text: str) -> OciHook:
    """One hook file; ParseError with the file's name when CRI-O would skip it."""
    try:
        data: Any = json.loads(text)
    except ValueError as exc:
        raise ParseError(f"{file}: not JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise ParseError(f"{file}: not a JSON object")
    if data.get("version") == "1.0.0":
        return _v1(file, data)
    if "version" not in data and isinstance(data.get("hook"), str):
        return _v0(file, data)
    raise ParseError(f"{file}: unknown hook version {data.get('version')!r} (expected 1.0.0)")


def _v1(file: str, data: dict[str, Any]) -> OciHook:
    hook = data.get("hook")
    if not isinstance(hook, dict) or not isinstance(hook.get("path"), str) or not hook["path"]:
        raise ParseError(f"{file}: missing required property hook.path")
    when = data.get("when", {})
    if not isinstance(when, dict):
        raise ParseError(f"{file}: when must be an object")
    annotations = when.get("annotations", {})
    if not isinstance(annotations, dict):
        raise ParseError(f"{file}: when.annotations must be an object")
    return OciHook(
        file=file,
        version="1.0.0",
        path=hook["path"],
        args=_strings(file, "hook.args", hook.get("args", [])),
        stages=_stages(file, data.get("stages")),
        always=_bool(file, "when.always", when.get("always")),
        commands=_strings(file, "when.commands", when.get("commands", [])),
        annotations={str(k): str(v) for k, v in annotations.items()},
        has_bind_mounts=_bool(file, "when.hasBindMounts", when.get("hasBindMounts")),
    )


def _v0(file: str, data: dict[str, Any]) -> OciHook:
    """The 0.1.0 layout: ``{hook, arguments, stages, cmds, annotations, hasbindmounts}``."""
    annotations = _strings(file, "annotations", data.get("annotations", []))
    commands = _strings(file, "cmds", data.get("cmds", []))
    has_bind_mounts = _bool(file, "hasbindmounts", data.get("hasbindmounts"))
    return OciHook(
        file=file,
        version="0.1.0",
        path=data["hook"],
        args=(data["hook"], *_strings(file, "arguments", data.get("arguments", []))),
        stages=_stages(file, data.get("stages")),
        always=None if (annotations or commands or has_bind_mounts) else True,
        commands=commands,
        annotations=dict.fromkeys(annotations, ".*"),
        has_bind_mounts=has_bind_mounts,
    )


def _stages(file: str, value: object) -> tuple[str, ...]:
    stages = _strings(file, "stages", value if value is not None else [])
    if not stages:
        raise ParseError(f"{file}: missing required property stages")
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        raise ParseError(f"{file}: unknown stage {unknown[0]!r}")
    return stages


def _strings(file: str, key: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ParseError(f"{file}: {key} must be an array of strings")
    return tuple(value)


def _bool(file: str, key: str, value: object) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise ParseError(f"{file}: {key} must be true or false")
    return value
