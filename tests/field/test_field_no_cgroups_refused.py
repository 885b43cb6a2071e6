"""NVML inside a GPU job refusing access to the GPU ("GPU access blocked by the operating
system", "Insufficient Permissions") on a node whose toolkit config sets ``no-cgroups = true``:
libnvidia-container then leaves the GPUs out of the container's device cgroup, a setting only
rootless runtimes need (NVIDIA/nvidia-container-toolkit#381, the maintainers' words;
NVIDIA/nvidia-container-toolkit#85 and microsoft/WSL#9938: fixed by no-cgroups = false). The
toolkit's refusal (checks.no_cgroups). Without the setting, or with it false, the same line
stays where it was; NVML's "Unknown Error" is not read here."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

BLOCKED = "Failed to initialize NVML: GPU access blocked by the operating system\n"


def _job(text: str, config: str | None) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "pytorch", "namespace": "default", "container": "pytorch",
         "state": "Error", "exit_code": 9},
        {"kind": "log", "object": {"kind": "Pod", "name": "pytorch", "namespace": "default"},
         "container": "pytorch", "text": text}]
    if config is not None:
        evidence.append({"kind": "node-file", "path": "etc/nvidia-container-runtime/config.toml",
                         "text": config})
    return synthetic_case("x-no-cgroups", evidence, healthy=False, platform="docker",
                          cluster={"driver_mode": "host"})


def test_nvml_blocked_with_no_cgroups_true_is_the_toolkits_refusal() -> None:
    top = top_pair(_job(BLOCKED, "[nvidia-container-cli]\nno-cgroups = true\n"))
    assert top == ("container-toolkit", "error_permission_denied")


def test_insufficient_permissions_with_no_cgroups_true_is_the_toolkits_refusal() -> None:
    top = top_pair(_job("Failed to initialize NVML: Insufficient Permissions\n",
                        "[nvidia-container-cli]\nno-cgroups = true\n"))
    assert top == ("container-toolkit", "error_permission_denied")


def test_no_cgroups_false_leaves_the_line_where_it_was() -> None:
    top = top_pair(_job(BLOCKED, "[nvidia-container-cli]\nno-cgroups = false\n"))
    assert top is not None and top[0] != "container-toolkit"


def test_no_config_collected_leaves_the_line_where_it_was() -> None:
    top = top_pair(_job(BLOCKED, None))
    assert top is not None and top[0] != "container-toolkit"


def test_nvml_unknown_error_is_not_read_here() -> None:
    config = "[nvidia-container-cli]\nno-cgroups = true\n"
    top = top_pair(_job("Failed to initialize NVML: Unknown Error\n", config))
    assert top is None or top[1] != "error_permission_denied"
