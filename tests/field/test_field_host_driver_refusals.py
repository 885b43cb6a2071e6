"""A host driver that never loaded, read from the host's own words on why: the module loader's
refusal in the host's syslog (its class), the kernel's loader refusing a relocation type (the
toolchain the module was built with is not the kernel's), the kernel's IBT trap on the
driver's code (a release not built for this kind of kernel), an assembler that does not know
the kernel's build flags, a compile error in DKMS's tree, Portage's build log of Gentoo's
nvidia-drivers. Above them the toolkit waiting for the driver is blocked, not the cause.
Look-alikes stay silent: the same lines on a node whose driver is loaded, another module's
refusal or trap."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.checks.kernel import refused_module_owner
from gpunode.kb import load_kb


def _host(*evidence: dict[str, Any], loaded: bool = False) -> Case:
    return synthetic_case("x-host-driver-refused", list(evidence), healthy=False,
                          cluster={"driver_mode": "host", "gpu_node": {"driver_loaded": loaded}})


def _syslog(text: str) -> dict[str, Any]:
    return {"kind": "node-file", "path": "var/log/messages", "text": text}


def _dmesg(text: str) -> dict[str, Any]:
    return {"kind": "node-cmd", "name": "dmesg.txt", "text": text}


#: The AlmaLinux wiki's NVIDIA page: a kmod built for a newer kernel than the one running.
NO_DEVICE = ("Feb  4 11:43:46 gpu-node2 modprobe[812]: modprobe: ERROR: could not insert 'nvidia_drm': "
             "No such device\n")


def test_the_loader_s_refusal_in_syslog_is_the_driver_s_module_load_class() -> None:
    assert top_pair(_host(_syslog(NO_DEVICE))) == ("driver", "error_module_load")


def test_the_loader_s_refusal_elsewhere_says_nothing_of_the_driver() -> None:
    # look-alike: the driver serves its GPUs; a refused nvidia_drm there is not why it never loaded
    assert top_pair(_host(_syslog(NO_DEVICE), loaded=True)) != ("driver", "error_module_load")
    # look-alike: another module refused, on a node whose driver never loaded
    zfs = ("Feb  4 11:43:46 gpu-node2 modprobe[812]: modprobe: ERROR: could not insert 'zfs': "
           "Unknown symbol in module\n")
    assert top_pair(_host(_syslog(zfs))) != ("driver", "error_module_load")


def test_insmod_names_the_module_by_its_file() -> None:
    line = "insmod: ERROR: could not insert module .../nvidia-current.ko: Invalid module format"
    assert refused_module_owner(line) == "driver"
    other = "insmod: ERROR: could not insert module /lib/modules/zfs.ko: Invalid module format"
    assert refused_module_owner(other) is None
    assert refused_module_owner("modprobe: loaded module nvidia") is None


#: Debian's README.Debian of nvidia-kernel-dkms: a module built with another binutils than the kernel's.
RELA = "[   12.345678] module: nvidia: Unknown rela relocation: 4\n"
INSMOD = "insmod: ERROR: could not insert module .../nvidia-current.ko: Invalid module format\n"


def test_an_unknown_relocation_of_the_driver_s_module_is_the_toolchain_mismatch() -> None:
    assert top_pair(_host(_dmesg(RELA), _syslog(INSMOD))) == ("driver", "gcc_mismatch")
    assert load_kb().class_of("module: nvidia: Unknown rela relocation: 4") == "error_module_load"


def test_an_unknown_relocation_of_another_module_is_not_the_driver_s() -> None:
    other = "[   12.345678] module: vboxdrv: Unknown rela relocation: 42\n"
    assert top_pair(_host(_dmesg(other))) != ("driver", "gcc_mismatch")


#: NVIDIA/open-gpu-kernel-modules#256: Linux 5.18's IBT trap while nvidia.ko loads.
ENDBR = "[    9.876543] Missing ENDBR: _portMemAllocatorAllocNonPagedWrapper+0x0/0x10\n"


def test_the_ibt_trap_where_the_driver_never_loaded_is_the_release_not_fitting_the_kernel() -> None:
    assert top_pair(_host(_dmesg(ENDBR))) == ("driver", "driver_kernel_incompatible")
    named = "[    9.876543] Missing ENDBR: _nv012345rm+0x0/0x10 [nvidia]\n"
    assert top_pair(_host(_dmesg(named))) == ("driver", "driver_kernel_incompatible")


def test_the_ibt_trap_in_another_module_or_beside_a_loaded_driver_is_not_the_driver() -> None:
    other = "[    9.876543] Missing ENDBR: vbox_init+0x0/0x10 [vboxdrv]\n"
    assert top_pair(_host(_dmesg(other))) != ("driver", "driver_kernel_incompatible")
    assert top_pair(_host(_dmesg(ENDBR), loaded=True)) is None


def _make_log(text: str) -> dict[str, Any]:
    return {"kind": "node-file", "path": "var/lib/dkms/nvidia/440.59/build/make.log", "text": text}


#: clearlinux/distribution#1725: binutils 2.34 without an option the kernel's flags pass.
AS_OPTION = ("  CC [M]  /var/lib/dkms/nvidia/440.59/build/nvidia/nv-cray.o\n"
             "as: unrecognized option '-mbranches-within-no-boundaries'\n"
             "make[2]: *** [scripts/Makefile.build:265: "
             "/var/lib/dkms/nvidia/440.59/build/nvidia/nv-cray.o] Error 1\n")


def test_an_assembler_that_does_not_know_the_kernel_s_option_is_the_toolchain_mismatch() -> None:
    assert top_pair(_host(_make_log(AS_OPTION))) == ("driver", "gcc_mismatch")
    # look-alike: the same build log on a node whose driver is loaded is history
    assert top_pair(_host(_make_log(AS_OPTION), loaded=True)) is None


#: NVIDIA/open-gpu-kernel-modules#469: 530.30.02 against Linux 6.3's read-only vm_flags.
VM_FLAGS = ("/var/lib/dkms/nvidia/530.30.02/build/nvidia/nv-mmap.c:681:23: error: assignment of read-only "
            "member 'vm_flags'\n"
            "make[2]: *** [scripts/Makefile.build:252: "
            "/var/lib/dkms/nvidia/530.30.02/build/nvidia/nv-mmap.o] Error 1\n")
#: A header the kernel's tree lacks is gcc's fatal error, not the driver's sources not fitting.
NO_HEADER = ("/var/lib/dkms/nvidia/530.30.02/build/nvidia/nv.c:12:10: fatal error: linux/foo.h: "
             "No such file or directory\n")


def test_a_compile_error_in_dkms_s_tree_is_the_release_not_fitting_the_kernel() -> None:
    assert top_pair(_host(_make_log(VM_FLAGS))) == ("driver", "driver_kernel_incompatible")
    assert top_pair(_host(_make_log(NO_HEADER))) != ("driver", "driver_kernel_incompatible")


#: gentoo bug 617650: modpost refusing nvidia.ko in Portage's build log of nvidia-drivers.
PORTAGE = ("FATAL: modpost: GPL-incompatible module nvidia.ko uses GPL-only symbol "
           "'kmemcheck_mark_initialized'\n"
           "make[4]: *** [__modpost] Error 1\n"
           "nvidia.ko failed to build!\n")


def test_portage_s_build_log_of_the_driver_package_is_read() -> None:
    log = {"kind": "node-file", "path": "var/tmp/portage/x11-drivers/nvidia-drivers-304.135/temp/build.log",
           "text": PORTAGE}
    assert top_pair(_host(log)) == ("driver", "driver_kernel_incompatible")
    # look-alike: another package's build log in Portage's tree is not the driver's
    other = {"kind": "node-file", "path": "var/tmp/portage/sys-fs/zfs-kmod-2.1.5/temp/build.log",
             "text": PORTAGE}
    assert top_pair(_host(other)) != ("driver", "driver_kernel_incompatible")
