"""GPUDirect Storage's nvidia-fs kernel module failing a GPU IO in its own words
("nvidia-fs:write IO failed :-14", printed under its "nvidia-fs:" prefix by the module's
nvfs_err): the driver's, read like the driver's other modules' lines. The module's notices
under the same prefix (its debug log of an ioctl map and munmap, its start) say no failure.

Sources: NVIDIA/gds-nvidia-fs src/nvfs-core.h (nvfs_msg: DEVICE_NAME ":" before every
message), NVIDIA/gds-nvidia-fs#26 ("nvidia-fs:write IO failed :-512" on writes to an NFS over
RDMA mount), NVIDIA/gds-nvidia-fs#46 (the module's debug notices)."""

from __future__ import annotations

from case import synthetic_case
from scoreboard import top_pair


def _dmesg(text: str) -> list[dict[str, object]]:
    return [{"kind": "node-cmd", "name": "dmesg.txt", "text": text}]


def test_a_failed_gpu_io_is_the_driver_s() -> None:
    # https://github.com/NVIDIA/gds-nvidia-fs/issues/26
    text = ("[192745.286125] nvidia_fs: Initializing nvfs driver module\n"
            "[192800.100000] nvidia-fs:write IO failed :-512\n")
    assert top_pair(synthetic_case("nvfs-io-failed", _dmesg(text), healthy=False)) == (
        "driver", "error_unclassified")


def test_the_module_s_notices_say_nothing() -> None:
    # https://github.com/NVIDIA/gds-nvidia-fs/issues/46
    text = ("[  938.530342] nvidia-fs:nvfs ioctl map success\n"
            "[  938.540761] nvidia-fs:NVFS VMA close vma:00000000dd88f1d2 nvfs_mgroup 000000000b447889\n"
            "[  938.540768] nvidia-fs:munmap invoked - IO state TERMINATED 5 5\n")
    assert top_pair(synthetic_case("nvfs-notices", _dmesg(text), healthy=True)) is None


def test_a_gpl_only_module_refused_by_the_proprietary_driver_needs_the_open_one() -> None:
    # https://github.com/NVIDIA/gds-nvidia-fs/issues/34 (nvidia-fs 2.17.5+ is restricted to the
    # open kernel module, its ChangeLog); the kernel's inherit_taint words
    text = ("[Jan18 08:23] nvidia_fs: module using GPL-only symbols uses symbols from proprietary "
            "module nvidia.\n"
            "[  +0.000031] nvidia_fs: Unknown symbol nvidia_p2p_get_pages (err -2)\n")
    assert top_pair(synthetic_case("nvfs-proprietary", _dmesg(text), healthy=False)) == (
        "driver", "open_kernel_modules_required")


def test_the_proprietary_driver_s_own_taint_and_another_module_s_refusal_say_nothing_of_it() -> None:
    # the proprietary module tainting the kernel at load is every such node's line; a GPL-only
    # module refused for another vendor's proprietary module is not the GPU driver's flavour
    text = ("[    5.100000] nvidia: module license 'NVIDIA' taints kernel.\n"
            "[    5.100100] Disabling lock debugging due to kernel taint\n"
            "[    6.200000] foo_gpl: module using GPL-only symbols uses symbols from proprietary "
            "module acme.\n")
    assert top_pair(synthetic_case("nvfs-taint-lookalike", _dmesg(text), healthy=True)) is None
