"""A GPU-sharing agent's PreStartContainer failure, relayed by the kubelet ("device plugin
PreStartContainer rpc failed with err: ..."), is the plugin's own answer (components.toml's
device-plugin named_by) for a pod that asks elastic-gpu's resource (elastic-gpu/gpu-percent,
nano-gpu/gpu-percent before the rename: elastic-ai/elastic-gpu-agent pkg/common/const.go): the
agent slices the node's NVIDIA GPUs, so the pod is a GPU workload. Its class is the relayed
words' own: the agent dialing the kubelet's pod-resources socket at a path its container does not
have (elastic-ai/elastic-gpu-scheduler#15, the maintainer: mount the node's socket directory into
the agent) is a file the component needs missing. The kubelet's own words for a socket it serves
and refuses (connection refused: kubernetes/kubernetes#131776, kubewharf/katalyst-core#715) are
another layer's, and a pod asking a resource no GPU plugin serves is not read.

A pod the scheduler once could not place (FailedScheduling "... is in the cache, so can't be
assumed") and whose container the kubelet then failed to create was placed: the builder puts it
on the node, as the report shows."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import top_pair

#: https://github.com/elastic-ai/elastic-gpu-scheduler/issues/15
SOCKET_MISSING = ('Error: device plugin PreStartContainer rpc failed with err: rpc error: '
                  'code = Unavailable desc = connection error: desc = "transport: Error while dialing '
                  'dial unix /var/lib/kubelet/pod-resources/kubelet.sock: connect: '
                  'no such file or directory"')


def _refused(message: str, limits: dict[str, str], *, scheduled_late: bool = False) -> Case:
    pod = {"kind": "Pod", "name": "share-0", "namespace": "default"}
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "share-0", "namespace": "default", "container": "cuda",
         "resources": {"limits": limits}, "state": "CreateContainerConfigError", "message": message}]
    if scheduled_late:
        evidence.append({"kind": "event", "object": pod, "type": "Warning", "reason": "FailedScheduling",
                         "message": "pod 5c1e is in the cache, so can't be assumed"})
    evidence.append({"kind": "event", "object": pod, "type": "Warning", "reason": "Failed", "count": 12,
                     "message": message})
    raw: dict[str, Any] = {
        "id": "x-prestart-share", "source": "https://example.org/x", "title": "t", "platform": "generic",
        "cluster": {"driver_mode": "host"}, "evidence": evidence, "expect": {"healthy": True}}
    return msgspec.convert(raw, Case)


def test_the_sharing_agents_relayed_failure_is_the_plugins() -> None:
    for limits in ({"elastic-gpu/gpu-percent": "20"}, {"nano-gpu/gpu-percent": "50"}):
        assert top_pair(_refused(SOCKET_MISSING, limits)) == ("device-plugin", "error_file_state"), limits


def test_a_pod_the_kubelet_failed_to_start_after_a_failed_scheduling_was_placed() -> None:
    case = _refused(SOCKET_MISSING, {"elastic-gpu/gpu-percent": "20"}, scheduled_late=True)
    assert top_pair(case) == ("device-plugin", "error_file_state")


def test_a_resource_no_gpu_plugin_serves_is_not_read() -> None:
    assert top_pair(_refused(SOCKET_MISSING, {"elastic-cpu/cpu-percent": "20"})) is None
