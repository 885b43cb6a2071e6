"""Which of two neighbouring components a failure is: the one a dependent's words or
state point to, or the dependent itself. Bundles built from real-shaped evidence; each
line comes from a public report (its address beside it) or the format its program writes."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import top_pair


def _case(*evidence: dict[str, Any]) -> Case:
    raw = {"id": "x-neighbours", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "evidence": list(evidence), "expect": {"healthy": True}}
    return msgspec.convert(raw, Case)


RUNTIME_DOWN = {"kind": "node-condition", "type": "Ready", "status": "False", "reason": "KubeletNotReady",
                "message": "container runtime is down"}


def _containerd(version: str) -> dict[str, Any]:
    return {"kind": "node-info", "fields": {"containerRuntimeVersion": f"containerd://{version}"}}


def _toolkit(**state: Any) -> dict[str, Any]:
    return {"kind": "pod-state", "component": "container-toolkit", **state}


def test_a_runtime_down_while_the_toolkit_keeps_failing_is_the_toolkit_s() -> None:
    # NVIDIA/gpu-operator#2646: containerd 2.3.2, the toolkit pod restarted 149 times (exit
    # 255) and the node stayed NotReady; the toolkit's edit of containerd's config was why
    found = top_pair(_case(_containerd("2.3.2"), RUNTIME_DOWN,
                       _toolkit(state="CrashLoopBackOff", restarts=149, exit_code=255)))
    assert found == ("container-toolkit", "containerd_config_version_mismatch")


def test_on_containerd_1_the_toolkit_s_failure_is_its_crash_loop() -> None:
    found = top_pair(_case(_containerd("1.7.27"), RUNTIME_DOWN,
                       _toolkit(state="CrashLoopBackOff", restarts=12, exit_code=1)))
    assert found is not None and found[0] == "container-toolkit"


def test_a_runtime_down_beside_a_toolkit_that_never_failed_stays_the_runtime_s() -> None:
    # look-alike: PLEG / runtime down with every pod as it was (the toolkit ran and never restarted)
    found = top_pair(_case(_containerd("2.0.5"), RUNTIME_DOWN))
    assert found == ("container-runtime", "container_runtime_down")


def test_a_toolkit_that_restarts_while_the_runtime_is_up_is_not_read_as_taking_it_down() -> None:
    found = top_pair(_case(_containerd("2.0.5"), _toolkit(state="CrashLoopBackOff", restarts=3, exit_code=1)))
    assert found is not None and found[0] == "container-toolkit"
    assert found[1] != "containerd_config_version_mismatch"

