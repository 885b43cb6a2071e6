"""What the collector leans on in lightkube 1.0 (pinned): keep these true on upgrades."""

from __future__ import annotations

from typing import ClassVar

import msgspec
from lightkube import Client
from lightkube.config.kubeconfig import KubeConfig
from lightkube.core import resource as res
from lightkube.core.decoders import decode_list

from gpunode.apiserver import RunningServer
from gpunode.collect import slim


class SlimPodResource(slim.Pod, res.NamespacedResourceG):
    """A lightkube resource class that is a msgspec Struct holding only what gpunode reads."""

    _api_info: ClassVar[res.ApiInfo] = res.ApiInfo(
        resource=res.ResourceDef("", "v1", "Pod"), plural="pods", verbs=["list", "global_list"])


def test_lists_decode_straight_into_a_struct_resource(mini_server: RunningServer) -> None:
    config = KubeConfig.from_file(mini_server.kubeconfig_path)
    with Client(config, trust_env=False) as client:
        pods = list(client.list(SlimPodResource, namespace="*", chunk_size=4))
    assert all(type(p) is SlimPodResource for p in pods)
    assert len(pods) == 11
    crashing = next(p for p in pods if p.metadata.name == "nvidia-device-plugin-daemonset-z8c3x")
    status = crashing.status.container_statuses[0]
    assert (status.restart_count, status.state.waiting and status.state.waiting.reason) == \
        (7, "CrashLoopBackOff")


def test_decode_list_keeps_struct_items_and_the_continue_token() -> None:
    body = msgspec.json.encode({"metadata": {"continue": "abc", "resourceVersion": "7"},
                                "items": [{"metadata": {"name": "p", "namespace": "n"},
                                           "spec": {"nodeName": "gpu-wk-01"}}]})
    token, version, items = decode_list(body, SlimPodResource)
    assert (token, version) == ("abc", "7")
    assert items[0].spec.node_name == "gpu-wk-01"
