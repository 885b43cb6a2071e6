"""libnvidia-container's own error for a cgroup controller it cannot find ('container error:
cgroup subsystem devices not found', nvc's 'cgroup subsystem %s not found': a release without
cgroup v2 support on a cgroup v2 host) is the container toolkit's
``container_cli_cgroup_error`` also where the line relaying it dropped the
'nvidia-container-cli:' before it (a pasted event, an inspect report's fragment): the words
name the layer, not the program name before them. An operand pod that cannot start on it is
blocked by the toolkit, not failing on its own.

Sources: NVIDIA/nvidia-docker#1447 (Debian testing), saharmor/dalle-playground#105 (a compose
run), NVIDIA/k8s-device-plugin#324 (nvidia-container-cli.real, the plugin's pod). Look-alike:
runc's own words for a host without the devices controller ('mountpoint for devices not
found', opencontainers/runc#1631) are not the toolkit's."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

#: NVIDIA/nvidia-docker#1447's hook error (docker run --gpus all).
DOCKER_1447 = ("OCI runtime create failed: container_linux.go:370: starting container process caused: "
               "process_linux.go:459: container init caused: Running hook #0:: error running hook: exit "
               "status 1, stdout: , stderr: nvidia-container-cli: container error: cgroup subsystem "
               "devices not found: unknown")
#: saharmor/dalle-playground#105's.
DALLE_105 = ("failed to create shim: OCI runtime create failed: runc create failed: unable to start "
             "container process: error during container init: error running hook #0: error running hook: "
             "exit status 1, stdout: , stderr: nvidia-container-cli: container error: cgroup subsystem "
             "devices not found: unknown")
#: NVIDIA/k8s-device-plugin#324's title (Ubuntu's nvidia-container-cli.real).
PLUGIN_324 = "nvidia-container-cli.real: container error: cgroup subsystem devices not found"
#: opencontainers/runc#1631's title.
RUNC_1631 = ('container_linux.go:296: starting container process caused "process_linux.go:279: applying '
             'cgroup configuration for process caused \\"mountpoint for devices not found\\""')


def _plugin_cannot_start(message: str) -> list[dict[str, Any]]:
    return [{"kind": "pod-state", "component": "device-plugin", "container": "toolkit-validation",
             "init": True, "state": "Init:CrashLoopBackOff"},
            {"kind": "event", "component": "device-plugin", "type": "Warning", "reason": "Failed",
             "message": message + "\n"}]


def _words_alone(line: str) -> str:
    """The line as a relay that dropped the program's name before libnvidia-container's words."""
    return "container error:" + line.split("container error:", 1)[1]


def test_the_words_are_the_toolkit_s_with_or_without_the_program_name() -> None:
    for i, line in enumerate((DOCKER_1447, DALLE_105, PLUGIN_324)):
        for j, shown in enumerate((line, _words_alone(line))):
            case = synthetic_case(f"x-cgroup-words-{i}-{j}", _plugin_cannot_start(shown), healthy=False)
            assert top_pair(case) == ("container-toolkit", "container_cli_cgroup_error"), shown


def test_runc_s_own_words_are_not_the_toolkit_s() -> None:
    case = synthetic_case("x-cgroup-runc", _plugin_cannot_start(RUNC_1631), healthy=False)
    pair = top_pair(case)
    assert pair is None or pair[0] != "container-toolkit"
