"""The NVIDIA runtime's own log (/var/log/nvidia-container-runtime.log, where its config
turns it on) ending in an error-level line with no create after it is the toolkit's failure:
every GPU container fails when the runtime changes its spec. Lines as public reports quote
the log in both of its formats: the Go logger's before 1.8 (NVIDIA/nvidia-docker#1017,
NVIDIA/nvidia-container-runtime#83) and logrus' JSON since (NVIDIA/gpu-operator#413). A log
of info lines only (looking for runc under another name: '"docker-runc" binary not found')
and an error a later create went past change nothing."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import top_pair


def _top(text: str) -> tuple[str, str] | None:
    raw: dict[str, Any] = {
        "id": "x-runtime-log", "source": "https://example.org/x", "title": "t", "platform": "docker",
        "cluster": {"driver_mode": "host"},
        "evidence": [{"kind": "node-file", "path": "var/log/nvidia-container-runtime.log", "text": text}],
        "expect": {"healthy": True}}
    case = msgspec.convert(raw, Case)
    return top_pair(case)


_T = "2019/10/14 16:29:58 "
_OLD_CREATE = "".join(f"{_T}{line}\n" for line in (
    "Running /usr/bin/nvidia-container-runtime",
    "Using bundle file: /run/containerd/io.containerd.runtime.v1.linux/moby/47e9f2/config.json",
    "prestart hook path: /usr/bin/nvidia-container-runtime-hook",
    "Prestart hook added, executing runc",
    'Looking for "docker-runc" binary',
    '"docker-runc" binary not found',
    'Looking for "runc" binary',
    "Runc path: /usr/bin/runc"))
_E = "2019/07/23 14:19:45 "
_OLD_ERROR = "".join(f"{_E}{line}\n" for line in (
    "Running nvidia-container-runtime",
    "Using bundle file: /var/run/docker/containerd/daemon/io.containerd.runtime.v1.linux/moby/ac75/"
    "config.json",
    "ERROR: inject NVIDIA hook: stat /usr/bin/nvidia-container-runtime-hook: no such file or directory"))
_NEW_INFO = "".join(f'{{"level":"info","msg":"{msg}","time":"2022-11-09T20:27:15+01:00"}}\n' for msg in (
    "Using OCI specification file path: /run/containerd/io.containerd.runtime.v2.task/moby/ebb0/config.json",
    "Auto-detected mode as 'legacy'",
    "Using prestart hook path: /usr/bin/nvidia-container-runtime-hook",
    "Applied required modification to OCI specification",
    "Using low-level runtime /usr/bin/runc"))


def test_the_runtime_s_last_error_is_the_toolkit_s_failure() -> None:
    """The hook binary the runtime stats is missing: the catalogued cause of that line
    (oci_hook_binary_missing, 9143572) wins over its class, as for NVIDIA/nvidia-docker#1017."""
    assert _top(_OLD_ERROR) == ("container-toolkit", "oci_hook_binary_missing")


def test_the_json_format_s_error_level() -> None:
    error = ('{"level":"error","msg":"error running nvidia-container-runtime: failed to create modifier: '
             'failed to construct OCI spec modifier: requirements not met","time":"2023-08-24T10:40:02Z"}\n')
    found = _top(_NEW_INFO + error)
    assert found is not None and found[0] == "container-toolkit"


def test_info_lines_only_are_healthy() -> None:
    assert _top(_OLD_CREATE) is None
    assert _top(_NEW_INFO) is None


def test_an_error_a_later_create_went_past_is_healed() -> None:
    assert _top(_OLD_ERROR + _OLD_CREATE) is None
