"""A GPU job that says its container has no driver, nvidia-smi or GPU, read by the runtime the
pod started under.

Under plain runc (no RuntimeClass, NVIDIA's runtime not the default) the words say the runtime's
default is the fault (nvidia_not_default_runtime). Under NVIDIA's runtime (a RuntimeClass whose
handler is NVIDIA's, or NVIDIA's runtime as the default) the runtime did run, and its hook or CDI
spec left the GPU out: the toolkit's, with the line's class (NVIDIA/aicr#1354: the toolkit told
to refuse NVIDIA_VISIBLE_DEVICES from unprivileged containers, 'nvidia-smi: not found')."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

NO_SMI = "bash: nvidia-smi: command not found"
NO_LIBCUDA = ("ImportError: libcuda.so.1: cannot open shared object file: No such file or directory")


def _case(line: str, runtime_class: str | None = "nvidia") -> Case:
    workload: dict[str, Any] = {"kind": "workload", "name": "smoke", "namespace": "default",
                                "state": "Error", "exit_code": 127}
    if runtime_class is not None:
        workload["runtimeClassName"] = runtime_class
    evidence: list[dict[str, Any]] = [
        workload,
        {"kind": "log", "object": {"kind": "Pod", "name": "smoke", "namespace": "default"},
         "text": line + "\n"}]
    return synthetic_case("x-not-injected", evidence, cluster={"driver_mode": "host"})


def test_no_nvidia_smi_under_nvidia_runtime_is_the_toolkit() -> None:
    assert top_pair(_case(NO_SMI)) == ("container-toolkit", "error_not_found")


def test_no_driver_library_under_nvidia_runtime_is_the_toolkit() -> None:
    top = top_pair(_case(NO_LIBCUDA))
    assert top is not None and top[0] == "container-toolkit"
    assert top[1] != "nvidia_not_default_runtime"


def test_plain_runc_keeps_the_default_runtime_reading() -> None:
    assert top_pair(_case(NO_SMI, runtime_class=None)) == ("container-toolkit", "nvidia_not_default_runtime")


def test_a_job_that_found_its_gpu_stays_healthy() -> None:
    banner = "Tue Dec  1 10:00:00 2026\n| NVIDIA-SMI 550.54.15   Driver Version: 550.54.15 |"
    assert top_pair(_case(banner)) is None
