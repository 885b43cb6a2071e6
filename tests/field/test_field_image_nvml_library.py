"""A GPU job's NVML "Driver/library version mismatch", settled by the node's facts: where the
host's own nvidia-smi answers and the library the job loaded ("NVML library version: X") is a
newer release than the host's driver, the library is not the host's one the NVIDIA runtime
mounts, the image ships its own (container-toolkit, container_image_ships_driver_files). An
older library (a container started before a driver upgrade, NVIDIA/nvidia-docker#737) and a
host whose own nvidia-smi fails the same way stay the driver's mismatch.

Public lines: k4yt3x/video2x#1226 ("NVML library version: 565.57" in the image, host driver
535), NVIDIA/libnvidia-container#266 (the image's libnvidia-ml.so.525.105.17 on a host below
525: "Failed to initialize NVML: Driver/library version mismatch"). The corpus's host
driver is 570.133.20 (the builder's nvidia-smi).
"""

from __future__ import annotations

from typing import Any

import pytest
from case import gpu_job_case, synthetic_case
from scoreboard import top_pair

MISMATCH = "Failed to initialize NVML: Driver/library version mismatch"
#: k4yt3x/video2x#1226 as the job printed it (the image's library, 565.57, is newer than its
#: host's 535; here newer than the builder's 570.133.20 by the same reading: 610.43, 580.65).
NEWER = [f"{MISMATCH}\nNVML library version: 610.43", f"{MISMATCH}\nNVML library version: 580.65"]
#: Look-alikes: a library older than the host's driver (NVIDIA/nvidia-docker#737: a container
#: from before the upgrade), the same release, no version printed.
NOT_NEWER = [f"{MISMATCH}\nNVML library version: 565.57", f"{MISMATCH}\nNVML library version: 570.133",
             MISMATCH]


@pytest.mark.parametrize("text", NEWER)
def test_a_job_library_newer_than_the_answering_host_driver_is_the_images(text: str) -> None:
    expected = ("container-toolkit", "container_image_ships_driver_files")
    assert top_pair(gpu_job_case("image-nvml", text)) == expected


@pytest.mark.parametrize("text", NOT_NEWER)
def test_an_older_or_unversioned_job_library_stays_the_drivers(text: str) -> None:
    assert top_pair(gpu_job_case("driver-nvml", text)) == ("driver", "driver_library_mismatch")


def test_a_host_whose_own_nvidia_smi_fails_the_same_way_stays_the_drivers() -> None:
    # look-alike: the host's module and libraries at two releases (the corpus's AKS 570/580 pair)
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "job-0", "namespace": "default", "container": "main",
         "resources": {"limits": {"nvidia.com/gpu": "1"}}, "state": "CrashLoopBackOff", "restarts": 2,
         "exit_code": 1},
        {"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
         "container": "main", "text": NEWER[0] + "\n"},
        {"kind": "node-cmd", "name": "nvidia-smi.txt", "text": f"{MISMATCH}\nNVML library version: 610.43\n"}]
    assert top_pair(synthetic_case("host-nvml", evidence, healthy=False))[0] == "driver"
