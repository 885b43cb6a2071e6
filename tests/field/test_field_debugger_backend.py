"""CUDA-GDB's words for a debugger back-end it cannot load in a GPU job's log. Since CUDA 11.8
and the R520 driver the back-end is the driver's libcudadebugger.so.1, one of the compute
libraries the toolkit injects into a GPU container (libnvidia-container's compute_libs,
https://github.com/NVIDIA/libnvidia-container/blob/main/src/nvc_info.c; Apptainer's
nvliblist.conf, https://github.com/apptainer/apptainer/blob/main/etc/nvliblist.conf): its
absence is the injection's, the not-found class. Lines from public reports (address beside
each); the look-alikes are cuda-gdb's ordinary lines and the same library found."""

from __future__ import annotations

import pytest
from case import gpu_job_case, running_job_case
from scoreboard import top_pair

MISSING = (
    # https://github.com/NVIDIA/cuda-python/issues/2711 (a board whose driver files lack the library)
    "Could not find CUDA Debugger back-end (libcudadebugger.so.1). Debugging is not possible",
    # https://github.com/apptainer/apptainer/issues/2261 (--nv without the library in its list)
    "Could not find CUDA Debugger back-end. Please try upgrading/re-installing the GPU driver",
)


@pytest.mark.parametrize("line", MISSING)
def test_a_debugger_back_end_cuda_gdb_cannot_find_is_the_injection(line: str) -> None:
    case = gpu_job_case("x-cuda-gdb", f"NVIDIA (R) cuda-gdb 12.4\n{line}")
    assert top_pair(case) == ("container-toolkit", "error_not_found")


@pytest.mark.parametrize("text", [
    # cuda-gdb's banner and a session that found its back-end
    "NVIDIA (R) cuda-gdb 12.4\nPortions Copyright (C) 2007-2024 NVIDIA Corporation\n"
    "[New Thread 0x7ffff5c3f000 (LWP 812)]\n[Detaching after fork from child process 813]",
    # the legacy back-end chosen on purpose (cms-sw/cmssw#42963's work-around)
    "export CUDBG_USE_LEGACY_DEBUGGER=1\nCUDA Debugger back-end: legacy",
])
def test_cuda_gdb_at_work_stays_healthy(text: str) -> None:
    assert top_pair(running_job_case("x-cuda-gdb-ok", text)) is None
