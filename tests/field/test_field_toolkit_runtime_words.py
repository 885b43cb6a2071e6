"""The NVIDIA runtime names itself in its own errors: nvidia-container-toolkit's runtime wraps
every failure to build a container's spec (its spec modifiers, discoverers, the low-level runtime
it looks up) in 'failed to create NVIDIA Container Runtime: ...', which runc's caller relays in
the pod's status. A GPU workload that cannot start with those words is the toolkit's, with the
class of the innermost error; a catalogued cause the same line carries (the image's CUDA
requirement the driver does not meet, checked by the runtime) is still that cause."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair


def _case(*evidence: dict[str, Any]) -> Case:
    return synthetic_case("x-toolkit-runtime-words", list(evidence), healthy=False)


def _workload(message: str) -> dict[str, Any]:
    return {"kind": "workload", "name": "gpu-job", "namespace": "default", "state": "RunContainerError",
            "message": message}


def _failed(message: str) -> dict[str, Any]:
    return {"kind": "event", "object": {"kind": "Pod", "name": "gpu-job", "namespace": "default"},
            "type": "Warning", "reason": "Failed", "message": f"Error: {message}"}


def _component(case: Case) -> str | None:
    pair = top_pair(case)
    return pair[0] if pair is not None else None


SHIM = "failed to create containerd task: failed to create shim task: OCI runtime create failed: "
#: siderolabs/extensions#171: Talos has no host /etc/ld.so.cache for the graphics mounts' locator.
LDCACHE = (SHIM + "failed to create NVIDIA Container Runtime: failed to construct OCI spec modifier: "
           "failed to construct discoverer: failed to create mounts discoverer: failed to construct "
           "library locator: error loading ldcache: open /etc/ld.so.cache: no such file or directory: "
           "unknown")
#: The runtime finding no low-level runtime binary to hand the container to.
NO_LOW_LEVEL = (SHIM + "failed to create NVIDIA Container Runtime: error constructing low-level runtime: "
                "error locating runtime: no runtime binary found from candidate list: [runc crun]: unknown")
#: The runtime's own requirement check (CSV/legacy modifiers): a CUDA 12.2 image on a CUDA 11.4 driver.
REQUIRES = (SHIM + "failed to create NVIDIA Container Runtime: failed to construct OCI spec modifier: "
            "requirements not met: unsatisfied condition: cuda>=12.2 (cuda=11.4): unknown")


def test_the_nvidia_runtime_s_own_error_is_the_toolkit_s_with_its_innermost_class() -> None:
    assert top_pair(_case(_workload(LDCACHE))) == ("container-toolkit", "error_file_state")
    assert _component(_case(_workload(NO_LOW_LEVEL))) == "container-toolkit"


def test_the_same_wrapper_around_a_driver_too_old_for_the_image_is_the_driver_s() -> None:
    # negative for the toolkit: the runtime only checked what the driver supports
    assert top_pair(_case(_workload(REQUIRES), _failed(REQUIRES))) == ("driver", "cuda_driver_too_old")


def test_runc_failing_without_nvidia_s_words_is_not_the_toolkit_s() -> None:
    # negative: the same shim error from runc alone (an image without the program it runs)
    plain = (SHIM + 'runc create failed: unable to start container process: exec: "python": executable '
             "file not found in $PATH: unknown")
    assert _component(_case(_workload(plain))) == "container-runtime"
