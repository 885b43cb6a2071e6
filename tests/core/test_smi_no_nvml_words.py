"""nvidia-smi's own message for an NVML it cannot load, with or without the "NVIDIA-SMI" it
starts with (quoted without it on jellyfin.org's hardware-acceleration page before 2023), is the
job table's smi-no-nvml: nvidia-smi ran, so the runtime's hook mounted it, and no libnvidia-ml is
beside it. Look-alikes: other programs' words for NVML not found, which are not nvidia-smi's."""

from __future__ import annotations

import pytest

from gpunode.checks.job_words import SMI_NO_NVML
from gpunode.job_errors import load_job_errors

TABLE = load_job_errors()


@pytest.mark.parametrize(
    "line",
    [
        "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA "
        "Display Driver is properly installed and present in your system.",
        "couldn't find libnvidia-ml.so library in your system",
    ],
)
def test_nvidia_smi_s_words_with_or_without_its_prefix(line: str) -> None:
    assert SMI_NO_NVML.search(line) is not None
    found = TABLE.read(line)
    assert found is not None and found.id == "smi-no-nvml"


@pytest.mark.parametrize(
    "line",
    [
        "Failed to initialize NVML: could not load NVML library",
        "WARN: Can't load NVML library, couldn't find libnvidia-ml.so",
        "We were configured to autodetect nvml functionality, but we weren't able to find that lib",
    ],
)
def test_other_programs_words_are_not_nvidia_smi_s(line: str) -> None:
    assert SMI_NO_NVML.search(line) is None
    found = TABLE.read(line)
    assert found is None or found.id != "smi-no-nvml"
