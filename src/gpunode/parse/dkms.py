"""DKMS's build tree of the NVIDIA module, one folder a driver version
(``/var/lib/dkms/nvidia/<version>/build``): its ``make.log`` is the module's last build for
that version, the file DKMS names when the build fails ("Error! Bad return status for module
build on kernel: ... Consult /var/lib/dkms/<module>/<version>/build/make.log for more
information."). The probe keeps the newest versions' logs; checks/driver_unloaded.py reads
them. Both order the versions the same way, here."""

from __future__ import annotations

from gpunode.relazy import lazy_compile

DKMS_NVIDIA_DIR = "/var/lib/dkms/nvidia"
#: A kept build log's name in a bundle (the node's path without its leading slash); group 1
#: is the driver version.
MAKE_LOG_NAME = lazy_compile(r"^var/lib/dkms/nvidia/([^/]+)/build/make\.log$")
_NUMBERS = lazy_compile(r"\d+")


def make_log(version: str) -> str:
    """The node's path of the build log of ``version``."""
    return f"{DKMS_NVIDIA_DIR}/{version}/build/make.log"


def version_order(version: str) -> tuple[int, ...]:
    """A driver version folder's numbers, for sorting oldest to newest (565.57.01 -> (565, 57, 1))."""
    return tuple(int(part) for part in _NUMBERS.findall(version))
