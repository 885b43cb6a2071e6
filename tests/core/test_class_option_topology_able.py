"""Three readings of a decisive line's class: an option whose value the program refuses
('Invalid ranged device option', dcgm-exporter's --devices parser) and a configured socket
layout the GPUs' affinity does not fit (Slurm's GRES check) are configuration errors; 'we
weren't able to find that lib' (Slurm's GRES autodetection built without NVML) is a lookup
that found nothing; DCGM's 'Couldn't load a definition for <entry point>' is a symbol one
piece does not export for another, a version mismatch. Look-alikes with the same words in a
healthy or other sense keep theirs."""

from __future__ import annotations

import pytest

from gpunode.kb import load_kb

KB = load_kb()


@pytest.mark.parametrize(
    ("line", "cls"),
    [
        # NVIDIA/dcgm-exporter#3: two ranges given to --devices
        ("FATA[0000] Invalid ranged device option 'g:2,3,i:0': there can only be one specified range",
         "error_config_invalid"),
        ("invalid ranged device option 'g:0:1'; err: there can only be one specified range",
         "error_config_invalid"),
        ("error: unknown sharing option \"exclusive\"", "error_config_invalid"),
        # slurm.schedmd.com gres.html, "Socket Affinity Configuration"
        ("error: _check_core_range_matches_sock: gres/gpu GRES autodetected core affinity 0-7 on node "
         "node0 doesn't match socket boundaries. (Socket 0 is cores 0-1)", "error_config_invalid"),
        ("Reason=gres/gpu GRES core specification 12-15 doesn't match socket boundaries. "
         "(Socket 0 is cores 0-16)", "error_config_invalid"),
        ("error: Node configuration differs from hardware: CPUs=64:128(hw) Boards=1:1(hw)",
         "error_config_invalid"),
        # NVIDIA/deepops#1214: slurmd built without the NVML headers
        ("fatal: We were configured to autodetect nvml functionality, but we weren't able to find "
         "that lib when Slurm was configured", "error_not_found"),
        ("fatal: We were configured to autodetect NPU functionality, but we weren't able to find that "
         "lib when Slurm was configured.", "error_not_found"),
        # DCGM 3.1 release notes (fixed in 3.1.6): a diag plugin without the entry point the
        # diag engine loads
        ("Couldn't load a definition for GetPluginInterfaceVersion in plugin", "error_version_mismatch"),
        ("Couldn't load a definition for dcgmInit from libdcgm.so.3: 'undefined'", "error_version_mismatch"),
    ],
)
def test_class(line: str, cls: str) -> None:
    assert KB.class_of(line) == cls


@pytest.mark.parametrize(
    ("line", "cls"),
    [
        # a refused option with a missing file keeps the file's class
        ("invalid config option: open /etc/dcgm-exporter/default-counters.csv: no such file or directory",
         "error_file_state"),
        # a version that does not match is a mismatch, not a layout
        ("driver version 535.104 doesn't match the library version 550.54", "error_version_mismatch"),
    ],
)
def test_look_alike_keeps_its_class(line: str, cls: str) -> None:
    assert KB.class_of(line) == cls


@pytest.mark.parametrize(
    "line",
    [
        "gres/gpu: GRES autodetected core affinity 0-7 matches socket boundaries",
        "Option 'g:2' accepted: watching 1 GPU",
        "We were able to find libnvidia-ml.so.1 and loaded the gpu/nvml plugin",
        "Loaded a definition for GetPluginInterfaceVersion in plugin libpluginDiag.so",
    ],
)
def test_healthy_lines_are_no_class(line: str) -> None:
    assert KB.class_of(line) in (None, "error_unclassified")
