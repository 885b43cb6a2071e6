"""A DCGM call's failure read by its numeric status (dcgmReturn_t, dcgm_structs.h, as go-dcgm
repeats it): no data, stale data and a field not watched (-14, -15, -16) are the state of the
caller's own request, which no class of a failing part fits; a lost GPU or one that needs a reset
(-18, -19) stays the device's; a code outside the table keeps the reading of the line's words.

Source: NVIDIA/dcgm-exporter#317 (the clock-events collector querying a field group it did not
watch on a MIG GPU: "dcgmGetValuesSince_v2 failed with error code -16")."""

from __future__ import annotations

import pytest

from gpunode.kb import load_kb

READ_BY_CODE = {
    'Failed to gather clock event" error="dcgmGetValuesSince_v2 failed with error code -16"': None,
    "dcgmGetValuesSince_v2 failed with error code -14": None,
    "dcgmGetLatestValues failed with error code -17": "error_permission_denied",
    "dcgmGetValuesSince_v2 failed with error code -18": "error_device",
}

LOOK_ALIKES = {
    # a code outside the table: the words decide, as before
    "dcgmGetValuesSince_v2 failed with error code -3": "error_device",
    # the same number from another program is no DCGM status
    "cuMemAlloc failed with error code -16: out of memory": "error_resource_exhausted",
}


@pytest.mark.parametrize("line", sorted(READ_BY_CODE))
def test_a_dcgm_status_is_read_by_its_table(line: str) -> None:
    assert load_kb().class_of(line) == READ_BY_CODE[line]


@pytest.mark.parametrize("line", sorted(LOOK_ALIKES))
def test_other_codes_keep_their_words(line: str) -> None:
    assert load_kb().class_of(line) == LOOK_ALIKES[line]
