"""The OpenShift driver container's own word that it gave up on the Driver Toolkit.

NVIDIA's OpenShift docs, "About the Broken Driver Toolkit"
(https://docs.nvidia.com/datacenter/cloud-native/openshift/latest/steps-overview.html): when the
Driver Toolkit image's kernel package is not the node's kernel, nvidia-driver-ctr logs
"WARNING: broken driver toolkit detected, using entitlement-based fallback" and keeps running
without a driver built (entitled builds are unsupported on recent OpenShift). The line is read
while the container runs, until the driver container says it is done.
"""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

LOG = """Running nv-ctr-run-with-dtk
+ [[ ! -f /mnt/shared-nvidia-driver-toolkit/dir_prepared ]]
+ set +x
Wed Nov 24 13:36:31 UTC 2021 Waiting for openshift-driver-toolkit-ctr container to start ...
WARNING: broken driver toolkit detected, using entitlement-based fallback
"""


def _driver(text: str) -> list[dict[str, Any]]:
    return [{"kind": "log", "component": "driver", "container": "nvidia-driver-ctr", "text": text}]


def test_a_running_driver_container_that_fell_back_from_a_broken_toolkit_builds_nothing() -> None:
    case = synthetic_case("x-dtk-broken", _driver(LOG), platform="openshift", healthy=False)
    assert top_pair(case) == ("driver", "kernel_headers_missing")


def test_the_same_warning_followed_by_a_driver_that_is_done_stays_healthy() -> None:
    done = LOG + "Done, now waiting for signal\n"
    assert top_pair(synthetic_case("x-dtk-done", _driver(done), platform="openshift")) is None
