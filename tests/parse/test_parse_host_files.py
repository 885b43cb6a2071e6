"""/proc/modules, lsmod and /proc/driver/nvidia/version."""

from __future__ import annotations

import pytest
from node_fixtures import read_fixture

from gpunode.errors import ParseError
from gpunode.parse.driver_version import parse_proc_driver_version
from gpunode.parse.modules import parse_modules

LSMOD = """Module                  Size  Used by
nvidia_uvm           1982464  4
nvidia_drm            122880  0
nvidia_modeset       1355776  1 nvidia_drm
nvidia_peermem         16384  0
nvidia              54308864  98 nvidia_uvm,nvidia_peermem,nvidia_modeset
ib_uverbs             184320  3 nvidia_peermem,rdma_ucm,mlx5_ib
mlx5_core            2162688  1 mlx5_ib
"""

PROC_MODULES = """nvidia_peermem 16384 0 - Live 0xffffffffc1a2d000 (POE)
nvidia_uvm 1982464 4 - Live 0xffffffffc17d1000 (POE)
nvidia 54308864 98 nvidia_peermem,nvidia_uvm,nvidia_modeset, Live 0xffffffffbe000000 (POE)
nouveau 2899968 0 - Loading 0xffffffffc0c00000
"""


def test_recorded_h200_proc_modules() -> None:
    modules = parse_modules(read_fixture("h200-vm", "proc-modules.txt"))
    assert set(modules) == {"nvidia", "nvidia_uvm"}
    nvidia = modules["nvidia"]
    assert (nvidia.size, nvidia.refcount, nvidia.used_by, nvidia.state) == (
        14299136,
        None,
        (),
        "Live",
    )


def test_lsmod_output() -> None:
    modules = parse_modules(LSMOD)
    assert "Module" not in modules
    assert modules["nvidia"].refcount == 98
    assert modules["nvidia"].used_by == ("nvidia_uvm", "nvidia_peermem", "nvidia_modeset")
    assert modules["nvidia_drm"].used_by == ()
    assert modules["mlx5_core"].state is None


def test_proc_modules_with_trailing_comma_and_states() -> None:
    modules = parse_modules(PROC_MODULES)
    assert modules["nvidia"].used_by == ("nvidia_peermem", "nvidia_uvm", "nvidia_modeset")
    assert modules["nouveau"].state == "Loading"
    assert modules["nvidia_uvm"].refcount == 4


@pytest.mark.parametrize("text", ["nvidia\n", "nvidia big 0 - Live\n", "Module Size\nfoo x 1\n"])
def test_malformed_modules(text: str) -> None:
    with pytest.raises(ParseError):
        parse_modules(text)


def test_recorded_open_module_version() -> None:
    version = parse_proc_driver_version(read_fixture("h200-vm", "proc-driver-nvidia-version.txt"))
    assert (version.version, version.kernel_module_type, version.gcc) == (
        "580.159.04",
        "open",
        "15.3.0",
    )


def test_proprietary_module_version() -> None:
    text = (
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 UTC 2024\n"
        "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04) \n"
    )
    version = parse_proc_driver_version(text)
    assert (version.version, version.kernel_module_type, version.gcc) == (
        "535.183.01",
        "proprietary",
        "12.3.0",
    )


def test_open_module_on_arm() -> None:
    text = (
        "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  570.133.20  Release Build"
        "  (dvs-builder@U16-I2-C04-35-2)  Fri Feb 28 23:51:32 UTC 2025\n"
    )
    version = parse_proc_driver_version(text)
    assert (version.version, version.kernel_module_type, version.gcc) == (
        "570.133.20",
        "open",
        None,
    )


@pytest.mark.parametrize(
    "text", ["", "GCC version:  gcc version 12.3.0\n", "NVRM version: garbage\n"]
)
def test_malformed_driver_version(text: str) -> None:
    with pytest.raises(ParseError):
        parse_proc_driver_version(text)
