"""Slim views of Kubernetes objects: only the fields gpunode reads.

Decoding into these Structs skips everything else in the JSON, which is what
keeps a 50,000-pod bundle fast and small (see bench/). Field names follow the
API's camelCase through ``rename="camel"``.
"""

from __future__ import annotations

import msgspec


class _K(msgspec.Struct, rename="camel"):
    """Base: decode camelCase API JSON, ignore unknown fields."""


class OwnerRef(_K):
    kind: str = ""
    name: str = ""


class ObjectMeta(_K):
    name: str = ""
    namespace: str = ""
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    owner_references: tuple[OwnerRef, ...] = ()
    creation_timestamp: str | None = None


class Taint(_K):
    key: str = ""
    value: str = ""
    effect: str = ""


class Condition(_K):
    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""
    last_transition_time: str | None = None


class NodeSpec(_K):
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False


class NodeSystemInfo(_K):
    kernel_version: str = ""
    os_image: str = ""
    container_runtime_version: str = ""
    kubelet_version: str = ""
    architecture: str = ""


class NodeAddress(_K):
    type: str = ""
    address: str = ""


class NodeStatus(_K):
    capacity: dict[str, str] = {}
    allocatable: dict[str, str] = {}
    conditions: tuple[Condition, ...] = ()
    node_info: NodeSystemInfo = NodeSystemInfo()
    addresses: tuple[NodeAddress, ...] = ()


class Node(_K):
    metadata: ObjectMeta = ObjectMeta()
    spec: NodeSpec = NodeSpec()
    status: NodeStatus = NodeStatus()


class EnvVar(_K):
    name: str = ""
    value: str | None = None


class Resources(_K):
    limits: dict[str, str] = {}
    requests: dict[str, str] = {}


class Container(_K):
    name: str = ""
    image: str = ""
    env: tuple[EnvVar, ...] = ()
    resources: Resources = Resources()


class Toleration(_K):
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""


class PodSpec(_K):
    node_name: str = ""
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    runtime_class_name: str | None = None
    tolerations: tuple[Toleration, ...] = ()
    node_selector: dict[str, str] = {}


class StateWaiting(_K):
    reason: str = ""
    message: str = ""


class StateTerminated(_K):
    reason: str = ""
    message: str = ""
    exit_code: int = 0
    finished_at: str | None = None


class StateRunning(_K):
    started_at: str | None = None


class ContainerState(_K):
    waiting: StateWaiting | None = None
    running: StateRunning | None = None
    terminated: StateTerminated | None = None


class ContainerStatus(_K):
    name: str = ""
    ready: bool = False
    restart_count: int = 0
    image: str = ""
    state: ContainerState = ContainerState()
    last_state: ContainerState = ContainerState()
    started: bool | None = None


class PodStatus(_K):
    phase: str = ""
    reason: str = ""
    message: str = ""
    conditions: tuple[Condition, ...] = ()
    container_statuses: tuple[ContainerStatus, ...] = ()
    init_container_statuses: tuple[ContainerStatus, ...] = ()


class Pod(_K):
    metadata: ObjectMeta = ObjectMeta()
    spec: PodSpec = PodSpec()
    status: PodStatus = PodStatus()


class LabelSelector(_K):
    match_labels: dict[str, str] = {}


class PodTemplateMeta(_K):
    labels: dict[str, str] = {}


class PodTemplate(_K):
    metadata: PodTemplateMeta = PodTemplateMeta()
    spec: PodSpec = PodSpec()


class DaemonSetSpec(_K):
    selector: LabelSelector = LabelSelector()
    template: PodTemplate = PodTemplate()


class DaemonSetStatus(_K):
    desired_number_scheduled: int = 0
    current_number_scheduled: int = 0
    number_ready: int = 0
    number_available: int = 0
    number_unavailable: int = 0
    number_misscheduled: int = 0


class DaemonSet(_K):
    metadata: ObjectMeta = ObjectMeta()
    spec: DaemonSetSpec = DaemonSetSpec()
    status: DaemonSetStatus = DaemonSetStatus()


class DeploymentStatus(_K):
    replicas: int = 0
    ready_replicas: int = 0
    available_replicas: int = 0


class Deployment(_K):
    metadata: ObjectMeta = ObjectMeta()
    status: DeploymentStatus = DeploymentStatus()


class InvolvedObject(_K):
    kind: str = ""
    name: str = ""
    namespace: str = ""
    field_path: str = ""


class EventSource(_K):
    component: str = ""
    host: str = ""


class Event(_K):
    metadata: ObjectMeta = ObjectMeta()
    involved_object: InvolvedObject = InvolvedObject()
    reason: str = ""
    message: str = ""
    type: str = ""
    count: int | None = None
    last_timestamp: str | None = None
    event_time: str | None = None
    source: EventSource = EventSource()


class OperatorStatus(_K):
    """status of ClusterPolicy / NicClusterPolicy (both use state + conditions)."""

    state: str = ""
    reason: str = ""
    conditions: tuple[Condition, ...] = ()
    applied_states: tuple[dict[str, str], ...] = ()


class CustomResource(_K):
    """A custom resource whose spec we read as raw data (ClusterPolicy, NicClusterPolicy)."""

    metadata: ObjectMeta = ObjectMeta()
    spec: dict[str, object] = {}
    status: OperatorStatus = OperatorStatus()


class RuntimeClass(_K):
    metadata: ObjectMeta = ObjectMeta()
    handler: str = ""


class CSINodeDriver(_K):
    name: str = ""
    node_id: str = ""


class CSINodeSpec(_K):
    drivers: tuple[CSINodeDriver, ...] | None = ()


class CSINode(_K):
    metadata: ObjectMeta = ObjectMeta()
    spec: CSINodeSpec = CSINodeSpec()


class GenericObject(_K):
    """Objects we only need by name/labels (CSIDriver, StorageClass, Service…)."""

    metadata: ObjectMeta = ObjectMeta()
    spec: dict[str, object] = {}
    status: dict[str, object] = {}
    provisioner: str = ""


class ListMeta(_K):
    resource_version: str = ""


def list_type(item: type[msgspec.Struct]) -> type[msgspec.Struct]:
    """A v1/List Struct holding items of ``item`` (kind checked by the loader)."""
    return msgspec.defstruct(
        f"{item.__name__}List",
        [("kind", str, ""), ("api_version", str, ""), ("items", tuple[item, ...], ())],  # type: ignore[valid-type]
        rename="camel",
    )
