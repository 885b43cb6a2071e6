"""The kubelet's journal names the layer below it (issue 20): a node that stopped posting
its status because the container runtime does not serve the CRI API, or because k3s could
not render containerd's config, is the runtime's failure, not the kubelet's."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import diagnose_case, top_root_cause

from gpunode.catalog import load_catalog

STOPPED = {"kind": "node-condition", "type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
           "message": "Kubelet stopped posting node status."}


def _case(journal: str) -> Case:
    raw: dict[str, Any] = {
        "id": "x-journal-layers", "source": "https://example.org/x", "title": "t", "platform": "generic",
        "evidence": [STOPPED, {"kind": "node-cmd", "name": "journal-kubelet.txt", "text": journal}],
        "expect": {"healthy": False}}
    return msgspec.convert(raw, Case)


def _top(case: Case) -> tuple[str, str] | None:
    top = top_root_cause(diagnose_case(case), case.node)
    return (top.component, top.cause) if top else None


def test_a_runtime_that_does_not_serve_cri_v1_is_the_runtime_s_configuration() -> None:
    # NVIDIA/nvidia-container-toolkit#410: containerd's config disabled its CRI plugin.
    journal = ('Mar 15 10:36:59 gpu-wk-01 kubelet[3268247]: E0315 10:36:59.697373 3268247 run.go:74] '
               '"command failed" err="failed to run Kubelet: validate service connection: CRI v1 runtime API '
               'is not implemented for endpoint \\"unix:///run/containerd/containerd.sock\\": rpc error: '
               'code = Unimplemented desc = unknown service runtime.v1.RuntimeService"\n')
    assert _top(_case(journal)) == ("container-runtime", "error_config_invalid")


def test_k3s_failing_to_render_containerd_s_config_is_the_runtime_s() -> None:
    # k3s-io/k3s#8754: the nvidia runtime template of a k3s upgrade.
    journal = ('Nov 01 10:03:02 docker2 k3s[1314]: time="2023-11-01T10:03:02+01:00" level=fatal '
               'msg="template: compiled_template:119:21: executing \\"compiled_template\\" at '
               '<.SystemdCgroup>: can\'t evaluate field SystemdCgroup in type '
               'templates.ContainerdRuntimeConfig"\n')
    assert _top(_case(journal)) == ("container-runtime", "error_unclassified")


def test_a_runtime_socket_that_is_absent_names_the_runtime() -> None:
    line = "dial unix /run/containerd/containerd.sock: connect: no such file or directory"
    assert load_catalog().named_in(line) == "container-runtime"
    assert load_catalog().named_in("open /run/containerd-sock-backup: no such file or directory") is None
