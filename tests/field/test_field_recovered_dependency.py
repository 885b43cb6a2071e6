"""A dependency that only restarted in the recent past (its pod runs now, nothing says why)
is degraded, not down: a component above it that fails now names its own reason, and comes
first. NVIDIA/gpu-operator#560: the toolkit's init image cannot be pulled beside a driver pod
Running with 12 restarts. A dependency that is down now still explains what waits on it.
"""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

#: NVIDIA/gpu-operator#560: the toolkit's init container pins a CUDA image digest nvcr.io no
#: longer serves (as in #388), beside a driver pod that runs with 12 restarts behind it.
PULL = ('Back-off pulling image "nvcr.io/nvidia/cuda@sha256:'
        'ed723a1339cddd75eb9f2be2f3476edf497a1b189c10c9bf9eb8da4a16a51a59"')


def _toolkit_pull(driver: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"kind": "pod-state", "component": "container-toolkit", "state": "Init:ImagePullBackOff",
             "message": PULL}, {"kind": "pod-state", "component": "driver", **driver}]


def test_a_failure_now_is_not_blocked_by_a_dependency_that_only_restarted() -> None:
    case = synthetic_case("x-dd-pull-restarted", _toolkit_pull({"state": "Running", "restarts": 12}),
                          healthy=False)
    assert top_pair(case) == ("container-toolkit", "image_pull_failed")


def test_a_dependency_that_is_down_now_still_comes_first() -> None:
    case = synthetic_case("x-dd-pull-driver-down",
                          _toolkit_pull({"state": "CrashLoopBackOff", "restarts": 12}), healthy=False)
    top = top_pair(case)
    assert top is not None and top[0] == "driver"


def test_restarts_alone_still_name_the_restarting_component() -> None:
    evidence = [{"kind": "pod-state", "component": "driver", "state": "Running", "restarts": 12}]
    top = top_pair(synthetic_case("x-dd-restarted-only", evidence, healthy=False))
    assert top == ("driver", "restarting")
