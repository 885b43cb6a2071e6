"""A GPU job that loads a driver library by its unversioned name, which no runtime delivers.

The NVIDIA runtime (and the CDI spec the toolkit writes) puts each of the driver's user-space
libraries into a container at its ABI soname (libnvidia-ml.so.1) and full-version file, and
creates one unversioned link only, libcuda.so -> libcuda.so.1, "Many applications wrongly
assume that libcuda.so exists" (nvidia-container-toolkit internal/discover/symlinks.go,
https://github.com/NVIDIA/nvidia-container-toolkit/blob/main/internal/discover/symlinks.go).
nvidia-docker never delivered libnvidia-ml.so, so programs should load the soname
(https://github.com/NVIDIA/DIGITS/pull/658). A job that dlopens libnvidia-ml.so and fails, and
then reports NVML's library not found (NVML_ERROR_LIBRARY_NOT_FOUND, code 12: its loader shim's
answer for the failed dlopen; trexminer/T-Rex#777), chose a name no served container holds:
its words do not say whether the soname was delivered, so they say nothing of the stack.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpunode.checks.job_words import SMI_NO_NVML
from gpunode.job_errors import job_error
from gpunode.relazy import lazy_compile

#: A driver library other than libcuda named without a version, with a loader's failure
#: words on the same line ("failed to load libnvidia-ml.so, libnvidia-ml.so: cannot open shared
#: object file"). libcuda.so is linked by the toolkit and left out.
_UNVERSIONED_FAILED = lazy_compile(
    r"(?i:\b(?:cannot|can.t|couldn.t|could not|failed to|unable to)\s+(?:load|open|find|dlopen)\b"
    r"|cannot open shared object file)"
    r"[^\n]*?(?<![\w.+-])lib(?:nvidia-[a-z0-9]+(?:-[a-z0-9]+)*|cudadebugger)\.so(?![.\w-])"
    r"|(?<![\w.+-])lib(?:nvidia-[a-z0-9]+(?:-[a-z0-9]+)*|cudadebugger)\.so(?![.\w-])[^\n]*?"
    r"(?i:cannot open shared object file|\bnot found\b)")
#: The same failure at a versioned name (the soname or the full-version file): the runtime's.
_VERSIONED_FAILED = lazy_compile(
    r"(?<![\w.+-])lib(?:nvidia-[a-z0-9]+(?:-[a-z0-9]+)*|cudadebugger)\.so\.\d[\d.]*:?\s*"
    r"(?i:cannot open shared object file|not found)")
#: The job-error entry for NVML's library not found in any of its forms.
_NVML_NOT_FOUND = "nvml-library-not-found"


def own_unversioned_load(line: str, line_no: int, lines: Sequence[str]) -> bool:
    """Whether the decisive ``line`` (``line_no``, 1-based, in ``lines``) is a job's failed
    load of an unversioned driver library name, or NVML's library not found after one, with
    no failed load of a versioned name in the log up to it."""
    before = lines[:line_no]
    if any(_VERSIONED_FAILED.search(said) for said in before):
        return False
    if _unversioned(line):
        return True
    entry = job_error(line)
    return entry is not None and entry.id == _NVML_NOT_FOUND and any(map(_unversioned, before[:-1]))


def _unversioned(line: str) -> bool:
    """A failed load of an unversioned driver library name in a program's own words; not
    nvidia-smi's fixed "couldn't find libnvidia-ml.so library" (it loads the soname and names
    no file it tried)."""
    return _UNVERSIONED_FAILED.search(line) is not None and SMI_NO_NVML.search(line) is None
