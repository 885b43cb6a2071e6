"""containerd before 2.0 merges an imported file plugin by plugin: a drop-in that sets any key
of the CRI plugin section (a registry mirror) replaces config.toml's section, its runtimes
included (containerd/containerd#5837; 2.0 merges key by key, containerd/containerd#9982). Pods
refused with 'no runtime for "nvidia" is configured' on such a node are the toolkit's runtime
that containerd never loads, however long its pods run. The same event where containerd is
2.x, where the drop-in sets no CRI key, or where the drop-in brings the nvidia runtime itself
is the toolkit still starting (gpu-operator#413): healthy."""

from __future__ import annotations

from typing import Any

import pytest
from case import synthetic_case
from scoreboard import top_pair

# a registry drop-in as containerd 1.x users write it (gpu-operator#301, containerd#5837)
_MIRRORS = (
    '[plugins."io.containerd.grpc.v1.cri".registry.mirrors."registry.example.com"]\n'
    '  endpoint = ["http://registry.example.com"]\n'
)
_NVIDIA = (
    '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
    '  runtime_type = "io.containerd.runc.v2"\n'
    '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
    '  BinaryName = "/usr/local/nvidia/toolkit/nvidia-container-runtime"\n'
)
_NOT_CRI = '[debug]\n  level = "info"\n'
_REFUSED = ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox '
            'runtime: no runtime for "nvidia" is configured')


def _node(version: str, dropin: str, *, refused: bool = True) -> list[dict[str, Any]]:
    evidence: list[dict[str, Any]] = [
        {"kind": "node-info", "fields": {"containerRuntimeVersion": version}},
        {"kind": "node-file", "path": "etc/containerd/conf.d/registries.toml", "text": dropin},
    ]
    if refused:
        evidence.append({"kind": "event", "component": "device-plugin", "type": "Warning",
                         "reason": "FailedCreatePodSandBox", "count": 7, "message": _REFUSED})
    return evidence


def test_cri_dropin_on_containerd_1_drops_the_nvidia_runtime() -> None:
    case = synthetic_case("x-cri-replaced", _node("containerd://1.4.12", _MIRRORS), healthy=False)
    assert top_pair(case) == ("container-toolkit", "runtime_handler_missing")


@pytest.mark.parametrize(("version", "dropin", "refused"), [
    ("containerd://2.0.2", _MIRRORS, True),   # 2.0 merges key by key: the runtimes stay
    ("containerd://1.6.20", _NOT_CRI, True),  # no CRI key: config.toml's section stands
    ("containerd://1.6.20", _NVIDIA, True),   # the drop-in brings the runtime itself
    ("containerd://1.4.12", _MIRRORS, False),  # no pod refused: nothing asks for the handler
])
def test_look_alikes_stay_healthy(version: str, dropin: str, refused: bool) -> None:
    case = synthetic_case("x-cri-kept", _node(version, dropin, refused=refused))
    assert top_pair(case) is None
