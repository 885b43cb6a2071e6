"""The layer an error line names on one node: the catalog's words (``named_by``), then
what only the node's facts tell (the host path its platform installs the driver under).

A line printed by one component often names a lower one: a pod that cannot mount the
driver's install folder fails because the driver is not installed yet, not because of
the pod. The catalog names components by their words; a path belongs to a layer only
through the node's platform, so that reading is here, next to the catalog's.
"""

from __future__ import annotations

import re
from functools import cache

from gpunode.checks.context import NodeContext


def named_on_node(ctx: NodeContext, line: str) -> str | None:
    """The lowest layer ``line`` names on this node, or None."""
    target = ctx.facts.catalog.named_in(line)
    if target is not None:
        return target
    root = ctx.platform.driver_root.rstrip("/")
    if root and _driver_root_missing(root).search(line):
        return "driver"
    if _DEVICE_UNDER_ROOT.search(line):
        return "device-plugin" if _host_driver(ctx) else "driver"
    return None


#: A GPU device node looked up under a driver root (``lstat /run/nvidia/driver/dev/nvidiactl:
#: no such file or directory``) while the runtime builds a container's spec: the device specs
#: the device plugin's allocation named.
_DEVICE_UNDER_ROOT = re.compile(
    r"\b(?:l?stat|open) /\S+?/dev/nvidia(?:\d+|ctl|-uvm(?:-tools)?|-modeset)\b.{0,20}"
    r": no such file or directory")


def _host_driver(ctx: NodeContext) -> bool:
    """The node's driver is installed on the host (no driver pod here, and the validator
    marked it ready there, or the loaded module's version file was read): a driver root in a
    device path is then not where this driver lives, so the spec naming it is stale, and the
    device plugin that allocated it is the layer to restart (NVIDIA/gpu-operator#377). With
    the driver's pod here, the root is the driver's own, not there yet."""
    if ctx.stack_pods("driver"):
        return False
    files = ctx.obs.files
    return "run/nvidia/validations/host-driver-ready" in files or "proc/driver/nvidia/version" in files


@cache
def _driver_root_missing(root: str) -> re.Pattern[str]:
    """The kubelet's refusal of a hostPath volume at or under the driver's install root
    (``hostPath type check failed: <path> is not a directory``): the folder is there only
    once the driver is installed, so its absence is the driver's, whichever pod mounts it."""
    return re.compile(rf"hostPath type check failed: {re.escape(root)}(?:/\S*)? is not a\b")
