"""Slim views of Kubernetes objects: only the fields gpunode reads.

Decoding into these Structs skips everything else in the JSON, which is what
keeps a 50,000-pod bundle fast and small (see bench/). Field names follow the
API's camelCase through ``rename="camel"``.
"""

from __future__ import annotations

from operator import attrgetter

import msgspec


class _K(msgspec.Struct, rename="camel", frozen=True):
    """Base: decode camelCase API JSON, ignore unknown fields."""


class OwnerRef(_K, frozen=True):
    kind: str = ""
    name: str = ""


class ObjectMeta(_K, frozen=True):
    name: str = ""
    namespace: str = ""
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    owner_references: tuple[OwnerRef, ...] = ()
    creation_timestamp: str | None = None


class PodMeta(_K, frozen=True):
    """Pod metadata without annotations: on 100,000 pods those are most of the bytes."""

    name: str = ""
    namespace: str = ""
    labels: dict[str, str] = {}
    owner_references: tuple[OwnerRef, ...] = ()
    #: set while the pod is being deleted (gpunode.fleet.wedges: stuck Terminating)
    deletion_timestamp: str | None = None
    deletion_grace_period_seconds: int | None = None


class Taint(_K, frozen=True):
    key: str = ""
    value: str = ""
    effect: str = ""


class Condition(_K, frozen=True):
    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""
    last_transition_time: str | None = None


class NodeSpec(_K, frozen=True):
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False


class NodeSystemInfo(_K, frozen=True):
    kernel_version: str = ""
    os_image: str = ""
    container_runtime_version: str = ""
    kubelet_version: str = ""
    architecture: str = ""


class NodeAddress(_K, frozen=True):
    type: str = ""
    address: str = ""


class NodeStatus(_K, frozen=True):
    capacity: dict[str, str] = {}
    allocatable: dict[str, str] = {}
    conditions: tuple[Condition, ...] = ()
    node_info: NodeSystemInfo = NodeSystemInfo()
    addresses: tuple[NodeAddress, ...] = ()


class Node(_K, frozen=True):
    metadata: ObjectMeta = ObjectMeta()
    spec: NodeSpec = NodeSpec()
    status: NodeStatus = NodeStatus()


class Resources(_K, frozen=True):
    limits: dict[str, str] = {}
    requests: dict[str, str] = {}


class EnvVar(_K, frozen=True):
    """One variable of a container's env as the pod spec writes it: ``value`` None where the
    spec gives none (a ``valueFrom`` reference, resolved only when the container starts)."""

    name: str = ""
    value: str | None = None


#: The container env variables gpunode reads (gpunode.podenv): NVIDIA's runtime takes the
#: GPUs and driver capabilities a container gets from them. No other variable is collected.
READ_ENV: tuple[str, ...] = ("NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES")


class Container(_K, frozen=True):
    """Name, image, resources and the env variables of ``READ_ENV``: mounts and every other
    variable are not judged (and are large, or secret)."""

    name: str = ""
    image: str = ""
    resources: Resources = Resources()
    env: tuple[EnvVar, ...] = ()


class Toleration(_K, frozen=True):
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""


class FieldRequirement(_K, frozen=True):
    key: str = ""
    operator: str = ""
    values: tuple[str, ...] = ()


class NodeSelectorTerm(_K, frozen=True):
    match_fields: tuple[FieldRequirement, ...] = ()


class RequiredNodeSelector(_K, frozen=True):
    node_selector_terms: tuple[NodeSelectorTerm, ...] = ()


class NodeAffinity(_K, frozen=True):
    required_during_scheduling_ignored_during_execution: RequiredNodeSelector | None = None


class Affinity(_K, frozen=True):
    """Only the matchFields terms: the DaemonSet controller pins each pod to its node with them."""

    node_affinity: NodeAffinity | None = None


class ConfigMapRef(_K, frozen=True):
    name: str = ""


class Volume(_K, frozen=True):
    """Only ConfigMap volumes: where a device plugin reads its sharing config from."""

    name: str = ""
    config_map: ConfigMapRef | None = None


class PodResourceClaim(_K, frozen=True):
    """A pod's DRA ResourceClaim (by its name in the pod; which claim it is is not read)."""

    name: str = ""


class PodSpec(_K, frozen=True):
    """What checks read of a pod's spec (other scheduling fields live on the template)."""

    node_name: str = ""
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    runtime_class_name: str | None = None
    affinity: Affinity | None = None
    node_selector: dict[str, str] = {}
    volumes: tuple[Volume, ...] = ()
    resource_claims: tuple[PodResourceClaim, ...] = ()
    #: the scheduler that placed it ("" where the source leaves it out)
    scheduler_name: str = ""

    @property
    def config_maps(self) -> tuple[str, ...]:
        """Names of the ConfigMaps mounted as volumes."""
        return tuple(filter(None, map(_NAME, filter(None, map(_CONFIG_MAP, self.volumes)))))  # (in C)

    @property
    def target_node(self) -> str:
        """The node the pod runs on, or, for a pod not yet scheduled, the node it is pinned
        to: a DaemonSet pod's ``matchFields`` affinity (``metadata.name In [node]``), or a
        ``kubernetes.io/hostname`` node selector; "" when none of these."""
        if self.node_name:
            return self.node_name
        if "kubernetes.io/hostname" in self.node_selector:
            return self.node_selector["kubernetes.io/hostname"]
        required = self.affinity.node_affinity if self.affinity else None
        selector = required.required_during_scheduling_ignored_during_execution if required else None
        for term in selector.node_selector_terms if selector else ():
            for req in term.match_fields:
                if req.key == "metadata.name" and req.operator == "In" and len(req.values) == 1:
                    return req.values[0]
        return ""


#: Readers in C for the node pass (a comprehension is a function of its own a node).
_CONFIG_MAP = attrgetter("config_map")
_NAME = attrgetter("name")


class SelectorRequirement(_K, frozen=True):
    """One ``matchExpressions`` requirement of a node selector term (In, NotIn, Exists,
    DoesNotExist, Gt, Lt) on a node label."""

    key: str = ""
    operator: str = ""
    values: tuple[str, ...] = ()


class TemplateSelectorTerm(_K, frozen=True):
    """A node selector term of a pod template's required node affinity: all of its
    requirements must hold (terms are alternatives)."""

    match_expressions: tuple[SelectorRequirement, ...] = ()
    match_fields: tuple[SelectorRequirement, ...] = ()


class TemplateRequired(_K, frozen=True):
    node_selector_terms: tuple[TemplateSelectorTerm, ...] = ()


class TemplateNodeAffinity(_K, frozen=True):
    required_during_scheduling_ignored_during_execution: TemplateRequired | None = None


class TemplateAffinity(_K, frozen=True):
    """Only the required node affinity: where a DaemonSet may place pods (preferences and
    pod (anti-)affinity do not decide whether a node gets one)."""

    node_affinity: TemplateNodeAffinity | None = None

    @property
    def terms(self) -> tuple[TemplateSelectorTerm, ...]:
        required = self.node_affinity.required_during_scheduling_ignored_during_execution \
            if self.node_affinity else None
        return required.node_selector_terms if required else ()


class TemplateSpec(_K, frozen=True):
    """A DaemonSet's pod template spec: where its pods may run."""

    containers: tuple[Container, ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    node_selector: dict[str, str] = {}
    affinity: TemplateAffinity | None = None


class StateWaiting(_K, frozen=True):
    reason: str = ""
    message: str = ""


class StateTerminated(_K, frozen=True):
    reason: str = ""
    message: str = ""
    exit_code: int = 0
    #: when that run began: a first run that died within seconds is a start-up race
    started_at: str | None = None
    finished_at: str | None = None


class StateRunning(_K, frozen=True):
    started_at: str | None = None


class ContainerState(_K, frozen=True):
    waiting: StateWaiting | None = None
    running: StateRunning | None = None
    terminated: StateTerminated | None = None


class ContainerStatus(_K, frozen=True):
    name: str = ""
    ready: bool = False
    restart_count: int = 0
    state: ContainerState = ContainerState()
    last_state: ContainerState = ContainerState()


class PodStatus(_K, frozen=True):
    phase: str = ""
    reason: str = ""
    message: str = ""
    conditions: tuple[Condition, ...] = ()
    container_statuses: tuple[ContainerStatus, ...] = ()
    init_container_statuses: tuple[ContainerStatus, ...] = ()


class Pod(_K, frozen=True):
    metadata: PodMeta = PodMeta()
    spec: PodSpec = PodSpec()
    status: PodStatus = PodStatus()


class LabelSelector(_K, frozen=True):
    match_labels: dict[str, str] = {}


class PodTemplateMeta(_K, frozen=True):
    labels: dict[str, str] = {}


class PodTemplate(_K, frozen=True):
    metadata: PodTemplateMeta = PodTemplateMeta()
    spec: TemplateSpec = TemplateSpec()


class DaemonSetSpec(_K, frozen=True):
    selector: LabelSelector = LabelSelector()
    template: PodTemplate = PodTemplate()


class DaemonSetStatus(_K, frozen=True):
    desired_number_scheduled: int = 0
    current_number_scheduled: int = 0
    number_ready: int = 0
    number_available: int = 0
    number_unavailable: int = 0
    number_misscheduled: int = 0


class DaemonSet(_K, frozen=True):
    metadata: ObjectMeta = ObjectMeta()
    spec: DaemonSetSpec = DaemonSetSpec()
    status: DaemonSetStatus = DaemonSetStatus()


class DeploymentStatus(_K, frozen=True):
    replicas: int = 0
    ready_replicas: int = 0
    available_replicas: int = 0
    #: Available, Progressing, and ReplicaFailure where its ReplicaSet cannot create a pod
    conditions: tuple[Condition, ...] = ()


class DeploymentTemplateSpec(_K, frozen=True):
    """What a Deployment's pod template says of where its pods run and what they run."""

    node_name: str = ""
    node_selector: dict[str, str] = {}
    containers: tuple[Container, ...] = ()


class DeploymentTemplate(_K, frozen=True):
    metadata: PodTemplateMeta = PodTemplateMeta()
    spec: DeploymentTemplateSpec = DeploymentTemplateSpec()


class DeploymentSpec(_K, frozen=True):
    template: DeploymentTemplate = DeploymentTemplate()


class Deployment(_K, frozen=True):
    metadata: ObjectMeta = ObjectMeta()
    spec: DeploymentSpec = DeploymentSpec()
    status: DeploymentStatus = DeploymentStatus()


class InvolvedObject(_K, frozen=True):
    kind: str = ""
    name: str = ""
    namespace: str = ""
    field_path: str = ""


class EventSource(_K, frozen=True):
    component: str = ""
    host: str = ""


class Event(_K, frozen=True):
    metadata: ObjectMeta = ObjectMeta()
    involved_object: InvolvedObject = InvolvedObject()
    reason: str = ""
    message: str = ""
    type: str = ""
    count: int | None = None
    first_timestamp: str | None = None
    last_timestamp: str | None = None
    event_time: str | None = None
    source: EventSource = EventSource()


class OperatorStatus(_K, frozen=True):
    """status of ClusterPolicy / NicClusterPolicy (both use state + conditions)."""

    state: str = ""
    reason: str = ""
    conditions: tuple[Condition, ...] = ()
    applied_states: tuple[dict[str, str], ...] = ()


class CustomResource(_K, frozen=True):
    """A custom resource whose spec we read as raw data (ClusterPolicy, NicClusterPolicy)."""

    metadata: ObjectMeta = ObjectMeta()
    spec: dict[str, object] = {}
    status: OperatorStatus = OperatorStatus()


class RuntimeClass(_K, frozen=True):
    metadata: ObjectMeta = ObjectMeta()
    handler: str = ""


class CSINodeDriver(_K, frozen=True):
    name: str = ""
    node_id: str = ""


class CSINodeSpec(_K, frozen=True):
    drivers: tuple[CSINodeDriver, ...] | None = ()


class CSINode(_K, frozen=True):
    metadata: ObjectMeta = ObjectMeta()
    spec: CSINodeSpec = CSINodeSpec()


class ConfigMap(_K, frozen=True):
    """A GPU-stack ConfigMap (docs/bundle-format.md: only the stack's keep their data)."""

    metadata: ObjectMeta = ObjectMeta()
    data: dict[str, str] = {}


class ObjectName(_K, frozen=True):
    """Only who an object is (its labels and annotations are not read)."""

    name: str = ""
    namespace: str = ""


class SliceDevice(_K, frozen=True):
    name: str = ""


class ResourceSliceSpec(_K, frozen=True):
    """What a DRA driver published for one node: its driver name and devices (the same
    fields in resource.k8s.io v1beta1, v1beta2 and v1)."""

    driver: str = ""
    node_name: str = ""
    devices: tuple[SliceDevice, ...] = ()


class ResourceSlice(_K, frozen=True):
    metadata: ObjectName = ObjectName()
    spec: ResourceSliceSpec = ResourceSliceSpec()


class ComputeDomainNode(_K, frozen=True):
    """One node of a ComputeDomain: its IMEX daemon's readiness (resource.nvidia.com/v1beta1)."""

    name: str = ""
    status: str = ""
    clique_id: str = msgspec.field(default="", name="cliqueID")


class ComputeDomainStatus(_K, frozen=True):
    status: str = ""
    nodes: tuple[ComputeDomainNode, ...] | None = ()


class ComputeDomain(_K, frozen=True):
    metadata: ObjectName = ObjectName()
    status: ComputeDomainStatus = ComputeDomainStatus()


class SriovNodeStateStatus(_K, frozen=True):
    """The SR-IOV Network Operator's verdict on its node's VF configuration: ``syncStatus``
    (Succeeded, InProgress, Failed) and ``lastSyncError``, the error of its last failed sync."""

    sync_status: str = ""
    last_sync_error: str = ""


class SriovNetworkNodeState(_K, frozen=True):
    """One SR-IOV node's state (sriovnetwork.openshift.io/v1), named after its node, in the
    operator's namespace; of it only the sync verdict is read."""

    metadata: ObjectName = ObjectName()
    status: SriovNodeStateStatus = SriovNodeStateStatus()


class GenericObject(_K, frozen=True):
    """Objects we only need by name/labels (CSIDriver, StorageClass, Service…)."""

    metadata: ObjectMeta = ObjectMeta()
    spec: dict[str, object] = {}
    status: dict[str, object] = {}
    provisioner: str = ""


class ListMeta(_K, frozen=True):
    resource_version: str = ""


def list_type(item: type[msgspec.Struct]) -> type[msgspec.Struct]:
    """A v1/List Struct holding items of ``item`` (kind checked by the loader)."""
    return msgspec.defstruct(
        f"{item.__name__}List",
        [("kind", str, ""), ("api_version", str, ""), ("items", tuple[item, ...], ())],  # type: ignore[valid-type]
        rename="camel",
        frozen=True,
    )


# --- What is read of open mappings (the collection's projection, bundle/projection.py) ----
#
# ``collect`` writes of each object only the fields of its Struct above; a field that is an
# open mapping is narrowed here. A check that reads another annotation, or another path of
# a custom resource's spec, declares it here, or live runs will not see it
# (tests/live/test_projection.py projects every scenario's bundle and compares the reports).

#: Annotations gpunode reads (StorageClass default, Service scrape); no other is collected.
READ_ANNOTATIONS: tuple[str, ...] = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
    "prometheus.io/scrape",
)
#: (Struct, field) → the keys of that mapping that are read; the others are not collected.
READ_KEYS: dict[tuple[type[msgspec.Struct], str], tuple[str, ...]] = {
    (ObjectMeta, "annotations"): READ_ANNOTATIONS,
}
#: (Struct, field) → (key, values): of that list only the items whose ``key`` is one of
#: ``values`` are read; the others are not collected (a container's env: its two NVIDIA
#: variables, never another variable's name or value).
READ_ITEMS: dict[tuple[type[msgspec.Struct], str], tuple[str, tuple[str, ...]]] = {
    (Container, "env"): ("name", READ_ENV),
}
#: List file stem → top-level field → dotted paths read inside it (``*``: any key; a path
#: ending in ``{}`` keeps that object without its keys, for a presence test).
READ_PATHS: dict[str, dict[str, tuple[str, ...]]] = {
    "clusterpolicies": {"spec": (
        "*.enabled",  # operands switched off (operand_enabled, skip_reason, cdi, sandboxWorkloads)
        "cdi.default",
        "devicePlugin.config.name",
        "devicePlugin.config.default",
        "driver.rdma.enabled",
    )},
    "nicclusterpolicies": {"spec": (
        "ofedDriver.{}",
        "rdmaSharedDevicePlugin.config",
        "sriovDevicePlugin.config",
    )},
    "persistentvolumeclaims": {"spec": ("storageClassName",), "status": ("phase",)},
    "servicemonitors": {"spec": ("selector.matchLabels", "namespaceSelector.any",
                                 "namespaceSelector.matchNames")},
}
