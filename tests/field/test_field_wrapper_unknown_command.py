"""A program refusing the command it was called for ("<program>: unknown command <name>": Talos's
toolkit extension wrapper, which dispatches on the name it runs under, asked to run as the CDI
spec's nvidia-cdi-hook; TheBranchDriftCatalyst/talos-homelab nvidia-ebpf-workaround.md) reads as
an error of the not-found class, and a pod that asks NVIDIA's runtime for GPUs by
NVIDIA_VISIBLE_DEVICES alone (no GPU resource, the runtime the node's default) is a GPU workload
whose failure names the toolkit. Look-alikes: the same pod running, one that asks for no GPU
(``void``), and a running program's line about unknown commands say nothing."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.decisive import severity

REFUSED = "nvidia-container-runtime-wrapper: unknown command nvidia-cdi-hook"


def _pod(visible: str, state: str) -> Case:
    return synthetic_case("x-wrapper", [
        {"kind": "workload", "name": "transcoder", "namespace": "media", "resources": {"limits": {}},
         "env": {"NVIDIA_VISIBLE_DEVICES": visible}, "state": state,
         **({"message": REFUSED} if state != "Running" else {})},
    ], healthy=state == "Running",
        cluster={"driver_mode": "host", "runtime": "containerd2", "cdi": True, "components": []})


def test_a_refused_command_reads_as_an_error() -> None:
    assert severity(REFUSED) > 0


@pytest.mark.parametrize("line", [
    "nvproxy: unknown control command 0x20803801 (paramsSize=1928)",
    "shell: unknown commands are listed by help",
])
def test_other_unknown_command_words_are_not_a_refusal(line: str) -> None:
    assert severity(line) == 0


def test_a_gpu_pod_by_environment_blames_the_toolkit_wrapper() -> None:
    assert top_pair(_pod("all", "RunContainerError")) == ("container-toolkit", "error_not_found")


@pytest.mark.parametrize(("visible", "state"), [("all", "Running"), ("void", "RunContainerError")])
def test_a_running_pod_or_one_asking_no_gpu_accuses_no_toolkit(visible: str, state: str) -> None:
    top = top_pair(_pod(visible, state))
    assert top is None or top[0] != "container-toolkit", top
