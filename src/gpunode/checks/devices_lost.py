"""A running GPU container whose CUDA no longer finds a device: its access to the GPUs was lost.

The NVIDIA runtime (its hook or the CDI spec) puts the GPU device nodes into a container when it
starts; CUDA then answers "no CUDA-capable device is detected" (cudaErrorNoDevice, 100, and the
driver API's CUDA_ERROR_NO_DEVICE, documented in the CUDA runtime and driver API types) only
where it can open none of them. In a container that is running under NVIDIA's runtime and was
given GPUs, that answer means the devices were taken away after the start: the container's device
cgroup no longer allows /dev/nvidia* (a systemd daemon-reload or a cgroup change under cgroup v2,
the toolkit's documented "containers losing access to GPUs"), the same fault NVML reports as
"Unknown Error" (NVIDIA/nvidia-container-toolkit#48, the toolkit's troubleshooting page: the
container regains its GPUs only when restarted). CUDA's own words for it in containers that ran
for hours, healed by a restart: rishikanthc/Scriberr#326 ("CUDA failed with error no
CUDA-capable device is detected" after about 12 hours), HaveAGitGat/Tdarr#666
("CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected" in NVENC jobs of a running node).

Only the device is read so: a cgroup change takes device access away, never files, so a driver
library or nvidia-smi missing in the container was never injected (checks.workload_logs reads
that as the toolkit's injection). A container not running (it exited or waits) may never have
had the devices, and a pod started under plain runc never gets them (the runtime's
configuration): neither is read here.
"""

from __future__ import annotations

from gpunode.bundle.kube import Pod
from gpunode.decisive import MAX_LINE, Decisive
from gpunode.facts import LogFile
from gpunode.relazy import lazy_compile

#: The frameworks' words for CUDA's no-device answer at initialisation (cudaErrorNoDevice,
#: CUDA_ERROR_NO_DEVICE, 100) where they print only its number: TensorRT's "CUDA initialization
#: failure with error: 100", Ollama's discovery "cudart init failure: 100" and "cuda driver
#: library init failure: 100" (discover/gpu_info_cudart.c, gpu_info_nvcuda.c). XLA's "No visible
#: GPU devices" is not among them: JAX raises it after any failed cuInit (jax-ml/jax#24866 after
#: CUDA_ERROR_SYSTEM_NOT_READY, KosinskiLab/AlphaPulldown#571 after CUDA_ERROR_UNKNOWN), so the
#: cuInit line before it is what is read.
FRAMEWORK_NO_DEVICE = (r"\bCUDA initialization failure with error:? 100\b(?!\.\d)"
                       r"|\b(?:cudart|cuda driver library|nvcuda) init failure: 100\b(?!\.\d)")
#: CUDA's own error for no usable device, in its enumerator names and its message, and the
#: frameworks' numbers for it.
CUDA_NO_DEVICE = lazy_compile(
    r"\bCUDA_ERROR_NO_DEVICE\b|\bcudaErrorNoDevice\b|\bno CUDA-capable device is detected\b|"
    + FRAMEWORK_NO_DEVICE)
#: The toolkit's cause for a running container that lost its GPUs.
LOST = "nvml_device_access_lost"


def _may_say_no_device(line: str) -> bool:
    """A cheap test that ``line`` may hold ``CUDA_NO_DEVICE``: its words or a framework's 100."""
    return "device" in line.lower() or "100" in line


def _running(pod: Pod, container: str) -> bool:
    """The log's container is running now (a status names it, running)."""
    return any(cs.name == container and cs.state.running is not None for cs in pod.status.container_statuses)


def lost_device_line(pod: Pod, log: LogFile, *, gets_runtime: bool) -> Decisive | None:
    """The last line in which a running GPU container, started under NVIDIA's runtime
    (``gets_runtime``), says that CUDA finds no device; None where it is not that."""
    if not gets_runtime or log.previous or not _running(pod, log.container):
        return None
    lines = log.lines
    index = next((i for i in range(len(lines) - 1, -1, -1)
                  if _may_say_no_device(lines[i]) and CUDA_NO_DEVICE.search(lines[i])), None)
    return None if index is None else Decisive(index + 1, lines[index].strip()[:MAX_LINE], 1)
