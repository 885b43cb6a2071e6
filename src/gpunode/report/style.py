"""Shared words and colours for statuses, so every reporter says the same thing."""

from __future__ import annotations

from gpunode.model import LAYER_NAMES, Status

STATUS_STYLE = {
    Status.OK: "green",
    Status.DEGRADED: "yellow",
    Status.FAILED: "bold red",
    Status.NOT_DEPLOYED: "dim",
    Status.UNKNOWN: "magenta",
}

STATUS_MARK = {
    Status.OK: "✓",
    Status.DEGRADED: "!",
    Status.FAILED: "✗",
    Status.NOT_DEPLOYED: "·",
    Status.UNKNOWN: "?",
}


def layer_label(layer: int) -> str:
    return f"L{layer} {LAYER_NAMES[layer]}" if layer < 5 else LAYER_NAMES[layer]
