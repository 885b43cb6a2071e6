"""Evidence the user can open: for a bundle, a path in it that exists; live, the command.

An evidence ``source`` says where a finding came from in gpunode's words (a bundle path with
a line, ``pod NS/NAME status…``, ``node/N metadata.labels``, ``event pod NS/NAME reason=R``).
``open`` turns it into what a user types: offline the bundle file that holds it (or, for a
file the finding says is missing, the nearest folder that exists, whose listing shows it
absent); live the kubectl command that shows the same thing (``kubectl logs -n NS POD -c C
[--previous]``, ``kubectl describe node N``, ``kubectl get events …``; a node's own files
through ``kubectl debug node/N``). A source no rule knows gets no ``open`` rather than a
guess.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import msgspec

from gpunode.model import ClusterReport, Evidence, NodeReport, Report, RootCause
from gpunode.relazy import lazy_compile
from gpunode.validation import ValidationReport

if TYPE_CHECKING:
    from gpunode.bundle.source import BundleSource

Exists = Callable[[str], bool]

#: The debug pod's command prefix: the node's root is /host (kubectl debug's node profile).
DEBUG = "kubectl debug node/{node} -it --profile=sysadmin --image=busybox -- chroot /host"
#: What made each node file (docs/bundle-format.md), run on the node.
NODE_COMMANDS = {
    "nvidia-smi-q.xml": "nvidia-smi -q -x",
    "nvidia-smi.txt": "nvidia-smi",
    "dmesg.txt": "dmesg",
    "lsmod.txt": "lsmod",
    "journal-kubelet.txt": "journalctl -u kubelet --since -2h -o short-iso",
    "journal-runtime.txt": "journalctl -u containerd --since -2h -o short-iso",
    "journal-fabricmanager.txt": "journalctl -u nvidia-fabricmanager --since -2h -o short-iso",
    "journal-imex.txt": "journalctl -u nvidia-imex --since -2h -o short-iso",
    "gpunode-probe.json": "gpunode probe -o json",
    "nvidia-smi-nvlink-s.txt": "nvidia-smi nvlink -s",
    "nvidia-smi-nvlink-e.txt": "nvidia-smi nvlink -e",
    "nvidia-smi-topo-m.txt": "nvidia-smi topo -m",
    "sysfs-infiniband.txt": "grep -rH . /sys/class/infiniband",
    "ibstat.txt": "ibstat",
    "ibv_devinfo.txt": "ibv_devinfo -v",
}
#: Metrics ports of the exporters whose scrapes the bundle keeps.
METRICS_PORTS = {"dcgm-exporter": 9400, "node-exporter": 9100}
#: Kinds named as ``kind/name`` or ``kind NS/NAME``: (bundle file, kubectl resource).
KINDS = {
    "pod": ("cluster/pods.json", "pod"),
    "node": ("cluster/nodes.json", "node"),
    "nodes": ("cluster/nodes.json", "nodes"),
    "daemonset": ("cluster/daemonsets.json", "daemonset"),
    "deployment": ("cluster/deployments.json", "deployment"),
    "csinode": ("cluster/csinodes.json", "csinode"),
    "runtimeclass": ("cluster/runtimeclasses.json", "runtimeclass"),
    "clusterpolicy": ("cluster/clusterpolicies.json", "clusterpolicies.nvidia.com"),
    "nicclusterpolicy": ("cluster/nicclusterpolicies.json", "nicclusterpolicies.mellanox.com"),
    "pvc": ("cluster/persistentvolumeclaims.json", "pvc"),
    "configmap": ("cluster/configmaps.json", "configmap"),
    "service": ("cluster/services.json", "service"),
    "servicemonitor": ("cluster/servicemonitors.json", "servicemonitor"),
    "event": ("cluster/events.json", "events"),
    "namespace": ("cluster/pods.json", "namespace"),
}
_LINE = lazy_compile(r":\d+(?:-\d+)?$")
_LOG = lazy_compile(r"^logs/(?P<ns>[^/]+)/(?P<pod>[^/]+)/(?P<c>[^/]+?)(?P<prev>\.previous)?\.log$")


def bundle_path(source: str, exists: Exists) -> str | None:
    """The bundle file holding ``source``, or the nearest folder that exists; None: none."""
    path = _path_of(source)
    if path is None:
        return None
    if exists(path):
        return path
    parts = path.split("/")[:-1]
    while parts:
        folder = "/".join(parts) + "/"
        if exists(folder):
            return folder
        parts.pop()
    return None


def shown_open(ev: Evidence) -> str | None:
    """``open`` where it tells more than the source does (not the source's own path)."""
    if ev.open is None or ev.source.startswith(ev.open):
        return None
    return ev.open


def _path_of(source: str) -> str | None:
    """The bundle path a source names: itself less its line, or the list of its kind."""
    if (scrapes := _SCRAPES.match(source)) is not None:
        return f"nodes/{scrapes['node']}/metrics/{scrapes['component']}.prom"
    head, _, _rest = source.partition(" ")
    if "/" in head and head.split("/", 1)[0] in ("nodes", "cluster", "logs"):
        return _LINE.sub("", head)
    if head in ("manifest.json", "manifest.json:"):
        return "manifest.json"
    kind = head.split("/", 1)[0]
    if kind in KINDS:
        return KINDS[kind][0]
    return None


def live_command(source: str, pods: dict[tuple[str, str], tuple[str, str]]) -> str | None:
    """The kubectl command that shows ``source`` on the live cluster; None: none known.
    ``pods``: (node, component) -> (namespace, pod), for the exporters' metrics."""
    head, _, rest = source.partition(" ")
    path = _LINE.sub("", head)
    if path.startswith(("logs/", "nodes/", "cluster/")):
        return _path_command(path, pods)
    return _named_command(head, rest)


def _path_command(path: str, pods: dict[tuple[str, str], tuple[str, str]]) -> str | None:
    if path.startswith("logs/"):
        return _logs(path)
    if path.startswith("nodes/"):
        return _node_file(path, pods)
    if path == "cluster/version.json":
        return "kubectl version"
    kind = path.removeprefix("cluster/").removesuffix(".json")
    return f"kubectl get {kind}{'' if kind in CLUSTER_SCOPED else ' -A'} -o yaml"


def _logs(path: str) -> str | None:
    match = _LOG.match(path)
    if match is None:
        return None
    previous = " --previous" if match["prev"] else ""
    return f"kubectl logs -n {match['ns']} {match['pod']} -c {match['c']}{previous}"


def _node_file(path: str, pods: dict[tuple[str, str], tuple[str, str]]) -> str | None:
    parts = path.split("/", 3)
    if len(parts) < 4:
        return f"kubectl describe node {parts[1]}" if len(parts) > 1 else None
    _, node, area, rest = parts
    debug = DEBUG.format(node=node)
    if area == "files":
        return f"{debug} cat /{rest}"
    if area == "cmd":
        return f"{debug} {NODE_COMMANDS.get(rest, rest.rsplit('.', 1)[0].replace('-', ' '))}"
    if area != "metrics":
        return None
    component = rest.removesuffix(".prom")
    port = METRICS_PORTS.get(component)
    ns_pod = pods.get((node, component))
    if port is not None and ns_pod is not None:
        return f"kubectl get --raw /api/v1/namespaces/{ns_pod[0]}/pods/{ns_pod[1]}:{port}/proxy/metrics"
    return f"kubectl debug node/{node} -it --image=busybox -- wget -qO- localhost:{port or 9400}/metrics"


#: Sources that name no object: the command that shows the same.
_FIXED = {"manifest.json": "kubectl cluster-info", "nodes": "kubectl get nodes -o wide",
          "GET": "kubectl version",
          "kubeconfig": "kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}'"}
#: Cluster lists of objects without a namespace (no -A).
CLUSTER_SCOPED = frozenset({"nodes", "storageclasses", "runtimeclasses", "csidrivers", "csinodes",
                            "clusterpolicies", "nicclusterpolicies", "resourceslices", "version"})
_SCRAPES = lazy_compile(r"^two scrapes of (?P<component>\S+) on (?P<node>\S+)$")


def _named_command(head: str, rest: str) -> str | None:
    """``pod NS/NAME …``, ``node/N …``, ``event pod NS/NAME reason=R``, ``kind/name …``."""
    if head in _FIXED:
        return _FIXED[head]
    if (scrapes := _SCRAPES.match(f"{head} {rest}")) is not None:  # validate's DCGM freshness
        return _node_file(f"nodes/{scrapes['node']}/metrics/{scrapes['component']}.prom", {})
    if head == "diagnose":
        return f"gpunode diagnose {shlex.quote(rest)}" if rest and rest != "cluster" else "gpunode diagnose"
    if head == "event":
        return _event(rest)
    if "/" in head:  # node/N, csinode/N, nicclusterpolicy/NAME, runtimeclass/NAME
        return _kind_name(*head.split("/", 1))
    return _kind_ref(head, rest.split(" ", 1)[0]) if head in KINDS else None


def _event(rest: str) -> str:
    ref = rest.split(" ")[1] if len(rest.split(" ")) > 1 else rest
    ns, _, name = ref.rpartition("/")
    where = f"-n {ns}" if ns else "-A"
    return f"kubectl get events {where} --field-selector involvedObject.name={name}"


def _kind_name(kind: str, name: str) -> str | None:
    if kind not in KINDS:
        return None
    if kind == "node":
        return f"kubectl describe node {name}"
    return f"kubectl get {KINDS[kind][1]} {name} -o yaml"


def _kind_ref(kind: str, ref: str) -> str:
    """``pod NS/NAME``, ``daemonset NS/NAME``, ``pvc NS/NAME``; a cluster-scoped kind whole."""
    resource = KINDS[kind][1]
    if kind == "clusterpolicy":
        return f"kubectl get {resource} -o yaml"
    if kind == "namespace":
        return f"kubectl get namespace {ref}"
    ns, _, name = ref.rpartition("/")
    verb, tail = ("describe", "") if kind in ("pod", "pvc", "daemonset") else ("get", " -o yaml")
    where = f" -n {ns}" if ns else ""
    return f"kubectl {verb} {resource}{where} {name}{tail}"


def _pods(report: Report) -> dict[tuple[str, str], tuple[str, str]]:
    return {(n.name, c.component): (p.namespace, p.name)
            for n in report.nodes for c in n.components for p in c.pods[:1]}


def _opener(live: bool, exists: Exists | None, pods: dict[tuple[str, str], tuple[str, str]],
            bundle: str | None = None) -> Callable[[tuple[Evidence, ...]], tuple[Evidence, ...]]:
    seen: dict[str, str | None] = {}

    def opened(source: str) -> str | None:
        if source not in seen:
            if live:
                seen[source] = live_command(source, pods)
            elif source.startswith("diagnose ") and bundle is not None:  # validate's stack check
                seen[source] = f"{live_command(source, pods)} --from {shlex.quote(bundle)}"
            else:
                seen[source] = bundle_path(source, exists) if exists is not None else None
        return seen[source]

    def evidence(items: tuple[Evidence, ...]) -> tuple[Evidence, ...]:
        return tuple(msgspec.structs.replace(e, open=opened(e.source)) for e in items)

    return evidence


def with_open(report: Report, *, live: bool, exists: Exists | None = None) -> Report:
    """The report with every evidence's ``open`` set (live: commands; else bundle paths,
    where the pods the commands name are not asked)."""
    return _each_evidence(report, _opener(live, exists, _pods(report) if live else {}))


def with_origins(report: Report, origins: Mapping[str, str], root: str) -> Report:
    """A report made from a converted copy (a GPU Operator must-gather): every ``open``, a
    path in the copy that is gone after the run, becomes the file it was converted from
    (``origins``: the copy's manifest ``origin_files``), else the directory the user gave
    (``root``), so what the report points to can be opened after the run."""
    return _each_evidence(report, _moved(origins, root))


def validation_with_origins(report: ValidationReport, origins: Mapping[str, str], root: str
                            ) -> ValidationReport:
    """The checks' evidence of a converted copy opening where ``with_origins`` points a
    diagnosis's: the must-gather file it came from, else the directory the user gave."""
    moved = _moved(origins, root)
    categories = tuple(
        msgspec.structs.replace(cat, checks=tuple(
            msgspec.structs.replace(c, evidence=moved(c.evidence)) for c in cat.checks))
        for cat in report.categories)
    return msgspec.structs.replace(report, categories=categories)


def _moved(origins: Mapping[str, str], root: str) -> Callable[[tuple[Evidence, ...]], tuple[Evidence, ...]]:
    def moved(items: tuple[Evidence, ...]) -> tuple[Evidence, ...]:
        return tuple(e if e.open is None else msgspec.structs.replace(e, open=origins.get(e.open, root))
                     for e in items)

    return moved


def _each_evidence(report: Report, evidence: Callable[[tuple[Evidence, ...]], tuple[Evidence, ...]]
                   ) -> Report:
    """The report with ``evidence`` applied to the evidence of every root cause."""
    def causes(items: tuple[RootCause, ...]) -> tuple[RootCause, ...]:
        return tuple(msgspec.structs.replace(rc, evidence=evidence(rc.evidence)) for rc in items)

    def node(n: NodeReport) -> NodeReport:
        return msgspec.structs.replace(n, root_causes=causes(n.root_causes))

    cluster: ClusterReport = msgspec.structs.replace(report.cluster,
                                                     root_causes=causes(report.cluster.root_causes))
    return msgspec.structs.replace(report, cluster=cluster, nodes=tuple(node(n) for n in report.nodes))


def validation_with_open(report: ValidationReport, *, live: bool, exists: Exists | None = None,
                         diagnosis: Report | None = None) -> ValidationReport:
    """The checks' evidence with ``open`` set, as ``with_open`` does for a diagnosis (the
    stack check's ``diagnose NODE``: the gpunode command, ``--from`` the bundle offline)."""
    pods = _pods(diagnosis) if diagnosis is not None else {}
    evidence = _opener(live, exists, pods, None if live else report.source.location)
    categories = tuple(
        msgspec.structs.replace(cat, checks=tuple(
            msgspec.structs.replace(c, evidence=evidence(c.evidence)) for c in cat.checks))
        for cat in report.categories)
    return msgspec.structs.replace(report, categories=categories)


def exists_in(source: BundleSource) -> Exists:
    """Whether a bundle path exists (``x/``: a folder with a file under it), asked once each."""
    known: dict[str, bool] = {}

    def exists(rel: str) -> bool:
        if rel not in known:
            if rel.endswith("/"):
                known[rel] = bool(source.list(rel))
            else:
                opened = source.open(rel)
                if opened is not None:
                    opened[0].close()
                known[rel] = opened is not None
        return known[rel]

    return exists
