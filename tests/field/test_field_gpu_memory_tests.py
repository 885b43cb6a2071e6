"""A GPU memory tester's own count of memory errors in a pod's log is the GPU's hardware: the
tester writes patterns to the board's memory and reads them back, so errors it counts are the
board's, as the driver's ECC report is (a count of zero is a passing test). memtestG80's
iteration and final lines (https://github.com/ihaque/memtestG80/blob/master/memtestG80_cli.cu);
testers exist to find faulty video memory (https://github.com/GpuZelenograd/memtest_vulkan,
its README); the line from https://github.com/openmm/openmm/issues/2026."""

from __future__ import annotations

import pytest
from case import gpu_job_case, running_job_case
from scoreboard import top_pair


@pytest.mark.parametrize("line", [
    "Test iteration 50 (GPU 0, 128 MiB): 45528 errors so far",
    "Final error count after 50 iterations over 128 MiB of GPU memory: 45528 errors",
])
def test_a_memory_tester_counting_errors_is_the_gpu(line: str) -> None:
    assert top_pair(running_job_case("x-memtest", line)) == ("gpu-hardware", "error_device")
    assert top_pair(gpu_job_case("x-memtest-crash", line)) == ("gpu-hardware", "error_device")


@pytest.mark.parametrize("line", [
    "Test iteration 50 (GPU 0, 128 MiB): 0 errors so far",
    "Final error count after 50 iterations over 128 MiB of GPU memory: 0 errors",
    "\tMoving Inversions (ones and zeros): 0 errors (18 ms)",
])
def test_a_passing_memory_test_is_healthy(line: str) -> None:
    assert top_pair(running_job_case("x-memtest-ok", line)) is None


def test_a_program_s_own_error_count_is_not_the_gpu() -> None:
    # a parser's or a trainer's "errors so far" says nothing of the GPU's memory
    found = top_pair(running_job_case("x-other-errors", "Epoch 3: 12 errors so far in validation"))
    assert found is None or found[0] != "gpu-hardware"
