"""A MIG mode change pending a GPU reset, read in nvidia-smi's table: the MIG M. cell of a GPU
shows the pending mode with an asterisk ("Enabled*") after ``nvidia-smi -mig 1`` met a GPU held
by another client, until the GPU is reset or the node rebooted (NVIDIA/k8s-device-plugin#343,
NVIDIA/gpu-operator#1845; the hello-k8s A30 notes). The settled modes ("Enabled", "Disabled")
are no pending change."""

from __future__ import annotations

from typing import Any

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

TABLE = """\
+---------------------------------------------------------------------------------------+
| NVIDIA-SMI 535.183.01             Driver Version: 535.183.01   CUDA Version: 12.2     |
|-----------------------------------------+----------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |
|                                         |                      |               MIG M. |
|=========================================+======================+======================|
|   0  NVIDIA A30                     Off | 00000000:0B:00.0 Off |                    0 |
| N/A   49C    P0              43W / 165W |      0MiB / 24576MiB |      0%      Default |
|                                         |                      |             {mode} |
+-----------------------------------------+----------------------+----------------------+
"""


def _node(mode: str) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "node-cmd", "name": "nvidia-smi.txt", "text": TABLE.format(mode=mode)}]
    return synthetic_case("x-mig-table", evidence, healthy=False,
                          cluster={"driver_mode": "host", "gpu_node": {"gpu": "NVIDIA A30", "gpus": 1}})


@pytest.mark.parametrize("mode", ["Enabled*", "Disabled*"])
def test_a_starred_mig_mode_is_a_change_pending_a_reset(mode: str) -> None:
    assert top_pair(_node(f"{mode:>8}")) == ("gpu-hardware", "mig_mode_change_pending")


@pytest.mark.parametrize("mode", [" Enabled", "Disabled", "     N/A"])
def test_a_settled_mig_mode_is_no_pending_change(mode: str) -> None:
    top = top_pair(_node(mode))
    assert top is None or top[1] != "mig_mode_change_pending", top
