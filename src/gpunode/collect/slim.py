"""Slim views of the API objects the collector decides on.

Pages are decoded into these Structs straight from the response bytes; every
field not named here is skipped by msgspec without building Python objects,
which is what keeps a 100,000-pod list cheap. The raw bytes of the same page
go to the bundle untouched.
"""

from __future__ import annotations

import msgspec


class _S(msgspec.Struct, rename="camel"):
    """Base: camelCase API JSON, unknown fields ignored."""


class OwnerRef(_S):
    kind: str = ""
    name: str = ""


class Meta(_S):
    name: str = ""
    namespace: str = ""
    labels: dict[str, str] = {}
    owner_references: tuple[OwnerRef, ...] = ()


class EnvVar(_S):
    name: str = ""
    value: str | None = None


class Port(_S):
    name: str = ""
    container_port: int = 0


class VolumeMount(_S):
    name: str = ""
    mount_path: str = ""
    sub_path: str = ""


class SecurityContext(_S):
    privileged: bool | None = None


class Container(_S):
    name: str = ""
    image: str = ""
    env: tuple[EnvVar, ...] = ()
    ports: tuple[Port, ...] = ()
    volume_mounts: tuple[VolumeMount, ...] = ()
    security_context: SecurityContext | None = None


class HostPath(_S):
    path: str = ""


class ConfigMapRef(_S):
    name: str = ""


class Volume(_S):
    name: str = ""
    host_path: HostPath | None = None
    config_map: ConfigMapRef | None = None


class PodSpec(_S):
    node_name: str = ""
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    volumes: tuple[Volume, ...] = ()


class Waiting(_S):
    reason: str = ""


class Running(_S):
    started_at: str = ""


class Terminated(_S):
    reason: str = ""
    exit_code: int = 0


class State(_S):
    waiting: Waiting | None = None
    running: Running | None = None
    terminated: Terminated | None = None


class ContainerStatus(_S):
    name: str = ""
    ready: bool = False
    restart_count: int = 0
    state: State = msgspec.field(default_factory=State)
    last_state: State = msgspec.field(default_factory=State)


class PodStatus(_S):
    phase: str = ""
    container_statuses: tuple[ContainerStatus, ...] = ()
    init_container_statuses: tuple[ContainerStatus, ...] = ()


class Pod(_S):
    metadata: Meta = msgspec.field(default_factory=Meta)
    spec: PodSpec = msgspec.field(default_factory=PodSpec)
    status: PodStatus = msgspec.field(default_factory=PodStatus)

    def container(self, name: str) -> Container | None:
        return next((c for c in self.spec.containers if c.name == name), None)


class NodeStatus(_S):
    capacity: dict[str, str] = {}
    allocatable: dict[str, str] = {}


class Node(_S):
    metadata: Meta = msgspec.field(default_factory=Meta)
    status: NodeStatus = msgspec.field(default_factory=NodeStatus)


class ListMeta(_S):
    resource_version: str = ""
    continue_: str = msgspec.field(default="", name="continue")


class RawPage(msgspec.Struct):
    """A list response with items kept as raw JSON slices of the body."""

    items: list[msgspec.Raw] = []
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)


class PodPage(msgspec.Struct):
    items: list[Pod] = []


class NodePage(msgspec.Struct):
    items: list[Node] = []


class Selector(_S):
    match_labels: dict[str, str] = {}


class TemplateMeta(_S):
    labels: dict[str, str] = {}


class TemplateSpec(_S):
    containers: tuple[Container, ...] = ()


class Template(_S):
    metadata: TemplateMeta = msgspec.field(default_factory=TemplateMeta)
    spec: TemplateSpec = msgspec.field(default_factory=TemplateSpec)


class WorkloadSpec(_S):
    selector: Selector = msgspec.field(default_factory=Selector)
    template: Template = msgspec.field(default_factory=Template)


class Workload(_S):
    """A DaemonSet or Deployment: where its pods live and how to select them."""

    metadata: Meta = msgspec.field(default_factory=Meta)
    spec: WorkloadSpec = msgspec.field(default_factory=WorkloadSpec)


class WorkloadPage(msgspec.Struct):
    items: list[Workload] = []


class PluginConfig(_S):
    name: str = ""


class DevicePluginSpec(_S):
    config: PluginConfig | None = None


class PolicySpec(_S):
    device_plugin: DevicePluginSpec | None = None


class ClusterPolicy(_S):
    """Only ``spec.devicePlugin.config.name``: the ConfigMap the device plugin reads."""

    spec: PolicySpec = msgspec.field(default_factory=PolicySpec)

    @property
    def plugin_config(self) -> str:
        plugin = self.spec.device_plugin
        return plugin.config.name if plugin and plugin.config else ""


class PolicyPage(msgspec.Struct):
    items: list[ClusterPolicy] = []
