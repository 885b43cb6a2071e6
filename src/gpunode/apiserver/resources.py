"""Which REST resources the test API server knows, and how they are addressed.

Bundle files are named after the plural (``cluster/pods.json``); the API
needs group, version, kind and scope for paths, discovery and list kinds.
Files not in the table are still served, described from their items.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ResourceType:
    """One REST resource: ``/api[s]/<group>/<version>/[namespaces/<ns>/]<plural>``."""

    plural: str
    group: str
    version: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def builtin(self) -> bool:
        """Typed (compiled-in) kinds drop apiVersion/kind on list items; CRDs keep them."""
        return "." not in self.group or self.group.endswith(".k8s.io")


_R = ResourceType
KNOWN_TYPES: tuple[ResourceType, ...] = (
    _R("nodes", "", "v1", "Node", False, ("no",), ("proxy", "status")),
    _R("pods", "", "v1", "Pod", True, ("po",), ("log", "exec", "proxy", "status")),
    _R("events", "", "v1", "Event", True, ("ev",)),
    _R("services", "", "v1", "Service", True, ("svc",), ("proxy", "status")),
    _R("configmaps", "", "v1", "ConfigMap", True, ("cm",)),
    _R("persistentvolumeclaims", "", "v1", "PersistentVolumeClaim", True, ("pvc",), ("status",)),
    _R("namespaces", "", "v1", "Namespace", False, ("ns",), ("status",)),
    _R("daemonsets", "apps", "v1", "DaemonSet", True, ("ds",), ("status",)),
    _R("deployments", "apps", "v1", "Deployment", True, ("deploy",), ("status",)),
    _R("storageclasses", "storage.k8s.io", "v1", "StorageClass", False, ("sc",)),
    _R("csidrivers", "storage.k8s.io", "v1", "CSIDriver", False),
    _R("csinodes", "storage.k8s.io", "v1", "CSINode", False),
    _R("runtimeclasses", "node.k8s.io", "v1", "RuntimeClass", False),
    _R("clusterpolicies", "nvidia.com", "v1", "ClusterPolicy", False, (), ("status",)),
    _R("nvidiadrivers", "nvidia.com", "v1alpha1", "NVIDIADriver", False, ("nvd",), ("status",)),
    _R("nicclusterpolicies", "mellanox.com", "v1alpha1", "NicClusterPolicy", False, ("ncp",),
       ("status",)),
    _R("servicemonitors", "monitoring.coreos.com", "v1", "ServiceMonitor", True, ("smon",)),
)

KNOWN_BY_PLURAL: dict[str, ResourceType] = {t.plural: t for t in KNOWN_TYPES}


def infer_type(plural: str, api_version: str, kind: str, namespaced: bool) -> ResourceType:
    """Describe a bundle file the table does not know, from one of its items."""
    group, _, version = api_version.rpartition("/")
    return ResourceType(plural, group, version, kind, namespaced)
