"""A GPU job's words for a container without the driver's libraries or a GPU are read on
every line of a workload's log: a literal test comes first, and it must let through every
line the pattern reads, whatever its case."""

from __future__ import annotations

from pathlib import Path

import pytest
from counting import Counting

from gpunode.checks import workload_logs
from gpunode.checks.workload_logs import says_no_gpu

#: Lines of each wording the pattern is documented to read.
SAID = (
    "ImportError: libcuda.so.1: cannot open shared object file: No such file or directory",
    ("Could not load dynamic library 'libnvidia-ml.so.1'; dlerror: libnvidia-ml.so.1: "
     "cannot open shared object file"),
    "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU",
    "CUDA error: CUDA_ERROR_NO_DEVICE",
    "cudaGetDeviceCount returned 100 (cudaErrorNoDevice)",
    "RuntimeError: no CUDA-capable device is detected",
    "Failed to initialize NVML: could not load NVML library",
    "Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND",
    "/bin/sh: 1: nvidia-smi: not found",
    "bash: nvidia-smi: command not found",
    "No devices were found",
    "RuntimeError: No CUDA GPUs are available",
    "INFO 01-01 00:00:00 platforms: No platform detected, vLLM is running on UnspecifiedPlatform",
    "NO GPU FOUND",
    "no NVIDIA devices found",
    "No accelerators available",
)

#: Healthy real node files (SOURCES.md): what the literal test mostly sees.
REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"


@pytest.mark.parametrize("line", SAID)
def test_every_documented_wording_passes_the_literal_test(line: str) -> None:
    assert says_no_gpu(line), line


def test_the_literal_test_loses_no_line_the_pattern_reads() -> None:
    lines = [line for path in sorted(REAL.rglob("*")) if path.is_file()
             for line in path.read_text(errors="replace").splitlines()]
    assert lines
    pattern = workload_logs._NO_GPU_IN_CONTAINER
    assert [line for line in lines if pattern.search(line)] == [line for line in lines if says_no_gpu(line)]


def test_lines_without_the_literals_skip_the_pattern(monkeypatch: pytest.MonkeyPatch) -> None:
    counting = Counting(workload_logs._NO_GPU_IN_CONTAINER)
    monkeypatch.setattr(workload_logs, "_NO_GPU_IN_CONTAINER", counting)
    quiet = ("INFO 2025-01-01 epoch 3 step 400 loss 1.732", "Using device cuda:0",
             "NCCL INFO NET/IB : No device found.", "Downloading model weights 4/8")
    assert not any(says_no_gpu(line) for line in quiet)
    assert counting.calls == 0
