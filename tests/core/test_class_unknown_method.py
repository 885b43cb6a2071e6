"""A gRPC server that knows the service but not the method a client calls (grpc-go's "code =
Unimplemented desc = unknown method M for service S") serves an older revision of the API
than the client speaks: a version mismatch. An unknown *service* is not read so: it is also
a plugin a configuration left out (containerd's CRI disabled), and the catalog reads the
device plugin's registration refused. Each line is a public one."""

from __future__ import annotations

import pytest

from gpunode.kb import load_kb

KB = load_kb()


@pytest.mark.parametrize(
    "line",
    [
        # kubernetes-sigs/node-feature-discovery#810: the topology updater asks a kubelet 1.20
        # for a method it gained later
        "failed to obtain node resource information: failed to get allocatable resources (ensure "
        "that KubeletPodResourcesGetAllocatable feature gate is eabled): rpc error:code = "
        "Unimplemented desc=unknown method get allocatableResources for service v1.PodResourcesLister",
        # argoproj/argo-cd#3417: a CLI newer than its server
        "argocd repo add: rpc error: code = Unimplemented desc = unknown method CreateRepository",
        # a kubelet newer than containerd 1.7, whose CRI lacks the RuntimeConfig method
        "\"RuntimeConfig from runtime service failed\" err=\"rpc error: code = Unimplemented desc = "
        "unknown method RuntimeConfig for service runtime.v1.RuntimeService\"",
    ],
)
def test_unknown_method_is_a_version_mismatch(line: str) -> None:
    assert KB.class_of(line) == "error_version_mismatch"


@pytest.mark.parametrize(
    ("line", "cls"),
    [
        # kubernetes/kubernetes#131164: containerd's CRI not serving v1 keeps its configuration reading
        ("validate service connection: CRI v1 runtime API is not implemented for endpoint "
         "\"unix:///run/containerd/containerd.sock\": rpc error: code = Unimplemented desc = unknown "
         "service runtime.v1.RuntimeService", "error_config_invalid"),
        # a device plugin's registration refused is left to its catalogued cause
        ("Could not register device plugin: rpc error: code = Unimplemented desc = unknown service "
         "v1beta1.Registration", None),
    ],
)
def test_unknown_service_keeps_its_reading(line: str, cls: str | None) -> None:
    assert KB.class_of(line) == cls
