"""The GPU Operator's toolkit that cannot reach containerd's socket, read against the node's
distribution: where the distribution runs its own containerd (K3s, RKE2, MicroK8s keep their
socket elsewhere: docs.rke2.io/add-ons/gpu_operators, docs.k3s.io) and the toolkit is given no
socket, it dials containerd's default one, which that containerd does not serve, whether no file
is there or a stale one refuses the connection. On a node whose containerd is the system's own,
or with the toolkit given the distribution's socket, the same words are not a wrong path."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import top_pair

WRONG_PATH = ("container-toolkit", "containerd_config_wrong_path")
REFUSED = ('time="2024-12-07T03:35:49Z" level=error msg="error running nvidia-toolkit: '
           'unable to setup runtime: unable to restart containerd: unable to dial: '
           'dial unix /runtime/sock-dir/containerd.sock: connect: connection refused"')


def _case(*evidence: dict[str, Any], platform: str) -> Case:
    raw = {"id": "x-toolkit-socket", "source": "https://example.org/x", "title": "t", "platform": platform,
           "evidence": list(evidence), "expect": {"healthy": False}, "cluster": {"driver_mode": "host"}}
    return msgspec.convert(raw, Case)


def _crashing_toolkit(line: str) -> list[dict[str, Any]]:
    return [{"kind": "pod-state", "component": "container-toolkit", "state": "CrashLoopBackOff",
             "restarts": 4},
            {"kind": "log", "component": "container-toolkit", "container": "nvidia-container-toolkit-ctr",
             "previous": True,
             "text": 'time="2024-12-07T03:35:24Z" level=info msg="Sending SIGHUP signal to containerd"\n'
                     + line + "\n"}]


def _socket_env(path: str) -> dict[str, Any]:
    env = [{"name": "CONTAINERD_SOCKET", "value": path}]
    return {"kind": "cluster-object", "resource": "clusterpolicies",
            "object": {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy",
                       "metadata": {"name": "cluster-policy"},
                       "spec": {"toolkit": {"enabled": True, "env": env}}}}


def test_a_refused_default_socket_on_k3s_is_the_wrong_path() -> None:
    assert top_pair(_case(*_crashing_toolkit(REFUSED), platform="k3s")) == WRONG_PATH


def test_the_same_words_on_a_system_containerd_or_with_the_socket_given_are_not() -> None:
    # negatives: the node's containerd is the system's own (the default socket is its), and a
    # toolkit told K3s's socket that still cannot reach it (containerd down, not a wrong path)
    assert top_pair(_case(*_crashing_toolkit(REFUSED), platform="ubuntu")) != WRONG_PATH
    given = _socket_env("/run/k3s/containerd/containerd.sock")
    assert top_pair(_case(*_crashing_toolkit(REFUSED), given, platform="k3s")) != WRONG_PATH
