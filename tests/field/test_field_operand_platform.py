"""A device plugin or GFD that asks for the NVIDIA runtime and finds no GPU platform in its
container ("failed to create resource manager: unsupported strategy auto", k8s-device-plugin's
resource factory), on a node whose driver answers nvidia-smi, is the injecting layer's: the
container toolkit's, class not found (rwlove/home-ops#14313). The same crash where the pod asks
no RuntimeClass, or a GFD that logs the NVML manager it picked, says nothing of the toolkit's."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.checks.operand_platform import NO_PLATFORM

LINE = "failed to create resource manager: unsupported strategy auto"


def _case(text: str, *, crash: bool = True, smi_fails: bool = False) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "log", "component": "gfd", "container": "gpu-feature-discovery", "previous": crash,
         "text": text + "\n"}]
    if crash:
        evidence.append({"kind": "pod-state", "component": "gfd", "state": "CrashLoopBackOff"})
    if smi_fails:
        evidence.append({"kind": "node-cmd", "name": "nvidia-smi.txt", "text":
                         "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"})
    return synthetic_case("x-operand-platform", evidence, cluster={"driver_mode": "host", "cdi": True})


def test_no_platform_under_nvidia_runtime_is_the_toolkits() -> None:
    assert top_pair(_case(LINE)) == ("container-toolkit", "error_not_found")


def test_same_crash_where_the_driver_does_not_answer_is_not_the_toolkits() -> None:
    top = top_pair(_case(LINE, smi_fails=True))
    assert top is not None and top[0] != "container-toolkit"


def test_nvml_manager_picked_is_no_alarm() -> None:
    assert top_pair(_case("I1208 00:00:01.000000 1 factory.go:51] Using NVML manager", crash=False)) is None


def test_shape() -> None:
    assert NO_PLATFORM.search(LINE)
    assert NO_PLATFORM.search("E0506 17:45:45.421956 1 factory.go:112] Incompatible strategy detected auto")
    assert not NO_PLATFORM.search("unsupported strategy mixed")
    assert not NO_PLATFORM.search("Using NVML manager")
