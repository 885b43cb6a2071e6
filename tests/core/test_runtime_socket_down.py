"""The kubelet's CRI client that finds no runtime behind the runtime's socket (the socket is
absent, or nothing listens on it) is the catalogued container_runtime_down, as its node
condition says when it gets that far: the kubelet's own klog line for a runtime service call
('"Version from runtime service failed" err="rpc error: code = Unavailable desc = connection
error: desc = \\"transport: Error while dialing dial unix /run/containerd/containerd.sock:
connect: no such file or directory\\""', aws/karpenter-provider-aws#730; the same for
ListPodSandbox on CRI-O, cri-o/cri-o#5045). crictl trying its default endpoints and cAdvisor
probing for a CRI-O socket on a containerd node are no runtime down."""

from __future__ import annotations

import pytest

from gpunode.kb import load_kb

KB = load_kb()
DIAL = ('rpc error: code = Unavailable desc = connection error: desc = \\"transport: Error while dialing '
        "dial unix")


@pytest.mark.parametrize(
    "line",
    [
        ('E1004 16:57:28.770481    8031 remote_runtime.go:86] "Version from runtime service failed" '
         f'err="{DIAL} /run/containerd/containerd.sock: connect: no such file or directory\\""'),
        ('E0701 13:19:14.546718  118121 remote_runtime.go:207] "ListPodSandbox with filter from runtime '
         f'service failed" err="{DIAL} /var/run/crio/crio.sock: connect: connection refused\\""'),
    ],
)
def test_the_kubelet_finds_no_runtime(line: str) -> None:
    cause = KB.catalogued_in("container-runtime", line)
    assert cause is not None and cause.code == "container_runtime_down"


@pytest.mark.parametrize(
    "line",
    [
        # kubernetes/kubernetes#121548: crictl trying a default endpoint the node does not use
        ('ERRO[0000] validate service connection: validate CRI v1 runtime API for endpoint '
         '"unix:///var/run/dockershim.sock": rpc error: code = Unavailable desc = connection error: desc = '
         '"transport: Error while dialing: dial unix /var/run/dockershim.sock: connect: no such file or '
         'directory"'),
        # linuxkit/kubernetes#26: cAdvisor probing for CRI-O on a node that runs another runtime
        ("W1213 19:31:02.082564     572 manager.go:166] unable to connect to CRI-O api service: Get "
         "http://%2Fvar%2Frun%2Fcrio.sock/info: dial unix /var/run/crio.sock: connect: no such file or "
         "directory"),
        # the toolkit's own client of the socket is the toolkit's concern
        ("level=error msg=\"error restarting containerd: dial unix /run/containerd/containerd.sock: connect: "
         "no such file or directory\""),
    ],
)
def test_other_clients_of_a_socket_are_no_runtime_down(line: str) -> None:
    cause = KB.catalogued_in("container-runtime", line)
    assert cause is None or cause.code != "container_runtime_down"
