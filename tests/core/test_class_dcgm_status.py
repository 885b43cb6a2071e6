"""DCGM's own status texts for a GPU it will not or cannot serve are the device class, whatever
the caller writes before them (DCGM's errorString and go-dcgm's table: DCGM_ST_GPU_NOT_SUPPORTED,
DCGM_ST_RESET_REQUIRED, DCGM_ST_GPU_IS_LOST). dcgm-exporter 3.1.3 ending on "Error adding GPU 1
to group: This GPU is not supported by DCGM": NVIDIA/DCGM#61. DCGM's connection text stays the
network's, and a driver that supports a GPU says nothing failed."""

from __future__ import annotations

import pytest

from gpunode.kb import load_kb


@pytest.mark.parametrize("line", [
    "FATA[0000] Error adding GPU 1 to group: This GPU is not supported by DCGM",
    "Error watching fields: GPU requires reset",
    'level=error msg="failed to get device info" err="GPU is unreachable"',
])
def test_dcgm_device_status_is_the_device_class(line: str) -> None:
    assert load_kb().class_of(line) == "error_device"


@pytest.mark.parametrize(("line", "cls"), [
    ("Error connecting to nv-hostengine: Host engine connection invalid/disconnected", "error_unreachable"),
    ("INFO[0000] GPU 1 is supported by DCGM", None),
])
def test_look_alikes_keep_their_class(line: str, cls: str | None) -> None:
    assert load_kb().class_of(line) == cls
