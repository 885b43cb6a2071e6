"""Nothing read is not healthy: the lists every verdict rests on, and what follows when the
collector could not read them.

The node list says which nodes are GPU nodes and the pod list what runs on them. When a
live collection could not read one of them (refused, an HTML login page, a redirect, a
stall, errors to the last retry: the manifest's ``missing`` names it with the reason), a
report that finds no GPU node has seen nothing, not a healthy cluster: ``diagnose`` and
``stack`` exit 3 naming the list and why, and ``validate`` is not ready. The collector
itself stops with exit 3 when it could read neither (``collect.live``). A bundle that
simply has no such file (made by hand, from a probe) is not "unread": its checks say
``unknown`` as before.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpunode.errors import SourceUnreachable
from gpunode.facts import Manifest

#: Bundle path -> what the list is, in the order a message names them.
VERDICT_LISTS: dict[str, str] = {"cluster/nodes.json": "the node list", "cluster/pods.json": "the pod list"}


def unread_lists(manifest: Manifest) -> list[str]:
    """``the node list (could not list nodes cluster-wide (403 …))`` for each list the verdict
    rests on that the collector recorded as not read."""
    lost = {m.path: m.reason for m in manifest.missing}
    return [f"{label} ({lost[rel]})" if lost[rel] else label
            for rel, label in VERDICT_LISTS.items() if rel in lost]


def could_not_read(unread: Sequence[str]) -> str:
    """``could not read the node list (…)`` / ``could not read the node list (…) nor the pod list (…)``."""
    return "could not read " + " nor ".join(unread)


def refuse_empty(location: str, manifest: Manifest) -> None:
    """No GPU node found while a list that would have shown them was not read: SourceUnreachable
    (exit 3) naming it, never an empty report that exits 0."""
    unread = unread_lists(manifest)
    if unread:
        raise SourceUnreachable(f"{location}: {could_not_read(unread)}: no GPU node can be judged "
                                "without it")
