"""``/proc/driver/nvidia/version``: which kernel module is loaded, open or proprietary."""

from __future__ import annotations

import msgspec

from gpunode.errors import ParseError
from gpunode.relazy import lazy_compile


class DriverVersion(msgspec.Struct, frozen=True):
    """The loaded NVIDIA kernel module; ``gcc`` is the compiler version that built it."""

    version: str
    kernel_module_type: str  # "open" | "proprietary"
    gcc: str | None


_NVRM = lazy_compile(r"^NVRM version:\s*(?P<banner>.*?Module.*?)\s+(?P<version>\d+(?:\.\d+)+)\b")
_GCC = lazy_compile(r"^GCC version:\s*(?P<text>.*)$")
_GCC_NUMBER = lazy_compile(r"\b(\d+\.\d+(?:\.\d+)?)\b")


def parse_proc_driver_version(text: str) -> DriverVersion:
    """Decode the two-line version file."""
    version: str | None = None
    module_type = "proprietary"
    gcc: str | None = None
    for line in text.splitlines():
        nvrm = _NVRM.match(line.strip())
        if nvrm:
            version = nvrm.group("version")
            module_type = "open" if "Open Kernel Module" in nvrm.group("banner") else "proprietary"
        compiler = _GCC.match(line.strip())
        if compiler:
            gcc = _gcc_version(compiler.group("text"))
    if version is None:
        raise ParseError("no 'NVRM version:' line with a driver version")
    return DriverVersion(version=version, kernel_module_type=module_type, gcc=gcc)


def _gcc_version(text: str) -> str | None:
    """ "gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)" -> "12.3.0"."""
    match = _GCC_NUMBER.search(text)
    if match:
        return match.group(1)
    return text.strip() or None
