"""The NVIDIA hook's requirement check names the image's NVIDIA_REQUIRE_* constraint it found
unmet ('unsatisfied condition: cuda>=10.2, please update your driver ...'): the driver is too
old for the image (driver, cuda_driver_too_old). The constraint is echoed as the image wrote it
(the toolkit's docs, 'Specialized Configurations with Docker', constraints cuda>=7.5,
driver>=395, brand=tesla), its comparator one token; a paste that spaces the token's characters
('cuda> = 10.2', opendatacam/opendatacam#209) still holds the same check (NVIDIA/nvidia-docker#1442
for the unspaced line). The constraint alone, printed by a running container's environment, is
no refusal.

Sources: https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html,
https://github.com/NVIDIA/nvidia-docker/issues/1442."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

#: The hook's line in a spaced-out paste, as Docker relays it (opendatacam/opendatacam#209).
SPACED = ("OCI runtime create failed: container_linux.go: 349: starting container process caused "
          "\"process_linux.go: 449: container init caused \\\" process_linux.go: 432: running "
          "prestart hook 0 caused \\\\ \\ \"error running hook: exit status 1, stdout:, stderr: "
          "nvidia-container-cli: "
          "requirement error: unsatisfied condition: cuda> = 10.2, please update your driver to a newer "
          "version, or use an earlier cuda container \\\\\\ \\ n \\\\\\ \"\\\" \": unknown")
#: The image's constraint as its environment prints it in a running container.
ENV_ONLY = "NVIDIA_REQUIRE_CUDA=cuda> = 10.2 brand=tesla,driver>=418,driver<419"


def _case(name: str, evidence: list[dict[str, Any]], healthy: bool) -> Case:
    return synthetic_case(f"x-hook-requirement-{name}", evidence, healthy=healthy)


def _pod(state: str) -> dict[str, Any]:
    return {"kind": "workload", "name": "gpu-job", "namespace": "default", "container": "job",
            "state": state}


def test_a_spaced_comparator_is_still_the_driver_too_old_for_the_image() -> None:
    event = {"kind": "event", "object": {"kind": "Pod", "name": "gpu-job", "namespace": "default"},
             "type": "Warning", "reason": "Failed", "message": f"Error response from daemon: {SPACED}"}
    case = _case("spaced", [_pod("RunContainerError"), event], healthy=False)
    assert top_pair(case) == ("driver", "cuda_driver_too_old")


def test_the_constraint_in_a_running_container_s_log_stays_healthy() -> None:
    log = {"kind": "log", "object": {"kind": "Pod", "name": "gpu-job", "namespace": "default"},
           "container": "job", "text": ENV_ONLY + "\n"}
    case = _case("env", [_pod("Running"), log], healthy=True)
    assert top_pair(case) is None
