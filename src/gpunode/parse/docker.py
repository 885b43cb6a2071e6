"""Docker's ``/etc/docker/daemon.json``: the OCI runtimes dockerd knows and its default.

Where Docker is the node's runtime (``containerRuntimeVersion: docker://…``, through
dockershim or cri-dockerd) this file, not containerd's, decides whether containers
can reach the GPUs: ``runtimes.<name>.path`` and ``default-runtime``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import msgspec

from gpunode.errors import ParseError
from gpunode.parse.runtime_handler import RuntimeHandler

DOCKER_DAEMON_JSON = "/etc/docker/daemon.json"


class DockerConfig(msgspec.Struct, frozen=True):
    """The runtimes and default runtime of one daemon.json."""

    runtimes: dict[str, RuntimeHandler]
    default_runtime: str | None
    source: str


def parse_docker_daemon_json(text: str, path: str = DOCKER_DAEMON_JSON) -> DockerConfig:
    """Decode daemon.json; anything that is not a JSON object is a ParseError."""
    try:
        doc = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise ParseError(f"{path}: invalid JSON: {exc}") from None
    except RecursionError:
        raise ParseError(f"{path}: invalid JSON: nested too deeply") from None
    if not isinstance(doc, dict):
        raise ParseError(f"{path}: expected a JSON object")
    default = doc.get("default-runtime")
    return DockerConfig(
        runtimes=_runtimes(doc.get("runtimes"), path),
        default_runtime=default if isinstance(default, str) and default else None,
        source=path,
    )


def _runtimes(raw: Any, path: str) -> dict[str, RuntimeHandler]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ParseError(f"{path}: 'runtimes' must be an object")
    out: dict[str, RuntimeHandler] = {}
    for name, spec in raw.items():
        binary = spec.get("path") if isinstance(spec, Mapping) else None
        out[name] = RuntimeHandler(
            name=name, runtime_type=None, binary_name=binary if isinstance(binary, str) and binary else None
        )
    return out
