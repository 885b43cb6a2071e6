"""Read the output directory of NVIDIA's GPU Operator must-gather script as a bundle.

The script (``hack/must-gather.sh`` in NVIDIA/gpu-operator) saves, under one
artifact directory: the ClusterPolicy as YAML (or a ``cluster_policy.missing``
marker), the operator namespace's pods and DaemonSets as YAML lists, the
operator pod as YAML, ``kubectl logs --all-containers --prefix`` output per
operand pod (current and ``.previous``), GPU node labels and a ``get nodes -o
wide`` table as text, and an ``nvidia-bug-report_<node>.log.gz`` per driver pod.

Objects are written unchanged into ``cluster/*.json``; Nodes exist only as
labels and a status table there, so minimal Node objects are rebuilt from
those (the manifest says so). Kernel log lines are taken from each bug report
into ``nodes/<node>/cmd/dmesg.txt``. The result is marked partial: events,
cluster-wide pods and node commands other than the bug report are absent.

The converted bundle is a working copy: the manifest's ``origin_files`` names, for each file
written, the must-gather file it came from (under the directory as the user named it), so a
report's evidence opens in the must-gather the user has (``with_origins``), not in a
temporary directory that is gone after the run.
"""

from __future__ import annotations

import gzip
import json
import os
import re
from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import IO, Any, BinaryIO, cast

from gpunode.bounded import TooLarge, capped_lines, read_whole, size_text, tail_lines
from gpunode.errors import BundleError
from gpunode.limits import (
    MAX_FILE_BYTES,
    MAX_LINE_CHARS,
    MAX_NODE_FILE_BYTES,
    MAX_NODE_LOG_BYTES,
    MAX_YAML_BYTES,
)
from gpunode.relazy import lazy_compile
from gpunode.safety import inside

MARKERS = ("gpu_operand_pods.yaml", "cluster_policy.yaml", "cluster_policy.missing")
_PREFIX = lazy_compile(r"^\[pod/(?P<pod>[^/\]]+)/(?P<container>[^\]]+)\] ?(?P<text>.*)$")
_KERNEL_LINE = lazy_compile(r"^\[\s*\d+\.\d+\]\s|kernel: |NVRM: ")
_BUG_REPORT = lazy_compile(r"^nvidia-bug-report_(?P<node>.+)\.log(\.gz)?$")


def find_must_gather(src: Path) -> Path | None:
    """The artifact directory inside ``src`` (OpenShift nests it one or two levels down).

    One walk of the two folder levels, each folder listed once, rather than a glob per marker
    and level (each listing every node folder of a bundle again); the same answer: the
    shallowest level first, then the first marker, then the first folder in path order."""
    if not src.is_dir():
        return None
    level: list[tuple[tuple[str, ...], str]] = [((), os.fspath(src))]
    for depth in range(3):
        if depth:
            level = _subfolders(level)
        listed = [(rel, os.path.join(path, ""), _names(path)) for rel, path in level]
        for marker in MARKERS:
            hits = [rel for rel, prefix, names in listed if (names is None or marker in names)
                    and os.path.exists(prefix + marker)]
            if hits:
                return src.joinpath(*min(hits))
    return None


def _names(folder: str) -> set[str] | None:
    """The names in ``folder``, None where it cannot be listed (a marker may still be there)."""
    try:
        return set(os.listdir(folder))
    except OSError:
        return None


def _subfolders(level: list[tuple[tuple[str, ...], str]]) -> list[tuple[tuple[str, ...], str]]:
    """The folders (links to folders too, hidden ones too, as a glob's ``*/``) in each of
    ``level``: each its names from the top and its path."""
    found: list[tuple[tuple[str, ...], str]] = []
    for rel, path in level:
        try:
            with os.scandir(path) as entries:
                found.extend(((*rel, e.name), e.path) for e in entries if _is_folder(e))
        except PermissionError:
            continue
    return found


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def is_must_gather(src: Path) -> bool:
    return find_must_gather(src) is not None


def _load_yaml(path: Path) -> Any:
    import yaml  # only for a must-gather: every `--from` checks whether it was given one

    try:
        text = read_whole(path, MAX_YAML_BYTES, "a must-gather YAML file").decode(errors="replace")
        from gpunode.limits import bounded_yaml

        return bounded_yaml(text, str(path))
    except (OSError, yaml.YAMLError, ValueError) as exc:
        first = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), type(exc).__name__)
        if isinstance(exc, ValueError) and first.startswith(str(path)):
            raise BundleError(first) from None  # a limit's own line names the file
        raise BundleError(f"{path}: unreadable YAML: {first}") from None


def _items(doc: Any) -> list[dict[str, Any]]:
    """Objects of a YAML document that is either one object or a List. An object without
    a name (a cut or damaged file) is left out: nothing can refer to it, and what needed
    it says unknown."""
    if not isinstance(doc, dict):
        return []
    items = doc["items"] if isinstance(doc.get("items"), list) else [doc] if doc.get("kind") else []
    return [i for i in items if _named(i)]


def _named(obj: Any) -> bool:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    return isinstance(meta, dict) and isinstance(meta.get("name"), str) and \
        isinstance(meta.get("namespace", ""), str)


def _as_list(items: Iterable[dict[str, Any]]) -> bytes:
    doc = {"apiVersion": "v1", "items": list(items), "kind": "List",
           "metadata": {"resourceVersion": ""}}
    return json.dumps(doc, indent=4, sort_keys=True, default=str).encode() + b"\n"


def _unique(objects: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for obj in objects:
        meta = obj.get("metadata") or {}
        seen.setdefault((meta.get("namespace", ""), meta.get("name", "")), obj)
    return list(seen.values())


def parse_node_labels(text: str) -> dict[str, dict[str, str]]:
    """``gpu_nodes.labels``: a node name line, then ``- key=value`` lines."""
    nodes: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("- ") and current is not None:
            key, _, value = line[2:].rstrip(",").partition("=")
            current[key] = value
        elif line:
            current = nodes.setdefault(line, {})
    return nodes


def parse_wide_table(text: str) -> list[dict[str, str]]:
    """A ``kubectl get -o wide`` table, cut at the header's column offsets."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return []
    header = lines[0]
    starts = [m.start() for m in re.finditer(r"\S+", header)]
    names = header.split()
    bounds = [*starts[1:], None]
    return [{name: row[start:end].strip() for name, start, end in zip(names, starts, bounds,
                                                                      strict=True)}
            for row in lines[1:]]


def _node_object(name: str, labels: dict[str, str], row: dict[str, str]) -> dict[str, Any]:
    status = row.get("STATUS", "")
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Node",
                           "metadata": {"name": name, "labels": labels},
                           "spec": {"unschedulable": True} if "SchedulingDisabled" in status
                           else {}, "status": {}}
    if status:
        ready = "True" if status.split(",")[0] == "Ready" else "False"
        obj["status"]["conditions"] = [{"type": "Ready", "status": ready}]
    info = {"kubeletVersion": row.get("VERSION", ""), "osImage": row.get("OS-IMAGE", ""),
            "kernelVersion": row.get("KERNEL-VERSION", ""),
            "containerRuntimeVersion": row.get("CONTAINER-RUNTIME", "")}
    if any(info.values()):
        obj["status"]["nodeInfo"] = info
    if row.get("INTERNAL-IP"):
        obj["status"]["addresses"] = [{"type": "InternalIP", "address": row["INTERNAL-IP"]}]
    return obj


def _nodes(src: Path) -> list[dict[str, Any]]:
    labels = parse_node_labels(_text(src / "gpu_nodes.labels"))
    rows = {r.get("NAME", ""): r for r in parse_wide_table(_text(src / "gpu_nodes.status"))}
    names = sorted(set(labels) | set(rows) - {""})
    return [_node_object(n, labels.get(n, {}), rows.get(n, {})) for n in names]


def _text(path: Path) -> str:
    """A small listing (node labels, the node table) read whole, up to MAX_YAML_BYTES."""
    if not path.is_file():
        return ""
    try:
        return read_whole(path, MAX_YAML_BYTES, "a must-gather listing").decode(errors="replace")
    except TooLarge as exc:
        raise BundleError(str(exc)) from None


def split_prefixed_log(text: str) -> dict[tuple[str, str], str]:
    """``kubectl logs --all-containers --prefix`` output, back into one text per container."""
    out: dict[tuple[str, str], list[str]] = defaultdict(list)
    for line in text.splitlines():
        match = _PREFIX.match(line)
        if match:
            out[(match["pod"], match["container"])].append(match["text"] + "\n")
    return {k: "".join(v) for k, v in out.items()}


def kernel_lines(bug_report: str) -> str:
    """The kernel log lines found in an nvidia-bug-report (dmesg/journal sections)."""
    return "".join(line + "\n" for line in bug_report.splitlines() if _KERNEL_LINE.search(line))


def convert_must_gather(src: Path, out: Path) -> Path:
    """Write the bundle v1 directory ``out`` from must-gather output under ``src``."""
    root = find_must_gather(src)
    if root is None:
        raise BundleError(f"{src}: not a GPU Operator must-gather directory "
                          f"(none of {', '.join(MARKERS)} found)")
    if out.exists() and any(out.iterdir()):
        raise BundleError(f"{out}: output exists and is not empty")
    writer = _Writer(out)
    operands, operator = root / "gpu_operand_pods.yaml", root / "gpu_operator_pod.yaml"
    pods = _unique([*_items(_load_yaml_if(operands)), *_items(_load_yaml_if(operator))])
    writer.put("cluster/pods.json", _as_list(pods), _first(operands, operator))
    daemonsets, policy = root / "gpu_operand_ds.yaml", root / "cluster_policy.yaml"
    writer.put("cluster/daemonsets.json", _as_list(_items(_load_yaml_if(daemonsets))), _first(daemonsets))
    writer.put("cluster/clusterpolicies.json", _as_list(_items(_load_yaml_if(policy))),
               _first(policy, root / "cluster_policy.missing"))
    nodes = _nodes(root)
    if nodes:
        writer.put("cluster/nodes.json", _as_list(nodes),
                   _first(root / "gpu_nodes.labels", root / "gpu_nodes.status"))
    _logs(root, pods, writer)
    _bug_reports(root, writer)
    namespaces = sorted({(p.get("metadata") or {}).get("namespace", "") for p in pods} - {""})
    writer.manifest(root, rebuilt_nodes=bool(nodes), namespaces=namespaces)
    return out


def origins_of(bundle: Path) -> tuple[dict[str, str], str]:
    """What a converted bundle's files came from (manifest ``origin_files``) and the
    must-gather directory they are in, both as the user named them."""
    manifest = json.loads((bundle / "manifest.json").read_bytes())
    origins = manifest.get("origin_files")
    files = {str(k): str(v) for k, v in origins.items()} if isinstance(origins, dict) else {}
    return files, str(manifest.get("must_gather_dir") or "")


def _first(*paths: Path) -> Path | None:
    """The first of ``paths`` that is a file: what a converted file came from."""
    return next((p for p in paths if p.is_file()), None)


def _load_yaml_if(path: Path) -> Any:
    return _load_yaml(path) if path.is_file() else None


class _Writer:
    """Writes the bundle's files, remembering the must-gather file each came from."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.warnings: list[str] = []
        self.origins: dict[str, str] = {}

    def put(self, rel: str, data: bytes, origin: Path | None = None) -> None:
        with self.open(rel, origin) as handle:
            handle.write(data)

    def open(self, rel: str, origin: Path | None = None) -> IO[bytes]:
        target = inside(self.out, rel)  # pod, container and node names come from the files
        target.parent.mkdir(parents=True, exist_ok=True)
        if origin is not None:
            self.origins[rel] = str(origin)
        return target.open("wb")

    def manifest(self, root: Path, *, rebuilt_nodes: bool, namespaces: list[str]) -> None:
        warnings = ["converted from GPU Operator must-gather output: events, pods outside "
                    "the operator namespace and node commands were not collected"]
        if rebuilt_nodes:
            warnings.append("nodes rebuilt from gpu_nodes.labels and gpu_nodes.status: "
                            "labels, Ready, versions and addresses only")
        if (root / "cluster_policy.missing").exists():
            warnings.append("must-gather found no ClusterPolicy")
        manifest = {"format": "gpunode-bundle/v1", "source": "manual",
                    "origin": "gpu-operator-must-gather", "must_gather_dir": str(root),
                    "origin_files": dict(sorted(self.origins.items())),
                    "partial": True, "warnings": warnings + self.warnings,
                    "scoped": [{"path": "cluster/pods.json", "namespaces": namespaces}]}
        self.put("manifest.json", json.dumps(manifest, indent=2).encode() + b"\n")


def _logs(root: Path, pods: list[dict[str, Any]], writer: _Writer) -> None:
    namespace = {p["metadata"]["name"]: p["metadata"].get("namespace", "") for p in pods
                 if isinstance(p.get("metadata"), dict)}
    for path in sorted(root.glob("gpu_operand_pod_*.log")):
        suffix = ".previous.log" if path.name.endswith(".previous.log") else ".log"
        lines, skipped = tail_lines(path, MAX_NODE_LOG_BYTES, MAX_LINE_CHARS)
        if skipped:
            writer.warnings.append(f"{path.name}: only its last {size_text(MAX_NODE_LOG_BYTES)} "
                                   "read (docs/limits.md)")
        with _Split(writer, partial(_log_rel, namespace, suffix), path) as split:
            for line in lines:
                split.add(line.decode(errors="replace"))
    _operator_logs(root, pods, writer)


def _log_rel(namespace: dict[str, str], suffix: str, pod: str, container: str) -> str:
    return f"logs/{namespace.get(pod, 'unknown')}/{pod}/{container}{suffix}"


#: Containers one prefixed log may name; a log naming more is no kubectl output.
_MAX_CONTAINERS = 256


class _Split:
    """``kubectl logs --all-containers --prefix`` lines written to one file per container
    as they are read (a log is never held whole)."""

    def __init__(self, writer: _Writer, rel: Callable[[str, str], str], origin: Path) -> None:
        self.writer = writer
        self.rel = rel
        self.origin = origin
        self.files: dict[tuple[str, str], IO[bytes]] = {}

    def __enter__(self) -> _Split:
        return self

    def __exit__(self, *_exc: object) -> None:
        for handle in self.files.values():
            handle.close()

    def add(self, line: str) -> None:
        match = _PREFIX.match(line.rstrip("\n"))
        if not match:
            return
        key = (match["pod"], match["container"])
        handle = self.files.get(key)
        if handle is None:
            if len(self.files) >= _MAX_CONTAINERS:
                return
            handle = self.files[key] = self.writer.open(self.rel(*key), self.origin)
        handle.write((match["text"] + "\n").encode())


def _operator_logs(root: Path, pods: list[dict[str, Any]], writer: _Writer) -> None:
    operator = _items(_load_yaml_if(root / "gpu_operator_pod.yaml"))
    if not operator:
        return
    meta, spec = operator[0]["metadata"], operator[0].get("spec")
    containers = spec.get("containers") if isinstance(spec, dict) else None
    first = containers[0] if isinstance(containers, list) and containers else None
    name = first.get("name") if isinstance(first, dict) else None
    container = name if isinstance(name, str) and name else "gpu-operator"
    base = f"logs/{meta.get('namespace', '')}/{meta['name']}/{container}"
    for name, suffix in (("gpu_operator_pod.log", ".log"),
                         ("gpu_operator_pod.previous.log", ".previous.log")):
        path = root / name
        if not path.is_file():
            continue
        lines, skipped = tail_lines(path, MAX_NODE_LOG_BYTES, MAX_LINE_CHARS)
        if skipped:
            writer.warnings.append(f"{name}: only its last {size_text(MAX_NODE_LOG_BYTES)} read "
                                   "(docs/limits.md)")
        with writer.open(base + suffix, path) as out:
            for line in lines:
                out.write(line)


def _bug_reports(root: Path, writer: _Writer) -> None:
    for path in sorted(root.glob("nvidia-bug-report_*")):
        match = _BUG_REPORT.match(path.name)
        if not match or not path.is_file():
            continue
        try:
            lines, cut = _kernel_lines_of(path)
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            writer.warnings.append(f"{path.name}: unreadable ({exc})")
            continue
        if cut:
            writer.warnings.append(f"{path.name}: {cut}")
        if lines:
            writer.put(f"nodes/{match['node']}/cmd/dmesg.txt", b"".join(lines), path)


def _open_report(path: Path) -> BinaryIO:
    if path.suffix == ".gz":
        return cast(BinaryIO, gzip.open(path, "rb"))
    return path.open("rb")


def _kernel_lines_of(path: Path) -> tuple[deque[bytes], str]:
    """The kernel log lines of a bug report (gzip or not), read as a stream: at most
    MAX_FILE_BYTES of it (a gzip bomb ends there), each line cut to MAX_LINE_CHARS, the
    last MAX_NODE_FILE_BYTES of lines kept; and the line naming a cut, or ""."""
    kept: deque[bytes] = deque()
    size = 0
    with _open_report(path) as raw:
        for line in capped_lines(raw, MAX_LINE_CHARS):
            if _KERNEL_LINE.search(line.decode(errors="replace")):
                kept.append(line if line.endswith(b"\n") else line + b"\n")
                size += len(kept[-1])
                while size > MAX_NODE_FILE_BYTES:
                    size -= len(kept.popleft())
            if raw.tell() > MAX_FILE_BYTES:
                return kept, (f"read up to {size_text(MAX_FILE_BYTES)} (its limit, "
                              "docs/limits.md); the rest was cut")
    return kept, ""
