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
    return None


@cache
def _driver_root_missing(root: str) -> re.Pattern[str]:
    """The kubelet's refusal of a hostPath volume at or under the driver's install root
    (``hostPath type check failed: <path> is not a directory``): the folder is there only
    once the driver is installed, so its absence is the driver's, whichever pod mounts it."""
    return re.compile(rf"hostPath type check failed: {re.escape(root)}(?:/\S*)? is not a\b")
