"""nvidia-container-cli's "initialization error: driver (rpc) error: failed to process request"
in a GPU workload's hook error: the CLI's driver service (chroot into the driver root it is
given, load the driver's libraries there) ended before answering. Where the CLI enters a
driver container's root (the toolkit's config.toml names one, or a driver container runs on
the node) and the node's nvidia-smi -q shows the driver answering every GPU in persistence
mode, the root it was given is the fault: container-toolkit/container_cli_no_driver_libs.

The lines are the hook errors public reports pasted: NVIDIA/nvidia-docker#1246 (root switched
to /run/nvidia/driver, the driver container's root not there), NVIDIA/nvidia-docker#1252 and
NVIDIA/nvidia-container-toolkit#183 (the same words, prestart hook 1 and 0), and the rpc form
of libnvidia-container 1.9+ (NVIDIA/nvidia-container-toolkit#556). The node facts around them
are this test's. Look-alikes whose verdict must not move: the same words with the host's own
root (a host driver, no root configured elsewhere: the host install's libraries, as in
OE4T/meta-tegra#1456 and NVIDIA/gpu-operator#104) and with a driver that nvidia-smi cannot
reach stay the driver's; the toolkit's "driver rpc error: timed out" (the driver's slow
initialisation without persistence mode, NVIDIA/nvidia-docker#1648) is not this form.
"""

from __future__ import annotations

from typing import Any

import pytest
from case import synthetic_case
from scoreboard import top_pair

_WRAP = ("Error response from daemon: OCI runtime create failed: container_linux.go:346: starting container "
         "process caused \"process_linux.go:449: container init caused \\\"process_linux.go:432: running "
         "prestart hook {n} caused \\\\\\\"error running hook: exit status 1, stdout: , stderr: {words}"
         "\\\\\\\\n\\\\\\\"\\\"\": unknown.")
_CLI = "nvidia-container-cli: initialization error: driver error: failed to process request"
# nvidia-docker#1246 and #1252 (hook 1), nvidia-container-toolkit#183 (hook 0), #556 (rpc form)
_LINES = [
    _WRAP.format(n=1, words=_CLI),
    _WRAP.format(n=0, words=_CLI),
    "Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: "
    "runc create failed: unable to start container process: error during container init: error running "
    "hook #0: error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: initialization "
    "error: driver rpc error: failed to process request: unknown",
]
# nvidia-docker#1246: the wiki's step that points the CLI at the driver container's root
_DRIVER_ROOT = {"kind": "node-file", "path": "etc/nvidia-container-runtime/config.toml",
                "text": "[nvidia-container-cli]\nroot = \"/run/nvidia/driver\"\n"}
_HOST_ROOT = {"kind": "node-file", "path": "etc/nvidia-container-runtime/config.toml",
              "text": "[nvidia-container-cli]\n#root = \"/run/nvidia/driver\"\n"
                      "ldconfig = \"@/sbin/ldconfig.real\"\n"}
_SMI_FAILS = {"kind": "node-cmd", "name": "nvidia-smi.txt",
              "text": "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                      "Make sure that the latest NVIDIA driver is installed and running.\n"}


def _workload(message: str) -> dict[str, Any]:
    return {"kind": "workload", "name": "cuda-smi", "namespace": "default", "state": "RunContainerError",
            "message": message}


@pytest.mark.parametrize("line", _LINES)
@pytest.mark.parametrize("mode", ["operator", "host"])
def test_driver_root_elsewhere_is_the_toolkits(line: str, mode: str) -> None:
    """The config names the driver container's root (operator or host mode alike)."""
    case = synthetic_case("x-driver-service", [_DRIVER_ROOT, _workload(line)], platform="docker",
                          healthy=False, cluster={"driver_mode": mode})
    assert top_pair(case) == ("container-toolkit", "container_cli_no_driver_libs")


@pytest.mark.parametrize("line", _LINES[:1])
def test_driver_container_without_config_is_the_toolkits(line: str) -> None:
    """No toolkit config collected: a driver container on the node is the root the CLI enters."""
    case = synthetic_case("x-driver-service", [_workload(line)], platform="docker", healthy=False,
                          cluster={"driver_mode": "operator"})
    assert top_pair(case) == ("container-toolkit", "container_cli_no_driver_libs")


@pytest.mark.parametrize("line", _LINES)
@pytest.mark.parametrize("root", [[_HOST_ROOT], []])
def test_host_root_stays_the_drivers(line: str, root: list[dict[str, Any]]) -> None:
    """The host's own root (commented out, or no config and no driver container): the words'
    own reading stands, the driver's for "driver error", the CLI's line class for the rpc form."""
    case = synthetic_case("x-driver-service", [*root, _workload(line)], platform="docker", healthy=False,
                          cluster={"driver_mode": "host"})
    named = "container-toolkit" if "driver rpc error" in line else "driver"
    pair = top_pair(case)
    assert pair is not None and pair[0] == named and pair[1] != "container_cli_no_driver_libs"


def test_unreachable_driver_stays_the_drivers() -> None:
    """nvidia-smi cannot reach the driver: the driver is down, whatever root the CLI enters."""
    case = synthetic_case("x-driver-service", [_DRIVER_ROOT, _SMI_FAILS, _workload(_LINES[0])],
                          platform="docker", healthy=False, cluster={"driver_mode": "host"})
    pair = top_pair(case)
    assert pair is not None and pair[0] == "driver"


def test_timed_out_is_not_this_form() -> None:
    """The driver's slow initialisation ("driver error: timed out") keeps the driver's reading."""
    line = _LINES[0].replace("failed to process request", "timed out")
    case = synthetic_case("x-driver-service", [_DRIVER_ROOT, _workload(line)], platform="docker",
                          healthy=False, cluster={"driver_mode": "operator"})
    pair = top_pair(case)
    assert pair is not None and pair[0] == "driver"
