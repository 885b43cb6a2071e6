"""A GPU workload's start failure relays the OCI hook's whole error chain in one waiting
message (the kubelet joins its lines), often longer than the line a report shows. The
report clips its middle, which may hold the words a catalogued signature needs (the
``nvidia-container-cli:`` that names the hook); the whole line as read is tried against the
signatures first, as for a stack pod's own lines. Each chain comes from a public report (its
address beside it)."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import top_pair

from gpunode.decisive import SHOWN_LINE

_CHAIN = ("failed to create shim task: OCI runtime create failed: runc create failed: unable to start "
          "container process: error during container init: error running hook #0: error running hook: "
          "exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n")

#: NVIDIA/nvidia-docker#1551 (WSL2: the image ships libnvidia-ml.so.1)
_WSL2_ML = ("nvidia-container-cli: mount error: file creation failed: /var/lib/docker/overlay2/"
            "706b1d1b6de681b6daf1cab979336a9d465d9b333962cc17db663f2e334d5776/merged/usr/lib/"
            "x86_64-linux-gnu/libnvidia-ml.so.1: file exists: unknown.")
#: NVIDIA/nvidia-docker#825 (the image ships nvidia-smi)
_SMI = ("nvidia-container-cli: mount error: file creation failed: /var/lib/docker/overlay2/"
        "bd4f3570d4eb99d9df1117bd3751a00c8c0eb63429e65eba2a196c6c543cc52f/merged/usr/bin/nvidia-smi: "
        "file exists")
#: NVIDIA/nvidia-container-toolkit#295 (L4T: the image ships the fatbinary loader)
_L4T = ("nvidia-container-cli: mount error: file creation failed: /var/lib/docker/overlay2/"
        "2a1a1c3555109e20c5ba2e386cc3ce69cbb80c3850663c1909db8c46ed565c0c/merged/usr/lib/"
        "aarch64-linux-gnu/libnvidia-fatbinaryloader.so.440.18: file exists")
#: NVIDIA/libnvidia-container#125 (enroot: the CLI may not create the device file there)
_EPERM = ("nvidia-container-cli: mount error: file creation failed: /scratch/pbs/enroot-data/"
          "user-613.chas052/lammps/dev/nvidia-uvm-tools: operation not permitted")


def _starting(message: str) -> Case:
    workload = {"kind": "workload", "name": "htr", "namespace": "default", "state": "RunContainerError",
                "message": message}
    raw: dict[str, Any] = {"id": "x-chain", "source": "https://example.org/x", "title": "t",
                           "platform": "docker", "cluster": {"driver_mode": "host"},
                           "evidence": [workload], "expect": {"healthy": True}}
    return msgspec.convert(raw, Case)


def test_an_image_shipping_driver_files_is_read_through_a_long_chain() -> None:
    for line in (_WSL2_ML, _SMI, _L4T):
        message = _CHAIN + line
        assert len(message) > SHOWN_LINE  # the report clips it
        assert top_pair(_starting(message)) == ("container-toolkit", "container_image_ships_driver_files")


def test_a_file_the_cli_may_not_create_stays_a_refusal() -> None:
    # the same step failing for another reason is not the image's copy of the file
    found = top_pair(_starting(_CHAIN + _EPERM))
    assert found == ("container-toolkit", "error_permission_denied")
