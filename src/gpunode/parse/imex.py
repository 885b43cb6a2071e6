"""IMEX as the host has it, from the collector's read of the host root (``cmd/imex.txt``).

The collector runs one read-only line in the driver container, which shares the host's PID
namespace: from ``/proc/1/root`` (the host's root as its init sees it) it lists IMEX's unit
files, its node list and channel devices, and finds the ``nvidia-imex`` process, one host
path a line (docs/bundle-format.md)::

    etc/nvidia-imex/nodes_config.cfg                 the node list exists
    etc/nvidia-imex/nodes_config.cfg:10.0.0.11       one of its lines (grep -H)
    dev/nvidia-caps-imex-channels/channel0           a channel device node
    proc/4211/comm:nvidia-imex                       the daemon runs
    etc/systemd/system/multi-user.target.wants/nvidia-imex.service   enabled at boot
    lib/systemd/system/nvidia-imex.service           unit file installed

A container that does not see the host (no host PID namespace, or its root is the host's
own) prints ``HOST_HIDDEN`` instead: nothing is then known about IMEX.
"""

from __future__ import annotations

import msgspec

NODES_CONFIG = "etc/nvidia-imex/nodes_config.cfg"
CHANNELS_DIR = "dev/nvidia-caps-imex-channels/"
UNIT = "nvidia-imex.service"
WANTS_DIR = "etc/systemd/system/multi-user.target.wants/"
DAEMON = "nvidia-imex"
#: What the read prints where the host's root is out of its sight.
HOST_HIDDEN = "# host root not visible"
MAX_LINES = 4096


class ImexState(msgspec.Struct, frozen=True):
    """IMEX on one node: node list (path when present) and its peers, channel devices,
    whether the daemon runs, whether its unit is enabled at boot and installed."""

    nodes_config: str | None
    peers: tuple[str, ...]
    channels: tuple[str, ...]
    running: bool
    enabled: bool
    installed: bool


def parse_imex_state(text: str) -> ImexState | None:
    """The read's lines as an ImexState; None where the host was not visible."""
    lines = [line.strip() for line in text.splitlines()[:MAX_LINES] if line.strip()]
    if any(line.startswith(HOST_HIDDEN) for line in lines):
        return None
    peers: list[str] = []
    channels: list[str] = []
    present = running = enabled = installed = False
    for line in lines:
        path, sep, value = line.partition(":")
        if path == NODES_CONFIG:
            present = True
            entry = value.strip()
            if sep and entry and not entry.startswith("#"):
                peers.append(entry)
        elif path.startswith(CHANNELS_DIR) and path.removeprefix(CHANNELS_DIR).startswith("channel"):
            channels.append(path.removeprefix(CHANNELS_DIR))
        elif path.startswith("proc/") and path.endswith("/comm") and value.strip() == DAEMON:
            running = True
        elif path.endswith("/" + UNIT):
            enabled = enabled or path.startswith(WANTS_DIR)
            installed = installed or not path.startswith(WANTS_DIR)
    return ImexState("/" + NODES_CONFIG if present else None, tuple(peers), tuple(channels),
                     running, enabled, installed)
