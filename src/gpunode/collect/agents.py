"""gpunode agents during live collection: finding them, and what their facts make unnecessary.

Where the agent DaemonSet runs, each GPU node's probe result (NVML, kernel log,
host files, runtime configs) is one GET through the pod proxy. The collector
folds it into the bundle first and then runs only the execs whose output the
agent did not supply (``supplied``). Pure functions; the collector does the I/O.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import msgspec

from gpunode.agent.fold import AGENT_LABEL, AGENT_NAMESPACE
from gpunode.bundle.kube import Pod
from gpunode.collect.plan import ExecTarget
from gpunode.collect.slim import RawPage

#: Facts older than this mean the agent stopped probing; the node is then read by exec.
AGENT_FACTS_MAX_AGE_S: Final[float] = 600.0
#: An agent's ``/facts?raw=1`` is JSON and cannot be cut short; larger ones are not used.
AGENT_FACTS_LIMIT_BYTES: Final[int] = 64 * 1024 * 1024

#: An exec's output (node-relative path) -> the file an agent supplies with the same facts.
AGENT_EQUIVALENTS: Final[dict[str, str]] = {
    "cmd/lsmod.txt": "files/proc/modules",  # the checks read either (lsmod reads /proc/modules)
    # IMEX's unit, node list, channels and process are in the probe's interconnect section,
    # which the imex check reads instead of the collector's read of the host root
    "cmd/imex.txt": "cmd/gpunode-probe.json",
}

_NEEDLE = AGENT_LABEL[1].encode()


def is_agent(pod: Pod) -> bool:
    """An agent pod of the gpunode DaemonSet (its namespace and name label)."""
    meta = pod.metadata
    return meta.namespace == AGENT_NAMESPACE and meta.labels.get(AGENT_LABEL[0]) == AGENT_LABEL[1]


def agent_pods_on_page(body: bytes, page: RawPage) -> list[Pod]:
    """The agent pods of one pod-list page.

    A byte search skips the page unless the label value occurs in it at all, so
    a 100,000-pod list costs one scan per page; only matching items are decoded.
    """
    if _NEEDLE not in body:
        return []
    items = (bytes(item) for item in page.items)
    pods = (msgspec.json.decode(item, type=Pod) for item in items if _NEEDLE in item)
    return [pod for pod in pods if is_agent(pod)]


def node_relative(target: ExecTarget) -> str:
    """``cmd/dmesg.txt`` for ``nodes/<node>/cmd/dmesg.txt``."""
    return target.bundle_path.removeprefix(f"nodes/{target.node}/")


def supplied(target: ExecTarget, covered: frozenset[str]) -> bool:
    """Whether the agent's folded files (node-relative paths) already hold this exec's answer."""
    rel = node_relative(target)
    if target.unpack_tar:
        return any(path.startswith(rel + "/") for path in covered)
    return rel in covered or AGENT_EQUIVALENTS.get(rel, "\0") in covered


def folded_files(root: Path, node: str) -> frozenset[str]:
    """Node-relative paths of the observations in ``root`` for ``node`` (commands and files)."""
    base = root / "nodes" / node
    found: set[str] = set()
    for sub in ("cmd", "files"):
        found.update(p.relative_to(base).as_posix() for p in (base / sub).rglob("*") if p.is_file())
    return frozenset(found)
