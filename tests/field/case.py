"""Field cases: one YAML per public failure report (tests/field/README.md is the schema).

Decoded strictly with msgspec (unknown keys are errors) and checked for what a
schema cannot say (id == file stem, component ids in the catalog, a failure case
names component, cause, layer and its decisive line). Every problem is one
``CaseError`` line naming the file and the field.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import msgspec
import yaml
from driver_version import driver_problem
from kernel_module import module_problem

from gpunode.catalog import load_catalog

CASES_DIR = Path(__file__).parent / "cases"

Platform = Literal[
    "ubuntu", "rhel", "openshift", "gke", "eks", "aks", "rke2", "k3s", "microk8s", "crio", "docker", "generic"
]
POD_STATES = frozenset(
    {
        "Running",
        "CrashLoopBackOff",
        "Error",
        "Init:CrashLoopBackOff",
        "Init:Error",
        "PodInitializing",
        "ContainerCreating",
        "Pending",
        "ImagePullBackOff",
        "ErrImagePull",
        "OOMKilled",
        "Completed",
        "Terminating",
        "RunContainerError",
        "CreateContainerConfigError",
        "CreateContainerError",
        # the kubelet refused the pod at admission (phase Failed, no container statuses)
        "UnexpectedAdmissionError",
    }
)
INIT_PROGRESS = re.compile(r"Init:(\d+)/(\d+)")
# Init container states kubectl shows as "Init:<reason>".
INIT_REASONS = frozenset(
    {
        "CrashLoopBackOff",
        "Error",
        "ImagePullBackOff",
        "ErrImagePull",
        "RunContainerError",
        "CreateContainerConfigError",
        "CreateContainerError",
        "OOMKilled",
        "ContainerCreating",
    }
)
#: Which part of "see the whole GPU world" (issue 21) a case exercises: every GPU node found,
#: GPU workloads as evidence, dependencies across components and nodes, stack flavours.
Cover = Literal["gpu-nodes", "workloads", "dependencies", "flavours"]
COVERS: tuple[Cover, ...] = ("gpu-nodes", "workloads", "dependencies", "flavours")
#: Node command output under the names the collector and the probe write it
#: (docs/bundle-format.md "nodes/"): the GPU and kernel, the host services' journals, and
#: the links (NVLink state and counters, the GPU/NIC matrix, the RDMA ports).
NodeCmd = Literal[
    "nvidia-smi.txt", "nvidia-smi-q.xml", "dmesg.txt", "lsmod.txt",
    "journal-kubelet.txt", "journal-runtime.txt", "journal-fabricmanager.txt", "journal-imex.txt",
    "nvidia-smi-nvlink-s.txt", "nvidia-smi-nvlink-e.txt", "nvidia-smi-topo-m.txt",
    "sysfs-infiniband.txt", "ibstat.txt", "ibv_devinfo.txt", "imex.txt",
]


class CaseError(Exception):
    """A case file that does not follow the schema (one line)."""


class _Strict(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """Unknown keys are mistakes, not extensions."""


class _Ev(_Strict, frozen=True, tag_field="kind"):
    """Base of every evidence item; ``kind`` selects the type."""


#: Controllers whose events (FailedCreate when a quota or an admission webhook refuses their
#: pods) name them as involvedObject, and the controller that records them.
CONTROLLER_KINDS: dict[str, str] = {
    "ReplicaSet": "replicaset-controller",
    "Deployment": "deployment-controller",
    "Job": "job-controller",
    "StatefulSet": "statefulset-controller",
}


class EventObject(_Strict, frozen=True):
    """The event's involvedObject when it is not the component's pod: the node, a
    workload pod (created on ``node`` if the scenario has no pod of that name), a
    DaemonSet (the component's, or the scenario's DaemonSet of that name), or a workload's
    controller (ReplicaSet, Deployment, Job, StatefulSet: named, need not be in the bundle)."""

    kind: Literal["Node", "Pod", "DaemonSet", "ReplicaSet", "Deployment", "Job", "StatefulSet"]
    name: str | None = None
    namespace: str = "default"


class LogEv(_Ev, frozen=True, tag="log"):
    text: str
    #: the stack component whose pod on the node wrote it; or ``object``: a GPU workload pod
    #: (created running on the node, one nvidia.com/gpu, if the scenario has no pod of that name)
    component: str | None = None
    object: EventObject | None = None
    container: str | None = None
    previous: bool = False
    init: bool = False


class PodStateEv(_Ev, frozen=True, tag="pod-state"):
    component: str
    state: str
    container: str | None = None
    init: bool = False
    restarts: int | None = None
    message: str | None = None
    exit_code: int | None = None
    #: Running with restarts: how the last run ended (OOMKilled|Error), minutes before collection
    last_reason: str | None = None
    last_minutes_ago: int | None = None


class PodMissingEv(_Ev, frozen=True, tag="pod-missing"):
    component: str


class EventEv(_Ev, frozen=True, tag="event"):
    reason: str
    message: str
    component: str | None = None
    object: EventObject | None = None
    type: Literal["Warning", "Normal"] = "Warning"
    count: int | None = None
    #: the event's source.component where a stack component records it (the operators'
    #: driver upgrade controller on a Node); default the kubelet's or the controller's
    source: str | None = None


class Taint(_Strict, frozen=True):
    """One entry of a Node's spec.taints as the API shows it."""

    key: str
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
    value: str | None = None


class NodeTaintsEv(_Ev, frozen=True, tag="node-taints"):
    """Taints the report shows on the node (``kubectl describe node``'s Taints), merged into
    its spec.taints (an entry of the same key and effect is replaced)."""

    taints: tuple[Taint, ...]
    #: components whose DaemonSets tolerate these taints (the report shows their pods on the
    #: node, or their charts' tolerations match): each gets a toleration of each taint it lacks
    #: (key, operator Exists, effect). Default: where the case names DaemonSets the taints
    #: keep off the node (``untolerated_by``), every other DaemonSet; else none
    tolerated_by: tuple[str, ...] | None = None
    #: components whose DaemonSets tolerate none of these taints (the report shows their pods
    #: kept off the node): their tolerations that match one of the taints are dropped. Default:
    #: the case's ``pod-missing`` components the catalog knows by image only (logging-agent,
    #: otel-agent, csi-node), whose charts ship no toleration, unless ``daemonset-tolerations``
    #: gives theirs
    untolerated_by: tuple[str, ...] | None = None


class Toleration(_Strict, frozen=True):
    """One of a pod template's spec.tolerations as the API shows it."""

    key: str | None = None
    operator: Literal["Equal", "Exists"] = "Equal"
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None


class DaemonSetTolerationsEv(_Ev, frozen=True, tag="daemonset-tolerations"):
    """The tolerations of a component's DaemonSet as the report shows them (a chart's
    defaults, a values file): they replace the scenario's, so the DaemonSet controller
    places its pods by them."""

    component: str
    tolerations: tuple[Toleration, ...]


class ResourceClaimRef(_Strict, frozen=True, rename="camel"):
    """One of a pod's spec.resourceClaims: its name and the claim or template it uses."""

    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class Resources(_Strict, frozen=True):
    """A container's resources as the pod spec has them (quantities as strings)."""

    limits: dict[str, str] = {}
    requests: dict[str, str] = {}


#: What ``kubectl get pods`` showed for a GPU workload pod.
WORKLOAD_STATES = frozenset(
    {
        "Running", "Pending", "CrashLoopBackOff", "Error", "OOMKilled", "Completed", "ContainerCreating",
        "ImagePullBackOff", "ErrImagePull", "RunContainerError", "CreateContainerConfigError",
        "CreateContainerError", "UnexpectedAdmissionError",
    }
)


class WorkloadEv(_Ev, frozen=True, tag="workload", rename={
        "scheduler_name": "schedulerName", "runtime_class_name": "runtimeClassName",
        "resource_claims": "resourceClaims", "exit_code": "exit_code"}):
    """A user's GPU workload pod as the API shows it: its spec (resources, scheduler,
    RuntimeClass, ResourceClaims) and its state (like ``pod-state``). It is the pod that
    ``event``/``log`` evidence with ``object: {kind: Pod}`` of the same name addresses."""

    name: str = "gpu-pod"
    namespace: str = "default"
    container: str = "cuda"
    image: str | None = None
    resources: Resources | None = None
    scheduler_name: str | None = None
    runtime_class_name: str | None = None
    resource_claims: tuple[ResourceClaimRef, ...] = ()
    state: str = "Running"
    restarts: int | None = None
    exit_code: int | None = None
    #: the terminated reason (Error, OOMKilled, StartError, ContainerCannotRun) or, Pending,
    #: the PodScheduled condition's reason (default Unschedulable)
    reason: str | None = None
    message: str | None = None
    #: the container's env as the report shows it (NVIDIA_VISIBLE_DEVICES,
    #: NVIDIA_DRIVER_CAPABILITIES, ...): literal values, written as the pod spec's ``env``
    env: dict[str, str] = {}


class NodeCmdEv(_Ev, frozen=True, tag="node-cmd"):
    name: NodeCmd
    text: str


class GpuFabricEv(_Ev, frozen=True, tag="gpu-fabric"):
    """The ``Fabric`` section of ``nvidia-smi -q`` as the report pasted it (State, Status,
    CliqueId, ClusterUUID, Health ...): written into each GPU's ``<fabric>`` element of
    ``nvidia-smi-q.xml``, the form the collector keeps; ``gpus`` names the GPU indexes it
    is about (every GPU when empty)."""

    text: str
    gpus: tuple[int, ...] = ()


class NodeFileEv(_Ev, frozen=True, tag="node-file"):
    path: str
    text: str


class NodeLabelsEv(_Ev, frozen=True, tag="node-labels"):
    labels: dict[str, str | None]


class NodeCapacityEv(_Ev, frozen=True, tag="node-capacity"):
    resources: dict[str, str]


class NodeInfoEv(_Ev, frozen=True, tag="node-info"):
    fields: dict[str, str]


class NodeConditionEv(_Ev, frozen=True, tag="node-condition"):
    type: str
    status: Literal["True", "False", "Unknown"]
    reason: str = ""
    message: str = ""


class MetricsEv(_Ev, frozen=True, tag="metrics"):
    name: str
    text: str


class ClusterObjectEv(_Ev, frozen=True, tag="cluster-object"):
    resource: str
    object: dict[str, Any]


Evidence = (
    LogEv
    | PodStateEv
    | PodMissingEv
    | EventEv
    | WorkloadEv
    | NodeTaintsEv
    | DaemonSetTolerationsEv
    | NodeCmdEv
    | GpuFabricEv
    | NodeFileEv
    | NodeLabelsEv
    | NodeCapacityEv
    | NodeInfoEv
    | NodeConditionEv
    | MetricsEv
    | ClusterObjectEv
)


class Expect(_Strict, frozen=True):
    healthy: bool = False
    component: str | None = None
    cause: str | None = None
    layer: int | None = None


class Cold(_Strict, frozen=True):
    """The case's first score, made before any change for it (tests/field/cold.py)."""

    reported: str  # "component/cause" or "healthy", as the engine of that day reported it
    engine: str  # the commit whose code scored it
    scored: str  # UTC time of scoring, ISO 8601: orders the cases by when they were added


class FaultRef(_Strict, frozen=True):
    type: str
    node: str | None = None


class GpuNodeOverride(_Strict, frozen=True):
    gpu: str | None = None
    gpus: int | None = None
    nics: int | None = None
    os: str | None = None
    kernel: str | None = None
    #: the node's driver release ("535.183.01"), as its report names it (tests/field/driver_version.py)
    driver_version: str | None = None
    #: the CUDA version that driver reports ("12.2"); default from the driver branch's table
    cuda_version: str | None = None
    #: the kernel module flavour the node loaded, as its report says (tests/field/kernel_module.py);
    #: default: what its evidence shows, else proprietary before R560 or on a GPU without a GSP
    kernel_module: Literal["open", "proprietary"] | None = None
    #: the GPUs' compute mode as nvidia-smi shows it (``<compute_mode>``, "Compute M."); default Default
    compute_mode: Literal["Default", "Exclusive_Process", "Exclusive_Thread", "Prohibited"] | None = None
    #: false: no NVIDIA kernel module is loaded on the node (its driver was never installed, or
    #: its install or load failed), as its report says; default: from the evidence, else true
    driver_loaded: bool | None = None
    #: the driver's kernel modules the node has not loaded although its driver is loaded
    #: (lsmod, the kernel log's load lines), as its report says; default none (nvidia_peermem
    #: loads only where the Network Operator runs on a node with RDMA NICs)
    unloaded_modules: tuple[Literal["nvidia_uvm", "nvidia_modeset", "nvidia_drm", "nvidia_peermem"], ...] = ()


class ClusterOverride(_Strict, frozen=True):
    driver_mode: Literal["host", "operator"] | None = None
    runtime: Literal["containerd", "containerd2", "crio"] | None = None
    cdi: bool | None = None
    components: tuple[str, ...] | None = None
    kubernetes_version: str | None = None
    gpu_node: GpuNodeOverride | None = None
    #: false: the stack's pods and DaemonSet templates name no RuntimeClass, as static
    #: manifests, Helm charts without ``runtimeClassName`` and GPU Operator releases before
    #: 1.9 deploy them (their containers get the NVIDIA runtime only where it is the default).
    runtime_class: bool | None = None
    #: static: NVIDIA's device plugin runs as the DaemonSet of k8s-device-plugin's own static
    #: manifest or Helm chart (kube-system, no GPU Operator, no gpu.deploy nodeSelector).
    device_plugin: Literal["static"] | None = None


class Case(_Strict, frozen=True):
    id: str
    source: str
    title: str
    platform: Platform
    expect: Expect
    covers: tuple[Cover, ...] = ()
    scenario: str = "falcon-ai"
    node: str = "gpu-wk-01"
    cluster: ClusterOverride = ClusterOverride()
    faults: tuple[FaultRef, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    decisive: str = ""
    decisive_files: tuple[str, ...] = ()
    notes: str = ""
    cold: Cold | None = None

    def node_file(self, path: str) -> str:
        """The text of the case's node-file evidence at ``path``."""
        return next(ev.text for ev in self.evidence if isinstance(ev, NodeFileEv) and ev.path == path)


_PATH_RE = re.compile(r"`\$((?:\.[A-Za-z_0-9-]+|\[\d+\])*)`")


#: libyaml's safe loader where PyYAML was built with it: the same values as ``yaml.safe_load``
#: (the same resolver and constructors) in a tenth of the CPU (0.15 s against 1.5 s for the
#: 792 cases of 2026-12-06, identical values).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
#: Cases already decoded and checked in this process, by path and the file's bytes: the schema
#: test, the scoreboard, the floors and the corpus-wide tests each read the whole corpus, and a
#: file changed on disk is a new key. Cases are frozen, so every reader can share one.
_LOADED: dict[tuple[str, bytes], Case] = {}


def load_case(path: Path) -> Case:
    """Decode and check one case file; one-line CaseError on any problem."""
    label = f"{CASES_DIR.name}/{path.name}" if path.parent == CASES_DIR else str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CaseError(f"{label}: cannot read: {' '.join(str(exc).split())}") from exc
    key = (str(path), data)
    if key not in _LOADED:
        _LOADED[key] = _decoded(data, path, label)
    return _LOADED[key]


def _decoded(data: bytes, path: Path, label: str) -> Case:
    text = data.decode("utf-8")
    try:
        raw = yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        raise CaseError(f"{label}: cannot read: {' '.join(str(exc).split())}") from exc
    try:
        case = msgspec.convert(raw, Case)
    except msgspec.ValidationError as exc:
        raise CaseError(f"{label}: {_field_message(str(exc))}") from exc
    _check(case, path.stem, label)
    return case


def synthetic_case(case_id: str, evidence: list[dict[str, Any]], *, platform: str = "generic",
                   healthy: bool = True, cluster: dict[str, Any] | None = None) -> Case:
    """A case made of ``evidence`` alone, for a rule's own tests: the fields a corpus case must
    carry (source, title, expectation) are placeholders the diagnosis never reads."""
    raw: dict[str, Any] = {"id": case_id, "source": "https://example.org/x", "title": "t",
                           "platform": platform, "evidence": evidence, "expect": {"healthy": healthy}}
    if cluster is not None:
        raw["cluster"] = cluster
    return msgspec.convert(raw, Case)


def docker_refused_case(case_id: str, message: str) -> Case:
    """A GPU pod on a Docker node whose container the engine refused to start with ``message``
    (its waiting message and its Failed event): the case a rule that reads the daemon's
    refusal is tested on."""
    pod = {"kind": "Pod", "name": "job-0", "namespace": "default"}
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "job-0", "namespace": "default", "container": "main",
         "state": "RunContainerError", "message": message},
        {"kind": "event", "object": pod, "type": "Warning", "reason": "Failed", "message": message}]
    return synthetic_case(case_id, evidence, platform="docker", cluster={"driver_mode": "host"})


def gpu_job_case(case_id: str, log_text: str) -> Case:
    """A crash-looping pod asking one GPU, whose own log is ``log_text``: the case a rule that
    reads a GPU job's log is tested on."""
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "job-0", "namespace": "default", "container": "main",
         "resources": {"limits": {"nvidia.com/gpu": "1"}}, "state": "CrashLoopBackOff",
         "restarts": 2, "exit_code": 1},
        {"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
         "container": "main", "text": log_text + "\n"}]
    return synthetic_case(case_id, evidence)


def running_job_case(case_id: str, log_text: str, cluster: dict[str, Any] | None = None,
                     platform: str = "generic") -> Case:
    """A running GPU job (the builder's default request of one GPU) whose own log is
    ``log_text``: the case a rule that reads a live job's words is tested on."""
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "job-0", "namespace": "default", "container": "job", "state": "Running"},
        {"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
         "container": "job", "text": log_text + "\n"}]
    return synthetic_case(case_id, evidence, platform=platform, cluster=cluster)


def load_cases(folder: Path = CASES_DIR) -> list[tuple[Path, Case | CaseError]]:
    """Every case in ``folder`` (sorted), or the error that stops it."""
    out: list[tuple[Path, Case | CaseError]] = []
    for path in sorted(folder.glob("*.yaml")):
        try:
            out.append((path, load_case(path)))
        except CaseError as exc:
            out.append((path, exc))
    return out


def _field_message(message: str) -> str:
    match = _PATH_RE.search(message)
    if match is None:
        return message
    field = match.group(1).lstrip(".") or "(top level)"
    return f"{field}: {message[: match.start()].rstrip(' -')}"


def _gpu_node_problem(over: GpuNodeOverride | None) -> str | None:
    """Why the case's node overrides cannot be built (the field, then the reason), or None."""
    if over is None:
        return None
    return (driver_problem(over.driver_version, over.cuda_version)
            or module_problem(over.kernel_module, over.driver_version))


def _check(case: Case, stem: str, label: str) -> None:
    if case.id != stem:
        raise CaseError(f"{label}: id: {case.id!r} must equal the file name {stem!r}")
    if not case.source.startswith("https://"):
        raise CaseError(f"{label}: source: must be a public https link")
    if len(set(case.covers)) != len(case.covers):
        raise CaseError(f"{label}: covers: an item is named twice")
    problem = _gpu_node_problem(case.cluster.gpu_node)
    if problem is not None:
        raise CaseError(f"{label}: cluster.gpu_node.{problem}")
    known = set(load_catalog().ids)
    for i, ev in enumerate(case.evidence):
        component = getattr(ev, "component", None)
        if component is not None and component not in known:
            raise CaseError(f"{label}: evidence[{i}].component: unknown component {component!r}")
        if isinstance(ev, PodStateEv) and not _known_state(ev.state):
            raise CaseError(f"{label}: evidence[{i}].state: unknown pod state {ev.state!r}")
        if isinstance(ev, EventEv | LogEv):
            _check_involved(ev, f"{label}: evidence[{i}]")
        if isinstance(ev, WorkloadEv) and ev.state not in WORKLOAD_STATES:
            raise CaseError(f"{label}: evidence[{i}].state: unknown workload state {ev.state!r}")
    _check_expect(case, label, known)


def _check_involved(ev: EventEv | LogEv, where: str) -> None:
    """Whose event or log: a component's pod, or an ``object`` (a DaemonSet event may name
    both: the component's DaemonSet)."""
    if isinstance(ev, EventEv) and ev.object is not None and ev.object.kind == "DaemonSet":
        if ev.component is None and ev.object.name is None:
            raise CaseError(f"{where}.object: a DaemonSet event names the DaemonSet or its component")
        return
    if ev.object is not None and ev.object.kind in CONTROLLER_KINDS:
        if isinstance(ev, LogEv):
            raise CaseError(f"{where}.object: a log is a Pod's")
        if ev.object.name is None or ev.component is not None:
            kind = ev.object.kind
            raise CaseError(f"{where}.object: a {kind} event names the {kind} (no component)")
        return
    if (ev.component is None) == (ev.object is None):
        kind = "an event" if isinstance(ev, EventEv) else "a log"
        raise CaseError(f"{where}: {kind} names either component or object")
    if isinstance(ev, LogEv) and ev.object is not None and ev.object.kind != "Pod":
        raise CaseError(f"{where}.object: a log is a Pod's")


def _known_state(state: str) -> bool:
    match = INIT_PROGRESS.fullmatch(state)
    if state.startswith("Init:") and state[5:] in INIT_REASONS:
        return True
    return state in POD_STATES or (match is not None and int(match[1]) < int(match[2]))


def _check_expect(case: Case, label: str, known: set[str]) -> None:
    exp = case.expect
    if exp.healthy:
        if exp.component or exp.cause or exp.layer is not None:
            raise CaseError(f"{label}: expect: a healthy look-alike has no component, cause or layer")
        return
    if not (exp.component and exp.cause and exp.layer is not None):
        raise CaseError(f"{label}: expect: a failure case needs component, cause and layer")
    if exp.component not in known:
        raise CaseError(f"{label}: expect.component: unknown component {exp.component!r}")
    if not 0 <= exp.layer <= 5:
        raise CaseError(f"{label}: expect.layer: must be 0..5")
    if not case.decisive.strip():
        raise CaseError(f"{label}: decisive: a failure case quotes the line that decides its cause")
    files = {ev.path for ev in case.evidence if isinstance(ev, NodeFileEv)}
    for i, path in enumerate(case.decisive_files):
        if path not in files:
            raise CaseError(f"{label}: decisive_files[{i}]: {path!r} is not a node-file of this case")
