"""A line that opens on its own error keeps it whatever level a relayed program's line further on
carries: runc relays an OCI hook's stderr into its error chain, and the kubelet or Docker relays
that chain, so "Error: ... error running hook #1: ... stderr: time=... level=info msg=..." is a
failed container start, not an info line (NVIDIA/nvidia-container-toolkit#795, where the hook's
info line came before its level=error line). A program's own line whose level key comes first
keeps that level."""

from __future__ import annotations

import pytest

from gpunode.decisive import severity

_CHAIN = ("failed to create shim task: OCI runtime create failed: runc create failed: unable to start "
          "container process: error during container init: error running hook #1: error running hook: "
          "exit status 1, stdout: , stderr: ")
#: NVIDIA/nvidia-container-toolkit#795, as the kubelet's Failed event gives it
TOOLKIT_795 = ("Error: failed to create task for container: " + _CHAIN
               + 'time="2024-11-21T16:37:37-03:00" level=info msg="Symlinking /mnt/storage/docker/x"')
#: the same chain as Docker's client prints it (the relayed line an info one)
DOCKER_FORM = ("docker: Error response from daemon: " + _CHAIN
               + 'time="2025-07-31T02:44:37Z" level=info msg="Symlinking /etc/vulkan/icd.d/nvidia_icd.json"')


@pytest.mark.parametrize("line", [TOOLKIT_795, DOCKER_FORM])
def test_a_relayed_info_line_does_not_quiet_the_outer_error(line: str) -> None:
    assert severity(line) >= 1


def test_the_opening_error_prefix_keeps_its_explicit_level() -> None:
    assert severity(TOOLKIT_795) == 2


@pytest.mark.parametrize("line", [
    # a program's own info line that quotes an error word stays below an explicit error
    'time="2024-11-21T16:37:37Z" level=info msg="Error: nothing to do, skipping"',
    'time="2024-11-21T16:37:37Z" level=info msg="Symlinking /usr/lib/libcuda.so"',
])
def test_a_programs_own_level_key_still_decides(line: str) -> None:
    assert severity(line) <= 1
