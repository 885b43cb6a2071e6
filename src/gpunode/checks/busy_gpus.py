"""CUDA's busy-or-unavailable error in a GPU job, settled by the node's compute mode.

cudaErrorDevicesUnavailable (46, "all CUDA-capable devices are busy or unavailable") is CUDA's
answer where no context can be made on any device the process sees. The runtime API's own text
for it names why: "Devices are often busy/unavailable due to use of cudaComputeModeProhibited,
cudaComputeModeExclusiveProcess, or when long running CUDA kernels have filled up the GPU"
(CUDA Runtime API, cudaError; docs.rs/crseo-sys cudaErrorDevicesUnavailable quotes it). The
node's compute mode, which nvidia-smi prints for every GPU (the table's "Compute M." column:
Default, E. Process, E. Thread, Prohibited; ``<compute_mode>`` in ``nvidia-smi -q -x``), tells
which reading holds:

* Exclusive_Process (or the older Exclusive_Thread): one context per GPU. Where the GPUs carry
  a context already (processes listed, or memory in use) and the node hands out whole GPUs
  (the device plugin gives each GPU to one pod only), no other pod can hold the job's GPU: a
  process no running pod accounts for does, a killed container's process the container
  runtime left behind (NVIDIA/DIGITS#2005: an E. Process K40m held by another process;
  pytorch/pytorch#3871: the GPU free again once the holder is killed). Where GPUs are shared
  (time-slicing, MPS, a sharing scheduler's slices) another pod may be the holder, and
  nothing is said then. Nothing is said either where the failing job was given several GPUs:
  a multi-GPU job runs one process per GPU (DDP, MPI ranks), and ranks that open their
  contexts before pinning themselves to their own GPU all land on the first one, where
  Exclusive_Process admits only the first, so the job's own ranks are the holders
  (karpathy/nanoGPT#116: DDP on a 4-GPU Exclusive_Process node failing so until each rank
  called torch.cuda.set_device, which the DistributedDataParallel docstring on pytorch.org asks
  of every process; meta-pytorch/gpt-fast#56 sets the device before the process group so).
* Default: any number of contexts per GPU, so no other process can make it busy (the
  StreamExecutor owner in tensorflow/tensorflow#526: the error "should not be possible" in
  DEFAULT mode); the driver or the device refuses the context, the driver's ``error_device``
  (pytorch/pytorch#100691 on Default-mode T4s).
* Prohibited: an administrator's setting; nothing is said here.

vGPU guests are read before this (checks.vgpu_words), and a GPU that needs a reset by its own
kernel log is the hardware's, read by the node's kernel checks.

CUDA's 216 is the other answer of an exclusive-thread GPU: the driver API's
CUDA_ERROR_CONTEXT_ALREADY_IN_USE (a context bound to one CPU thread used from another) and the
runtime's cudaErrorDeviceAlreadyInUse ("a call tried to access an exclusive-thread device that
is already in use by a different thread", CUDA Runtime API, cudaError; docs.rs/crseo-sys quotes
it). A framework that moves its context between its threads meets it only where the GPUs are in
Exclusive_Thread mode: TensorFlow's StreamExecutor aborting on cuCtxSetCurrent's 216 on K20m GPUs
in E. Thread mode, fixed by setting the compute mode back to Default or Exclusive_Process with
nvidia-smi (tensorflow/tensorflow#526, the StreamExecutor owner's answer). The compute mode is a
setting of the GPUs made through the driver, so where every GPU of the node is in Exclusive_Thread
the job's 216 is the driver's ``error_device``; in any other mode it is the job's own threading,
and nothing is said.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from gpunode.relazy import lazy_compile

#: A GPU row's second line in nvidia-smi's table: memory used and total, utilisation, and
#: the compute mode ("|   9000MiB / 16152MiB |     98%   E. Process |").
_ROW = lazy_compile(r"\|\s*(?P<used>\d+)MiB\s*/\s*\d+MiB\s*\|\s*(?:\d+\s*%|N/A)\s+"
                    r"(?P<mode>Default|E\. Process|E\. Thread|Prohibited)\s*\|")
#: The compute mode in ``nvidia-smi -q -x``.
_XML_MODE = lazy_compile(r"<compute_mode>\s*(?P<mode>\w+)\s*</compute_mode>")
#: A process row of the table's Processes section ("|    0   N/A  N/A   1234  C  python  9000MiB |").
_PROCESS = lazy_compile(r"^\|\s+\d+\s+.*\b\d+\s+[CGM+]{1,3}\s+\S.*\d+MiB\s*\|\s*$")
_MODES = {"Default": "Default", "E. Process": "Exclusive_Process", "E. Thread": "Exclusive_Thread",
          "Prohibited": "Prohibited", "Exclusive_Process": "Exclusive_Process",
          "Exclusive_Thread": "Exclusive_Thread"}
_EXCLUSIVE = frozenset({"Exclusive_Process", "Exclusive_Thread"})
#: Memory a GPU shows with no context on it stays a few MiB; a CUDA context takes far more.
_CONTEXT_MIB = 64


#: CUDA's 216 in a job's words: the driver API's name, the runtime's name and text, and a
#: framework's check of a driver call that printed the code (TensorFlow's "CUDA_SUCCESS ==
#: dynload::cuCtxSetCurrent(context) (0 vs. 216)").
_THREAD_BOUND = lazy_compile(
    r"\bCUDA_ERROR_CONTEXT_ALREADY_IN_USE\b|\bcudaErrorDeviceAlreadyInUse\b"
    r"|\bexclusive-thread device that is already in use by a different thread\b"
    r"|\bCUDA_SUCCESS == [\w:]{0,40}\bcu[A-Z]\w{2,40}\([^)\n]{0,80}\) \(0 vs\. 216\)")


def thread_bound_index(lines: Sequence[str]) -> int | None:
    """The index of the job's last CUDA 216 (a context or device already in use by another
    thread), or None."""
    return next((i for i in range(len(lines) - 1, -1, -1)
                 if ("216" in lines[i] or "lready" in lines[i]) and _THREAD_BOUND.search(lines[i])), None)


#: A GPU job's words for a device on which no context of its could be made, whatever the CUDA
#: error below them: OpenMM's CudaContext tries cuCtxCreate on each device and raises "No
#: compatible CUDA device is available" where every attempt failed (openmm/openmm#2840: a
#: cluster's GPUs in Exclusive_Process mode, where its tests that open a second context get no
#: device; the maintainer's answer: only one context may exist per GPU in that mode), and
#: LAMMPS's GPU package refusing to put several MPI ranks on one GPU ("Accelerator sharing is
#: not currently supported on system", its error-message reference, which points at
#: nvidia-smi's compute-mode setting). In Default mode the same words mean a GPU too old or
#: out of memory, so they are read only where every GPU of the node is exclusive.
_CONTEXT_REFUSED = lazy_compile(
    r"(?i)\bno (?:compatible|usable|suitable) (?:CUDA |GPU )?devices? (?:is |are |was |were )?"
    r"(?:available|found)\b"
    r"|\bAccelerator sharing is not (?:currently )?supported\b")


def context_refused_index(lines: Sequence[str]) -> int | None:
    """The index of the job's last word that no context could be made on its GPU, or None."""
    return next((i for i in range(len(lines) - 1, -1, -1)
                 if ("device" in lines[i] or "sharing" in lines[i]) and _CONTEXT_REFUSED.search(lines[i])),
                None)


def all_exclusive(table: str, xml: str) -> bool:
    """Whether every GPU of the node is in an exclusive compute mode (False where neither of
    nvidia-smi's outputs says)."""
    modes = compute_modes(table, xml)
    return bool(modes) and all(mode in _EXCLUSIVE for mode in modes)


def thread_exclusive(table: str, xml: str) -> bool:
    """Whether every GPU of the node is in Exclusive_Thread mode (False where neither of
    nvidia-smi's outputs says)."""
    modes = compute_modes(table, xml)
    return bool(modes) and all(mode == "Exclusive_Thread" for mode in modes)


def compute_modes(table: str, xml: str) -> tuple[str, ...]:
    """The node's GPUs' compute modes (NVML's names): nvidia-smi's table where it printed
    rows, else ``nvidia-smi -q -x``'s; empty where neither says."""
    rows = [_MODES[m["mode"]] for m in _ROW.finditer(table)]
    return tuple(rows) if rows else tuple(_MODES.get(m["mode"], m["mode"]) for m in _XML_MODE.finditer(xml))


def exclusive_held(table: str) -> bool:
    """Whether nvidia-smi's table shows an exclusive-mode GPU carrying a context: a process
    listed, or memory in use past what a GPU without a context shows."""
    if any(_PROCESS.match(line) for line in table.splitlines()):
        return True
    return any(_MODES[m["mode"]] in _EXCLUSIVE and int(m["used"]) >= _CONTEXT_MIB
               for m in _ROW.finditer(table))


def pod_gpus(limits: Iterable[Mapping[str, str]]) -> int | None:
    """The whole GPUs (``nvidia.com/gpu``) a pod's containers' limits ask for in all; None where
    none asks or a count is no integer."""
    total: int | None = None
    for given in limits:
        value = given.get("nvidia.com/gpu")
        if value is None:
            continue
        if not value.strip().isdigit():
            return None
        total = (total or 0) + int(value.strip())
    return total


def several_gpus(limits: Iterable[Mapping[str, str]]) -> bool:
    """Whether a pod's containers' limits ask for more than one whole GPU
    (``nvidia.com/gpu``) in all; a count that is no integer says nothing."""
    return (pod_gpus(limits) or 0) > 1


def busy_owner(table: str, xml: str, shared: bool, own_ranks: bool = False) -> str | None:
    """The component that owns a job's busy-or-unavailable error on this node (module
    docstring): ``container-runtime`` for exclusive GPUs held where GPUs are not ``shared``
    between pods and the job's ``own_ranks`` (a job given several GPUs) cannot be the
    holders, ``driver`` where every GPU is in Default mode, else None."""
    modes = compute_modes(table, xml)
    if not modes:
        return None
    if all(mode == "Default" for mode in modes):
        return "driver"
    if all(mode in _EXCLUSIVE for mode in modes) and not shared and not own_ranks \
            and exclusive_held(table):
        return "container-runtime"
    return None
