"""Workloads for the test API server: namespaces, pods and PVCs that are created,
move through their lifecycle with scenario-defined output, and are deleted.

The test API server (``gpunode.apiserver``) answers from a bundle and is
read-only. ``serve_with_workloads`` runs it with an overlay that takes the
requests active checks make (create/get/list/delete of namespaces, pods and
claims in gpunode's namespaces, pod logs) and leaves every other request to the
server. What the pods print comes from the bundle: ``nvidia-smi -L`` lists the
node's GPUs from its ``nvidia-smi -q -x`` output; a ``WorkloadScript`` changes
that (fewer GPUs, unschedulable nodes, pods that never finish, unbindable claims).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any

import msgspec

from gpunode.apiserver import RunningServer, write_kubeconfig
from gpunode.apiserver.faults import Faults
from gpunode.apiserver.handler import ApiHandler, HttpError, ResourcePath
from gpunode.apiserver.httpserver import ApiHTTPServer
from gpunode.apiserver.selectors import matches_all, parse_label_selector
from gpunode.apiserver.status import forbidden, not_found, status_bytes
from gpunode.apiserver.store import BundleStore
from gpunode.apiserver.tls import make_tls_files
from gpunode.errors import ParseError
from gpunode.parse.nvidia_smi import parse_nvidia_smi_xml

Json = dict[str, Any]
KINDS = {
    "namespaces": "Namespace",
    "pods": "Pod",
    "persistentvolumeclaims": "PersistentVolumeClaim",
    "secrets": "Secret",
}
MANAGED = ("app.kubernetes.io/managed-by", "gpunode")
DEFAULT_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
ENERGY = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"


@dataclass(frozen=True)
class WorkloadScript:
    """Scenario-defined behaviour of the test pods (defaults: a healthy cluster)."""

    pending_s: float = 0.05
    run_s: float = 0.05
    gpus_listed: Mapping[str, int] = field(default_factory=dict)
    unschedulable: Mapping[str, str] = field(default_factory=dict)
    hang: frozenset[str] = frozenset()
    claims_bind: bool | None = None
    nccl_busbw_gbps: float = 362.4
    #: the NCCL launcher never finishes (an all-reduce stuck on a dead link)
    nccl_hang: bool = False
    energy_step: int = 1500


@dataclass
class _Fate:
    """Decided once at creation: where the pod runs and what it ends with."""

    node: str
    unschedulable: str = ""
    log: str = ""
    exit_code: int = 0
    hang: bool = False


class WorkloadOverlay:
    """The mutable part of the fake cluster: gpunode's test objects."""

    def __init__(self, bundle_dir: Path, script: WorkloadScript | None = None) -> None:
        self.root = bundle_dir
        self.script = script or WorkloadScript()
        self.lock = threading.Lock()
        self.objects: dict[tuple[str, str, str], Json] = {}
        self.born: dict[tuple[str, str, str], float] = {}
        self.fates: dict[tuple[str, str], _Fate] = {}
        self.scrapes = 0
        self.resource_version = 900000

    # -- what the overlay answers ---------------------------------------------------------
    def claims(self, method: str, req: ResourcePath) -> bool:
        if req.sub == "proxy":
            return req.plural == "pods" and "dcgm-exporter" in req.name
        if req.plural not in KINDS or req.group:
            return False
        if method != "GET":
            return True
        if req.plural == "namespaces":
            return not req.name or ("namespaces", "", req.name) in self.objects
        return self._is_ours(req.namespace)

    def _is_ours(self, namespace: str) -> bool:
        return ("namespaces", "", namespace) in self.objects

    def answer(
        self, method: str, req: ResourcePath, query: dict[str, list[str]], body: bytes
    ) -> tuple[int, bytes, str]:
        with self.lock:
            if req.sub == "proxy":
                return 200, self._metrics(req), "text/plain; version=0.0.4"
            if method == "POST":
                return 201, _encode(self._create(req, json.loads(body or b"{}"))), "application/json"
            if method == "DELETE":
                return 200, _encode(self._delete(req)), "application/json"
            if method != "GET":
                raise HttpError(405, status_bytes(405, f"{method} is not supported for {req.plural}"))
            if req.sub == "log":
                return 200, self._log(req).encode(), "text/plain"
            if req.name:
                return 200, _encode(self._get(req)), "application/json"
            return 200, _encode(self._list(req, query.get("labelSelector", [""])[-1])), "application/json"

    # -- create / get / list / delete ---------------------------------------------------------
    def _create(self, req: ResourcePath, obj: Json) -> Json:
        meta = obj.setdefault("metadata", {})
        namespace = req.namespace if req.plural != "namespaces" else ""
        key = (req.plural, namespace, meta.get("name", ""))
        if namespace and not self._is_ours(namespace):
            raise HttpError(404, not_found("namespaces", namespace))
        if key in self.objects:
            raise HttpError(
                409, status_bytes(409, f'{req.plural} "{key[2]}" already exists', reason="AlreadyExists")
            )
        self.resource_version += 1
        meta.update(
            uid=str(uuid.uuid4()),
            resourceVersion=str(self.resource_version),
            creationTimestamp=_now(),
            **({"namespace": namespace} if namespace else {}),
        )
        obj["apiVersion"], obj["kind"] = "v1", KINDS[req.plural]
        if req.plural != "secrets":
            obj["status"] = {"phase": "Active"} if req.plural == "namespaces" else {"phase": "Pending"}
        self.objects[key], self.born[key] = obj, time.monotonic()
        if req.plural == "pods":
            self.fates[(namespace, key[2])] = self._decide(obj)
        return obj

    def _get(self, req: ResourcePath) -> Json:
        namespace = req.namespace if req.plural != "namespaces" else ""
        key = (req.plural, namespace, req.name)
        if key not in self.objects:
            raise HttpError(404, not_found(req.plural, req.name))
        return self._current(key)

    def _list(self, req: ResourcePath, selector: str) -> Json:
        wanted = parse_label_selector(selector)
        items = [
            self._current(k)
            for k in sorted(self.objects)
            if k[0] == req.plural and (req.plural == "namespaces" or k[1] == req.namespace)
        ]
        if req.plural == "namespaces":
            items += self._bundle_namespaces()
        chosen = [i for i in items if matches_all(wanted, i.get("metadata", {}).get("labels", {}))]
        kind = KINDS[req.plural] + "List"
        return {
            "kind": kind,
            "apiVersion": "v1",
            "metadata": {"resourceVersion": str(self.resource_version)},
            "items": chosen,
        }

    def _bundle_namespaces(self) -> list[Json]:
        names = {p.name for p in (self.root / "logs").iterdir()} if (self.root / "logs").is_dir() else set()
        names |= {p.get("metadata", {}).get("namespace", "") for p in self._bundle_list("pods")}
        return [
            {"metadata": {"name": n, "labels": {"kubernetes.io/metadata.name": n}}}
            for n in sorted(names - {""})
        ]

    def _delete(self, req: ResourcePath) -> Json:
        namespace = req.namespace if req.plural != "namespaces" else ""
        key = (req.plural, namespace, req.name)
        obj = self.objects.pop(key, None)
        if obj is None:
            raise HttpError(404, not_found(req.plural, req.name))
        if req.plural == "namespaces":
            for inner in [k for k in self.objects if k[1] == req.name]:
                del self.objects[inner]
            obj["status"] = {"phase": "Terminating"}
        return obj

    # -- the lifecycle ---------------------------------------------------------------------
    def _current(self, key: tuple[str, str, str]) -> Json:
        obj = self.objects[key]
        age = time.monotonic() - self.born[key]
        if key[0] == "pods":
            obj["status"], node = self._pod_status(self.fates[(key[1], key[2])], obj, age)
            if node:
                obj["spec"]["nodeName"] = node
        elif key[0] == "persistentvolumeclaims" and self._claim_binds() and age >= self.script.pending_s:
            obj["status"] = {"phase": "Bound", "accessModes": obj["spec"].get("accessModes", [])}
        return obj

    def _pod_status(self, fate: _Fate, pod: Json, age: float) -> tuple[Json, str]:
        started = _now()
        containers = pod["spec"].get("containers", [])
        if fate.unschedulable:
            cond = {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": fate.unschedulable,
            }
            return {"phase": "Pending", "conditions": [cond]}, ""
        host = self._host_ip(fate.node)
        if age < self.script.pending_s:
            waiting = {"waiting": {"reason": "ContainerCreating"}}
            return {
                "phase": "Pending",
                "hostIP": host,
                "containerStatuses": _statuses(containers, waiting, False),
            }, fate.node
        if fate.hang or age < self.script.pending_s + self.script.run_s:
            running = {"running": {"startedAt": started}}
            return {
                "phase": "Running",
                "hostIP": host,
                "podIP": host,
                "containerStatuses": _statuses(containers, running, True),
            }, fate.node
        reason = "Completed" if fate.exit_code == 0 else "Error"
        done = {"terminated": {"exitCode": fate.exit_code, "reason": reason, "finishedAt": started}}
        phase = "Succeeded" if fate.exit_code == 0 else "Failed"
        return {
            "phase": phase,
            "hostIP": host,
            "podIP": host,
            "containerStatuses": _statuses(containers, done, False),
        }, fate.node

    def _decide(self, pod: Json) -> _Fate:
        node = self._node_for(pod)
        fate = _Fate(node, hang=node in self.script.hang)
        fate.unschedulable = self._unschedulable(pod, node)
        container = (pod["spec"].get("containers") or [{}])[0]
        command = " ".join([*container.get("command", []), *container.get("args", [])])
        if "nvidia-smi -L" in command:
            fate.log = self._smi_list(node, _gpus_requested(container))
        elif "sshd" in command:  # an NCCL worker: serves until deleted
            fate.hang = True
        elif "mpirun" in command:
            fate.log = self._nccl_log(pod)
            fate.hang = fate.hang or self.script.nccl_hang
        else:
            fate.log = next(
                (e.get("value", "") for e in container.get("env", []) if e.get("name") == "GPUNODE_TOKEN"), ""
            )
            fate.log += "\n" if fate.log else ""
        return fate

    def _unschedulable(self, pod: Json, node: str) -> str:
        total = len(self.nodes)
        if node in self.script.unschedulable:
            return self.script.unschedulable[node]
        if node not in self.nodes:
            return (
                f"0/{total} nodes are available: {total} node(s) didn't match Pod's node affinity/selector."
            )
        spec = self.nodes[node]
        if spec.get("spec", {}).get("unschedulable"):
            return f"0/{total} nodes are available: 1 node(s) were unschedulable."
        want = _gpus_requested((pod["spec"].get("containers") or [{}])[0])
        have = int(spec.get("status", {}).get("allocatable", {}).get("nvidia.com/gpu", "0") or 0)
        if want > have:
            return (
                f"0/{total} nodes are available: 1 Insufficient nvidia.com/gpu, {total - 1} node(s) "
                f"didn't match Pod's node affinity/selector. preemption: 0/{total} nodes are available: "
                f"1 No preemption victims found for incoming pod, {total - 1} Preemption is not "
                "helpful for scheduling."
            )
        if _claims_of(pod) and not self._claim_binds():
            return (
                f"0/{total} nodes are available: pod has unbound immediate PersistentVolumeClaims. "
                f"preemption: 0/{total} nodes are available: {total} Preemption is not helpful "
                "for scheduling."
            )
        return ""

    def _claim_binds(self) -> bool:
        if self.script.claims_bind is not None:
            return self.script.claims_bind
        return any(
            sc.get("metadata", {}).get("annotations", {}).get(DEFAULT_ANNOTATION) == "true"
            for sc in self._bundle_list("storageclasses")
        )

    # -- what the pods print -------------------------------------------------------------------
    def _smi_list(self, node: str, requested: int) -> str:
        gpus = self._gpus_of(node)
        count = min(self.script.gpus_listed.get(node, len(gpus)), requested, len(gpus))
        return "".join(f"GPU {i}: {name} (UUID: {uid})\n" for i, (name, uid) in enumerate(gpus[:count]))

    def _gpus_of(self, node: str) -> list[tuple[str, str]]:
        path = self.root / "nodes" / node / "cmd" / "nvidia-smi-q.xml"
        try:
            report = parse_nvidia_smi_xml(path.read_text())
        except (OSError, ParseError):
            return []
        return [(g.product_name, g.uuid) for g in report.gpus]

    def _nccl_log(self, pod: Json) -> str:
        """nccl-tests' all_reduce_perf as the launcher prints it (tests/fixtures/real/
        interconnect/a3mega-nccl-tests-all-reduce-perf-2x8-h100.txt), its sizes from 64 MiB
        to 1 GiB, the bus bandwidth rising to the script's figure at 1 GiB."""
        gpus = _gpus_requested(pod["spec"]["containers"][0])
        ranks = 2 * gpus
        peak = self.script.nccl_busbw_gbps
        lines = [
            "# nThread 1 nGpus 1 minBytes 67108864 maxBytes 1073741824 step: 2(factor) warmup iters: 5 "
            "iters: 20 agg iters: 1 validation: 1 graph: 0",
            "#",
            "#" + " " * 62 + "out-of-place" + " " * 23 + "in-place",
            "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
            "algbw   busbw #wrong",
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  "
            "(GB/s)  (GB/s)       ",
        ]
        sizes = [1 << 26, 1 << 27, 1 << 28, 1 << 29, 1 << 30]
        for share, size in zip((0.45, 0.6, 0.75, 0.9, 1.0), sizes, strict=True):
            busbw = peak * share
            algbw = busbw * ranks / (2 * (ranks - 1))
            time_us = size / (algbw * 1e3) if algbw else 0.0
            half = f"{time_us:7.1f}  {algbw:6.2f}  {busbw:6.2f}      0"
            lines.append(f"{size:12d}  {size // 4:12d}     float     sum      -1  {half}  {half}")
        lines += ["# Out of bounds values : 0 OK", f"# Avg bus bandwidth    : {peak * 0.74:.3f} ", ""]
        return "\n".join(lines)

    def _log(self, req: ResourcePath) -> str:
        key = ("pods", req.namespace, req.name)
        if key not in self.objects:
            raise HttpError(404, not_found("pods", req.name))
        pod = self._current(key)
        if pod["status"]["phase"] == "Pending":
            name = pod["spec"]["containers"][0]["name"]
            raise HttpError(
                400,
                status_bytes(
                    400, f'container "{name}" in pod "{req.name}" is waiting to start: ContainerCreating'
                ),
            )
        fate = self.fates[(req.namespace, req.name)]
        return fate.log if pod["status"]["phase"] != "Running" else ""

    def _metrics(self, req: ResourcePath) -> bytes:
        """The node's DCGM scrape with its energy counters advanced: the exporter is alive."""
        pod_name = req.name.split(":")[0]
        node = next(
            (
                p["spec"].get("nodeName", "")
                for p in self._bundle_list("pods")
                if p["metadata"]["name"] == pod_name
            ),
            "",
        )
        path = self.root / "nodes" / node / "metrics" / "dcgm-exporter.prom"
        if not node or not path.is_file():
            raise HttpError(503, status_bytes(503, f"no endpoints available for pod {pod_name}"))
        self.scrapes += 1
        return _advance(path.read_text(), ENERGY, self.scrapes * self.script.energy_step).encode()

    # -- bundle facts -----------------------------------------------------------------------
    @cached_property
    def nodes(self) -> dict[str, Json]:
        return {n["metadata"]["name"]: n for n in self._bundle_list("nodes")}

    def _bundle_list(self, resource: str) -> list[Json]:
        path = self.root / "cluster" / f"{resource}.json"
        if not path.is_file():
            return []
        items: list[Json] = msgspec.json.decode(path.read_bytes()).get("items", [])
        return items

    def _node_for(self, pod: Json) -> str:
        hostname = pod["spec"].get("nodeSelector", {}).get("kubernetes.io/hostname", "")
        for name, node in self.nodes.items():
            if node["metadata"].get("labels", {}).get("kubernetes.io/hostname", name) == hostname:
                return name
        return str(pod["spec"].get("nodeName", hostname))

    def _host_ip(self, node: str) -> str:
        addresses = self.nodes.get(node, {}).get("status", {}).get("addresses", [])
        return next((a["address"] for a in addresses if a.get("type") == "InternalIP"), "10.0.0.1")

    # -- for tests ----------------------------------------------------------------------------
    def our_objects(self) -> list[tuple[str, str, str]]:
        with self.lock:
            return sorted(self.objects)


def _statuses(containers: list[Json], state: Json, ready: bool) -> list[Json]:
    """containerStatuses as the kubelet reports them (imageID only once the image is pulled)."""
    waiting = "waiting" in state
    return [
        {
            "name": c["name"],
            "image": c.get("image", ""),
            "imageID": ""
            if waiting
            else f"{c.get('image', '').split(':')[0]}@sha256:{_digest(c.get('image', ''))}",
            "lastState": {},
            "ready": ready,
            "restartCount": 0,
            "started": "running" in state,
            "state": state,
        }
        for c in containers
    ]


def _digest(image: str) -> str:
    return uuid.uuid5(uuid.NAMESPACE_URL, image).hex * 2


def _gpus_requested(container: Json) -> int:
    limits = container.get("resources", {}).get("limits", {})
    try:
        return int(limits.get("nvidia.com/gpu", 0))
    except ValueError:
        return 0


def _claims_of(pod: Json) -> list[str]:
    return [
        v["persistentVolumeClaim"]["claimName"]
        for v in pod["spec"].get("volumes", [])
        if "persistentVolumeClaim" in v
    ]


def _advance(text: str, metric: str, step: int) -> str:
    """Add ``step`` to every sample of ``metric`` (a counter moving between scrapes)."""
    out = []
    for line in text.splitlines():
        if line.startswith((metric + "{", metric + " ")):
            head, _, value = line.rpartition(" ")
            out.append(f"{head} {int(float(value)) + step}")
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def _encode(obj: Json) -> bytes:
    return msgspec.json.encode(obj)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class WorkloadHandler(ApiHandler):
    """The bundle server's handler with the overlay consulted first for resource requests."""

    server: WorkloadHTTPServer

    def _resource(self, method: str, req: ResourcePath, query: dict[str, list[str]]) -> None:
        overlay = self.server.overlay
        if not overlay.claims(method, req):
            super()._resource(method, req, query)
            return
        body = self.request_body  # read by the base handler before any answer (keep-alive)
        verb = {"POST": "create", "DELETE": "delete"}.get(method, "get" if req.name else "list")
        self.server.counters.record(verb, req.resource, req.namespace, req.name)
        if self.server.faults.is_forbidden(verb, req.resource):
            denial = forbidden(
                self.server.user, verb, req.resource, group="", namespace=req.namespace, name=req.name
            )
            raise HttpError(403, denial)
        code, payload, content_type = overlay.answer(method, req, query, body)
        self._send(code, payload, content_type=content_type)


class WorkloadHTTPServer(ApiHTTPServer):
    """ApiHTTPServer whose connections are handled by ``WorkloadHandler``."""

    def __init__(
        self, address: tuple[str, int], store: BundleStore, overlay: WorkloadOverlay, **kwargs: Any
    ) -> None:
        super().__init__(address, WorkloadHandler, store, **kwargs)
        self.overlay = overlay


@dataclass
class WorkloadServer:
    """A running test API server with workloads; ``overlay`` shows what exists now."""

    running: RunningServer
    overlay: WorkloadOverlay

    def __enter__(self) -> WorkloadServer:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.running.stop()


def serve_with_workloads(
    bundle_dir: Path, script: WorkloadScript | None = None, *, faults: Faults | None = None
) -> WorkloadServer:
    """Serve ``bundle_dir`` (a directory) on loopback HTTPS with the workload overlay, in a thread."""
    import secrets

    workdir = Path(tempfile.mkdtemp(prefix="gpunode-workloads-"))
    store = BundleStore(bundle_dir)
    tls = make_tls_files(workdir, "127.0.0.1")
    token = secrets.token_urlsafe(24)
    overlay = WorkloadOverlay(bundle_dir, script)
    httpd = WorkloadHTTPServer(
        ("127.0.0.1", 0), store, overlay, faults=faults or Faults(), token=token, tls=tls
    )
    url = f"https://127.0.0.1:{httpd.server_address[1]}"
    kubeconfig = write_kubeconfig(workdir / "kubeconfig", url, tls.ca_cert.read_bytes(), token)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()

    def stop() -> None:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
        shutil.rmtree(workdir, ignore_errors=True)

    return WorkloadServer(RunningServer(url, kubeconfig, tls.ca_cert, token, stop), overlay)


__all__ = ["WorkloadOverlay", "WorkloadScript", "WorkloadServer", "serve_with_workloads"]
