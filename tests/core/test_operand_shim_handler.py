"""Docker's CRI shim (dockershim, cri-dockerd) serves only Docker's default runtime and
refuses any RuntimeClass handler ('RuntimeHandler "nvidia" not supported',
pkg/kubelet/dockershim/docker_sandbox.go): an operand the GPU Operator rendered with
runtimeClassName on such a node is the operator's failure, on any platform, not the
operand's, which only suffered it; a user's pod asking the handler is no failure of the
stack; containerd's refusal of a handler it was never given stays the toolkit's.

Public lines: NVIDIA/gpu-operator#236 (the operator's operands on docker://19.3.15,
quoting the shim's source), NVIDIA/gpu-operator#250 (nvidia-device-plugin-daemonset:
'Failed create pod sandbox: rpc error: code = Unknown desc = RuntimeHandler "nvidia" not
supported'); look-alike NVIDIA/gpu-operator#413 and #759 (containerd: 'failed to get
sandbox runtime: no runtime for "nvidia" is configured', the toolkit's handler missing).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_operand_runtime_handler import cluster_roots, falcon, refused_sandbox, workload_prefix

from gpunode.model import Report

__all__ = ["falcon"]  # the module's bundle fixture, shared
#: NVIDIA/gpu-operator#250, the device plugin's sandbox on a Docker node.
SHIM = 'Failed create pod sandbox: rpc error: code = Unknown desc = RuntimeHandler "nvidia" not supported'
#: NVIDIA/gpu-operator#236, as the kubelet's event quotes it there.
SHIM_236 = ('Failed to create pod sandbox: rpc error: code = Unknown desc = '
            'RuntimeHandler "nvidia" not supported')
#: NVIDIA/gpu-operator#413: containerd without the toolkit's handler (look-alike).
CONTAINERD = ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: '
              'no runtime for "nvidia" is configured')


def _refused(falcon: Path, tmp_path: Path, message: str, runtime: str, pod_prefix: str) -> Report:
    return refused_sandbox(falcon, tmp_path, runtime=runtime, message=message, pod_prefix=pod_prefix,
                           count=25)


@pytest.mark.parametrize("message", [SHIM, SHIM_236])
def test_an_operand_refused_by_dockers_shim_is_the_operators(falcon: Path, tmp_path: Path,
                                                             message: str) -> None:
    report = _refused(falcon, tmp_path, message, "docker://19.3.15", "nvidia-device-plugin-daemonset")
    assert any(c == "gpu-operator" for c, _ in cluster_roots(report)), cluster_roots(report)


def test_a_users_pod_refused_by_dockers_shim_is_not_the_operators(falcon: Path, tmp_path: Path) -> None:
    # look-alike (sgl-project/sglang#5515's shape): the user's own spec asks for the handler
    report = _refused(falcon, tmp_path, SHIM, "docker://19.3.15", workload_prefix(falcon))
    assert not any(c == "gpu-operator" for c, _ in cluster_roots(report)), cluster_roots(report)


def test_containerd_without_the_handler_is_not_the_operators(falcon: Path, tmp_path: Path) -> None:
    # look-alike (NVIDIA/gpu-operator#413): containerd lacks the handler the toolkit writes
    report = _refused(falcon, tmp_path, CONTAINERD, "containerd://1.7.24", "nvidia-device-plugin-daemonset")
    assert not any(c == "gpu-operator" for c, _ in cluster_roots(report)), cluster_roots(report)
