"""The stack layer a GPU job's own libraries and launchers name in their words.

The catalog's ``named_by`` lists what names a component in *another component's* error
line. A GPU job speaks through other programs that have their own wordings for the same
layers, and these words mean the layer only in a job's mouth (the device plugin that
cannot load libnvidia-ml is read by its own rules):

* the CUDA stack's words for a driver that cannot serve the job: PyTorch's "The NVIDIA
  driver on your system is too old (found version N)", the driver API's
  ``CUDA_ERROR_INSUFFICIENT_DRIVER``, CUDA's errors 803 and 804 (a libcuda the loaded module
  cannot serve: "system has unsupported display driver / cuda driver combination",
  "forward compatibility was attempted on non supported HW"); NVML's init failures that say
  the driver's device nodes or module refused it ("Failed to initialize NVML: Insufficient Permissions",
  "Driver Not Loaded") are the driver's;
* what the NVIDIA runtime puts into a container, missing: nvidia-smi or the loader not
  finding libnvidia-ml/libcuda in a container that got the runtime, ``cuInit`` failing with
  CUDA_ERROR_UNKNOWN (the CUDA analogue of NVML's "Unknown Error": device nodes present
  but not usable), nvidia-container-cli's own error categories relayed without its name
  by a launcher (enroot's hook: "mount error: file creation failed: …/dev/nvidia-uvm-tools:
  operation not permitted"), and a container engine that knows no runtime named nvidia
  (Docker's "unknown or invalid runtime name: nvidia", what ``nvidia-ctk runtime
  configure`` registers).

Every rule first tests a literal the line must hold, so a job's log costs a few substring
scans per line; a line that names none of these is the job's own business.
"""

from __future__ import annotations

import re
from typing import NamedTuple


class JobWords(NamedTuple):
    """One wording: a literal every matching line holds, the pattern, the layer it names."""

    literal: str
    pattern: re.Pattern[str]
    component: str


#: The toolkit's component id and the driver's (data/components.toml).
_TOOLKIT = "container-toolkit"
_DRIVER = "driver"

#: The job's words for a container that started under the NVIDIA runtime without the
#: driver's libraries: nvidia-smi's own message ("NVIDIA-SMI couldn't find libnvidia-ml.so
#: library in your system."), the dynamic loader's ("libcuda.so.1: cannot open shared object
#: file"), NVML's library not found.
NO_DRIVER_LIBS = re.compile(
    r"NVIDIA-SMI couldn.t find libnvidia-ml\.so"
    r"|\blib(?:cuda|nvidia-ml)\.so(?:\.1)?: cannot open shared object file"
    r"|Failed to initialize NVML: (?:could not load NVML library|ERROR_LIBRARY_NOT_FOUND)")

#: nvidia-smi's own words for an NVML it cannot load. nvidia-smi is one of the utilities the
#: NVIDIA runtime's hook mounts into a container with the libraries, so a container where it
#: runs but finds no libnvidia-ml got the hook, and the hook injected no libraries.
SMI_NO_NVML = re.compile(r"NVIDIA-SMI couldn.t find libnvidia-ml\.so")

#: Lowest layer first, as ``named_by`` is read.
_WORDS: tuple[JobWords, ...] = (
    JobWords("too old", re.compile(r"\bNVIDIA driver on your system is too old\b"), _DRIVER),
    JobWords("INSUFFICIENT_DRIVER", re.compile(r"\bCUDA_ERROR_INSUFFICIENT_DRIVER\b"), _DRIVER),
    # CUDA's own errors for a libcuda the loaded kernel module cannot serve (cuda error 803,
    # cudaErrorSystemDriverMismatch; 804, cudaErrorCompatNotSupportedOnDevice): the image's
    # forward-compatibility libcuda on a GPU without forward compatibility (a driver older than
    # the job's CUDA), or libraries upgraded under a module still loaded
    JobWords("driver combination", re.compile(
        r"\bsystem has unsupported display driver / cuda driver combination\b"), _DRIVER),
    JobWords("forward compatibility", re.compile(
        r"\bforward compatibility was attempted on non supported (?i:hw)\b"), _DRIVER),
    JobWords("_DRIVER_MISMATCH", re.compile(r"\bCUDA_ERROR_SYSTEM_DRIVER_MISMATCH\b"), _DRIVER),
    JobWords("DriverMismatch", re.compile(r"\bcudaErrorSystemDriverMismatch\b"), _DRIVER),
    JobWords("COMPAT_NOT_SUPPORTED", re.compile(r"\bCUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE\b"), _DRIVER),
    JobWords("CompatNotSupported", re.compile(r"\bcudaErrorCompatNotSupportedOnDevice\b"), _DRIVER),
    JobWords("NVML", re.compile(
        r"Failed to initialize NVML: (?:Insufficient Permissions|Driver Not Loaded)\b"), _DRIVER),
    JobWords(".so", NO_DRIVER_LIBS, _TOOLKIT),  # nvidia-smi's and the loader's words
    JobWords("initialize NVML", NO_DRIVER_LIBS, _TOOLKIT),  # NVML's library not found
    JobWords("cuInit", re.compile(r"\bcuInit\b.{0,40}\bCUDA_ERROR_UNKNOWN\b"), _TOOLKIT),
    # nvidia-container-cli's error categories (src/cli/configure.c: "mount error: %s",
    # "ldcache error: %s", ...) at the start of a message, its name left out by the launcher
    # that relays it; a mount or device error only where it names NVIDIA's files
    JobWords(" error: ", re.compile(r"(?:^|[\]>]\s?|:\s)(?:ldcache|requirement) error: "
                                    r"|(?:^|[\]>]\s?|:\s)(?:mount|device) error: .{0,300}nvidia"), _TOOLKIT),
    JobWords("runtime name", re.compile(r"\bunknown or invalid runtime name: \"?nvidia"), _TOOLKIT),
)


def job_names(line: str) -> str | None:
    """The stack component a GPU job's line names in a library's or launcher's words, or None."""
    for words in _WORDS:
        if words.literal in line and words.pattern.search(line):
            return words.component
    return None
