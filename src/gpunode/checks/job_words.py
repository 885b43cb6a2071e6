"""The stack layer a GPU job's own libraries and launchers name in their words.

The catalog's ``named_by`` lists what names a component in *another component's* error
line. A GPU job speaks through other programs that have their own wordings for the same
layers, and these words mean the layer only in a job's mouth (the device plugin that
cannot load libnvidia-ml is read by its own rules): CUDA's runtime and driver API errors,
NVML's return codes, the verbs completion statuses NCCL relays, CUPTI's results under a
job's profiler, DCGM's return codes in a DCGM client's output, and a few frameworks' and
launchers' words (PyTorch's driver too old, the loader not finding libcuda, nvidia-container-cli's
error categories relayed by enroot, Docker's unknown runtime ``nvidia``). They are data,
validated at load, each with the page that documents it: ``data/job_errors.toml``
(``gpunode.job_errors``). A line that names none of them is the job's own business.
"""

from __future__ import annotations

from gpunode.job_errors import JobError, job_error
from gpunode.relazy import lazy_compile

#: nvidia-smi's own words for an NVML it cannot load. nvidia-smi is one of the utilities the
#: NVIDIA runtime's hook mounts into a container with the libraries, so a container where it
#: runs but finds no libnvidia-ml got the hook, and the hook injected no libraries.
#: Its message quoted without the "NVIDIA-SMI" it starts with is read by its own words.
SMI_NO_NVML = lazy_compile(r"NVIDIA-SMI couldn.t find libnvidia-ml\.so"
                           r"|\bcouldn.t find libnvidia-ml\.so library in your system")


def job_names(line: str) -> str | None:
    """The stack component a GPU job's line names in a library's or launcher's words, or None."""
    found = job_error(line)
    return found.component if found is not None else None


def job_cause(line: str, component: str) -> str | None:
    """The cause the table gives ``line`` where it names ``component``, or None."""
    found: JobError | None = job_error(line)
    return found.cause or None if found is not None and found.component == component else None
