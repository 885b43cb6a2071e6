"""The runtime that cannot be reached because of the config the toolkit wrote: a containerd
config holding the toolkit's nvidia runtime whose version containerd refuses (a quoted
version string: GPU Operator 1.6.2 release notes, toolkit 1.4.6, fixed in 1.4.7 by writing
an integer), or the toolkit's drop-in of a higher version than the root config
(https://github.com/NVIDIA/aicr/issues/1688), while the kubelet's dial of the socket is
refused ("dial unix /run/containerd/containerd.sock: connect: connection refused", quoted
in aicr#1688). The look-alikes: the same file while the runtime answers, a refused file that
is not the toolkit's, and the dial error alone (the runtime's, as before)."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

_TABLE = '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes'
_TOOLKIT = (f'version = "2"\n\n{_TABLE}.nvidia]\n  runtime_type = "io.containerd.runc.v2"\n'
            f'{_TABLE}.nvidia.options]\n'
            '  BinaryName = "/usr/local/nvidia/toolkit/nvidia-container-runtime"\n')
_OTHER = f'version = "2"\n\n{_TABLE}.runc]\n  runtime_type = "io.containerd.runc.v2"\n'
_DIAL = ("Error while dialing dial unix /run/containerd/containerd.sock: "
         "connect: connection refused\n")
_RULE = ("container-toolkit", "containerd_config_version_mismatch")


def _top(config: str | None, dial: bool) -> tuple[str, str] | None:
    evidence: list[dict[str, Any]] = []
    if config is not None:
        evidence.append({"kind": "node-file", "path": "etc/containerd/config.toml", "text": config})
    if dial:
        evidence.append({"kind": "node-cmd", "name": "journal-kubelet.txt", "text": _DIAL})
    return top_pair(synthetic_case("x-toolkit-written", evidence, healthy=False))


def test_the_toolkit_s_refused_config_is_why_the_socket_refuses() -> None:
    assert _top(_TOOLKIT, dial=True) == _RULE


def test_the_same_file_while_the_runtime_answers_is_not_read() -> None:
    assert _top(_TOOLKIT, dial=False) != _RULE


def test_a_refused_file_without_the_toolkit_s_runtime_is_not_the_toolkit_s() -> None:
    assert _top(_OTHER, dial=True) != _RULE


def test_the_dial_error_alone_stays_the_runtime_s() -> None:
    found = _top(None, dial=True)
    assert found is not None and found[0] == "container-runtime"
