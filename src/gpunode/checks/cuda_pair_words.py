"""A GPU job's own line that names the CUDA version of its runtime and of the driver it loaded.

Programs print the pair after asking both (cudaRuntimeGetVersion, cudaDriverGetVersion):
CUDA's deviceQuery sample "CUDA Driver Version / Runtime Version 12.2 / 12.1"
(cuda-samples deviceQuery.cpp), PaddlePaddle's "Please NOTE: device: 0, GPU Compute
Capability: 8.6, Driver API Version: 11.4, Runtime API Version: 11.2" (gpu_context.cc,
device_context.cc), NVIDIA Warp's "Warp 1.7.1 initialized: / CUDA Toolkit 12.8, Driver 12.8"
(warp/context.py). Drivers run every older CUDA
(https://docs.nvidia.com/deploy/cuda-compatibility/), so where the driver's number is at or
above the runtime's, the driver is not too old for this job: a "requires a newer driver" or
"insufficient driver" verdict in the same log is the job library's own (NVIDIA/warp#940:
Warp 1.7.1 probing an entry point an R580 driver no longer exports).
"""

from __future__ import annotations

from collections.abc import Iterable

from gpunode.relazy import lazy_compile

_VERSION = r"(?P<{}>\d{{1,2}}\.\d{{1,2}})"
#: The pair as each program prints it.
_PAIR = lazy_compile(
    r"\bCUDA Driver Version / Runtime Version\s+" + _VERSION.format("driver") + r"\s*/\s*"
    + _VERSION.format("runtime")
    + r"|\bDriver API Version: " + _VERSION.format("driver2") + r", Runtime API Version: "
    + _VERSION.format("runtime2")
    + r"|\bCUDA Toolkit " + _VERSION.format("runtime3") + r", Driver " + _VERSION.format("driver3") + r"\b")


def _pair(text: str) -> tuple[int, int]:
    major, minor = text.split(".")
    return int(major), int(minor)


def driver_serves_runtime(lines: Iterable[str]) -> bool:
    """Whether a line of the job names its runtime's and its driver's CUDA versions, the
    driver's at or above the runtime's."""
    for line in lines:
        said = _PAIR.search(line) if "ersion" in line or "Driver" in line else None
        if said is None:
            continue
        driver = str(said["driver"] or said["driver2"] or said["driver3"])
        runtime = str(said["runtime"] or said["runtime2"] or said["runtime3"])
        if _pair(driver) >= _pair(runtime):
            return True
    return False


#: XLA's warning where the driver's CUDA version is older than the CUDA of the PTX compiler it
#: was built with (xla/service/gpu nvptx_compiler: "The NVIDIA driver's CUDA version is 12.2
#: which is older than the PTX compiler version 12.6.77. Because the driver is older than the
#: PTX compiler version, XLA is disabling parallel compilation ...", and its older form "...
#: older than the ptxas CUDA version (11.6.55)"). It quotes the driver's CUDA version as
#: cuDriverGetVersion gave it and the compiler's.
_DRIVER_OLDER = lazy_compile(
    r"\bThe NVIDIA driver's CUDA version is " + _VERSION.format("driver")
    + r"(?:\.\d+)? which is older than the (?:PTX compiler|ptxas CUDA) version \(?"
    + _VERSION.format("compiler"))


def driver_older_than_compiler(line: str) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """The driver's and the compiler's CUDA versions where ``line`` is XLA's word that the
    driver is older than its PTX compiler, the driver's below the compiler's; else None."""
    said = _DRIVER_OLDER.search(line) if "older than the" in line else None
    if said is None:
        return None
    driver, compiler = _pair(str(said["driver"])), _pair(str(said["compiler"]))
    return (driver, compiler) if driver < compiler else None
