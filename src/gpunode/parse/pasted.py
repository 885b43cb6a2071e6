"""The names a pasted text gives for the placeholders of next steps (``gpunode explain``).

A user feeds ``explain`` a mix of ``kubectl describe pod`` output, pod logs, a
kernel log and ``nvidia-smi`` output. What it names fills ``{namespace}``,
``{pod}``, ``{node}`` and ``{gpu-index}`` in the matched causes' next steps:

- ``kubectl describe pod``: its ``Name:``, ``Namespace:`` and ``Node:`` lines (a
  block counts only when it has all three: a DaemonSet's describe has no ``Node:``);
  used only when the text describes one pod and one node, never a guess between two;
- a syslog/journal kernel line (``Dec  1 10:00:01 gpu-wk-02 kernel: …``): its host;
- an Xid line's ``(PCI:0000:2a:00)``: the GPU's bus id, turned into the index
  ``nvidia-smi -i`` takes when the text also holds ``nvidia-smi`` output that maps
  bus ids to indices (its table, ``-q``, ``-q -x`` or ``--query-gpu=index,pci.bus_id``);
  else the bus id itself, which ``nvidia-smi -i`` accepts too.

The file's own path names the pod too when it has a known layout: a bundle's
``logs/<namespace>/<pod>/<container>.log``, the kubelet's
``/var/log/pods/<namespace>_<pod>_<uid>/<container>/<n>.log`` and
``/var/log/containers/<pod>_<namespace>_<container>-<id>.log``.

Lines are found with plain substring searches (a few needles per block), so the
scan adds little to a multi-GB input.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gpunode.parse.gpu_ref import bus_id_in_line, gpu_values, normal_bus_id
from gpunode.relazy import lazy_compile

_BUS = r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]"
# nvidia-smi's table row ("|   3  NVIDIA H200  On  |   00000000:2A:00.0 Off |") and
# --query-gpu=index,pci.bus_id --format=csv ("3, 00000000:2A:00.0"): explicit indices.
_INDEXED = (
    lazy_compile(rf"^\|\s+(?P<index>\d+)\s[^|]{{0,200}}\|\s+(?P<bus>{_BUS})\s"),
    lazy_compile(rf"^(?P<index>\d+),\s*(?P<bus>{_BUS})\s*$"),
)
# nvidia-smi -q ("GPU 00000000:2A:00.0") and -q -x (<gpu id="00000000:2A:00.0">) list GPUs by index.
_LISTED = (lazy_compile(rf"^GPU (?P<bus>{_BUS})\s*$"), lazy_compile(rf'<gpu id="(?P<bus>{_BUS})"'))
_DESCRIBE = lazy_compile(r"^(?P<key>Name|Namespace|Node):\s+(?P<value>\S+)\s*$")
_SYSLOG_HOST = lazy_compile(
    r"^(?:[A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT[0-9:.+-]+Z?) +"
    r"(?P<host>[A-Za-z0-9][-A-Za-z0-9.]{0,252}) kernel: "
)
#: Substrings of every line worth reading; NAME_HEADS: the same at the very start of a text.
NEEDLES = ("00000000:", "\nName:", "\nNamespace:", "\nNode:")
NAME_HEADS = ("Name:", "Namespace:", "Node:")


_NAME = r"[a-z0-9][-a-z0-9.]{0,252}"  # a pod: DNS subdomain
_LABEL = r"[a-z0-9][-a-z0-9]{0,62}"  # a namespace or container: DNS label
_LOG_PATHS = (
    lazy_compile(rf"(?:^|/)logs/(?P<namespace>{_LABEL})/(?P<pod>{_NAME})/(?P<container>{_LABEL})(?:\.previous)?\.log$"),
    lazy_compile(rf"(?:^|/)pods/(?P<namespace>{_LABEL})_(?P<pod>{_NAME})_[-0-9a-f]+/(?P<container>{_LABEL})/\d+\.log$"),
    lazy_compile(rf"(?:^|/)containers/(?P<pod>{_NAME})_(?P<namespace>{_LABEL})_(?P<container>{_LABEL})-[0-9a-f]{{64}}\.log$"),
)


def names_from_path(path: str) -> dict[str, str]:
    """namespace, pod and container of a pod log whose path has a known layout; else none."""
    for pattern in _LOG_PATHS:
        found = pattern.search(path.removesuffix(".gz"))
        if found:
            return dict(found.groupdict())
    return {}


@dataclass
class PastedNames:
    """What the text names, gathered block by block."""

    indices: dict[str, int] = field(default_factory=dict)  # normal bus id -> nvidia-smi index
    listed: list[str] = field(default_factory=list)  # bus ids in nvidia-smi -q/-x order
    pods: set[tuple[str, str, str]] = field(default_factory=set)  # (namespace, pod, node)
    _describe: dict[str, str] = field(default_factory=dict)

    def feed(self, block: str) -> None:
        """Read the lines of ``block`` any needle occurs in, in order."""
        starts = {0} if block.startswith(NAME_HEADS) else set()
        for needle in NEEDLES:
            at = block.find(needle)
            while at >= 0:
                starts.add(block.rfind("\n", 0, at + (needle[0] == "\n")) + 1)
                at = block.find(needle, at + 1)
        for start in sorted(starts):
            end = block.find("\n", start)
            self.line(block[start : len(block) if end < 0 else end])

    def line(self, line: str) -> None:
        """One line that may name something."""
        described = _DESCRIBE.match(line)
        if described:
            self._described(described["key"], described["value"])
            return
        for pattern in _INDEXED:
            found = pattern.match(line)
            if found and (bus := normal_bus_id(found["bus"])):
                self.indices.setdefault(bus, int(found["index"]))
                return
        for pattern in _LISTED:
            found = pattern.search(line)
            if found and (bus := normal_bus_id(found["bus"])) and bus not in self.listed:
                self.listed.append(bus)
                return

    def _described(self, key: str, value: str) -> None:
        if key == "Name":
            self._describe = {}
        self._describe[key] = value.split("/", maxsplit=1)[0] if key == "Node" else value
        if len(self._describe) == 3:
            d = self._describe
            self.pods.add((d["Namespace"], d["Name"], d["Node"]))

    def values(self, quoted: str, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """Placeholder values for a cause whose first matching line is ``quoted``; the text's
        names win over ``base`` (what the file's path says)."""
        out: dict[str, str] = dict(base or {})
        if len(self.pods) == 1:
            ((namespace, pod, node),) = self.pods
            out.update(namespace=namespace, pod=pod, node=node)
        host = _SYSLOG_HOST.match(quoted)
        if host:
            out["node"] = host["host"]
        bus = bus_id_in_line(quoted)
        indices = {**{b: i for i, b in enumerate(self.listed)}, **self.indices}
        out.update(gpu_values(bus, indices))
        return out
