"""DKMS's build tree of the NVIDIA driver's module, one folder a module name and driver
version (``/var/lib/dkms/<module>/<version>/build``): its ``make.log`` is the module's last
build for that version, the file DKMS names when the build fails ("Error! Bad return status
for module build on kernel: ... Consult /var/lib/dkms/<module>/<version>/build/make.log for
more information."). The driver's DKMS module is ``nvidia`` in NVIDIA's packages of the
proprietary modules and ``nvidia-open`` in those of the open ones (the kmod-nvidia-open-dkms
packages of the CUDA repository, NVIDIA/open-gpu-kernel-modules#805), and distributions name
it for the release they package (Debian's nvidia-kernel-dkms builds ``nvidia-current``);
GPUDirect Storage's ``nvidia-fs`` is another module, not the driver. The probe keeps the
newest versions' logs; checks/driver_unloaded.py reads them. Both order the versions the same
way, here."""

from __future__ import annotations

from gpunode.relazy import lazy_compile

DKMS_DIR = "/var/lib/dkms"
#: The driver's DKMS module names: ``nvidia`` and ``nvidia-<flavour>``, not GPUDirect
#: Storage's ``nvidia-fs``.
DRIVER_MODULE = lazy_compile(r"^nvidia(?:-(?!fs$)[a-z][\w-]{0,30})?$")
#: A kept build log's name in a bundle (the node's path without its leading slash); group 1
#: is the module's DKMS name, group 2 the driver version.
MAKE_LOG_NAME = lazy_compile(r"^var/lib/dkms/(nvidia(?:-(?!fs/)[a-z][\w-]{0,30})?)/([^/]+)/build/make\.log$")
#: Gentoo's build of the driver: Portage builds the nvidia-drivers package, its kernel modules
#: among it, in PORTAGE_TMPDIR (/var/tmp by default), one folder a package version
#: (``/var/tmp/portage/x11-drivers/nvidia-drivers-<version>``), and writes the build's output to
#: ``temp/build.log`` there, which it keeps when the build fails (gentoo bug 617650: modpost's
#: refusal of nvidia.ko in that log). Group 1 of the kept log's name is the version.
PORTAGE_DRIVERS_DIR = "/var/tmp/portage/x11-drivers"
PORTAGE_PACKAGE = lazy_compile(r"^nvidia-drivers-(\d[\w.-]{0,40})$")
PORTAGE_LOG_NAME = lazy_compile(
    r"^var/tmp/portage/x11-drivers/nvidia-drivers-(\d[\w.-]{0,40})/temp/build\.log$")
_NUMBERS = lazy_compile(r"\d+")


def make_log(version: str, module: str = "nvidia") -> str:
    """The node's path of the build log of ``module`` at ``version``."""
    return f"{DKMS_DIR}/{module}/{version}/build/make.log"


def portage_log(package: str) -> str:
    """The node's path of the build log of Portage's ``package`` folder (nvidia-drivers-<version>)."""
    return f"{PORTAGE_DRIVERS_DIR}/{package}/temp/build.log"


def version_order(version: str) -> tuple[int, ...]:
    """A driver version folder's numbers, for sorting oldest to newest (565.57.01 -> (565, 57, 1))."""
    return tuple(int(part) for part in _NUMBERS.findall(version))
