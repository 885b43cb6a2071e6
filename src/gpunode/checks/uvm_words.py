"""A GPU job's CUDA unknown error at initialisation, settled by the node's loaded modules.

CUDA's unknown error (cudaErrorUnknown, 30 before CUDA 10.1 and 999 since; the driver API's
CUDA_ERROR_UNKNOWN) is shared by several layers, so the job's words alone name none
(data/job_errors.toml leaves it out). At initialisation, before the job ran any kernel, one
cause is the node's: CUDA needs the unified-memory module nvidia_uvm beside nvidia, and where
it is not loaded the first CUDA call fails with that unknown error while nvidia-smi, which
needs only nvidia, answers (NVlabs/nvbio-gpl#7: deviceQuery's "cudaGetDeviceCount returned 30
-> unknown error", fixed by installing the uvm module; Bumblebee-Project/Bumblebee#623:
PyCUDA's "cuInit failed: unknown" with nvidia_uvm not loaded; ultralytics/ultralytics#7716:
PyTorch's "CUDA unknown error" after a suspend, fixed by reloading nvidia_uvm). So where the
node's lsmod lists nvidia and not nvidia_uvm, the job's unknown error at initialisation is
``nvidia_uvm_missing``. With nvidia_uvm listed, no lsmod collected, or no nvidia module at
all (the driver not loaded, read elsewhere), nothing is said here.

Without nvidia_uvm no CUDA context can be made, so a job's CUDA calls fail from the first one
on: there the runtime's own text for cudaErrorUnknown ("unknown error", cudaGetErrorString) as
a CUDA check prints it is an initialisation failure too, whatever call it wrapped (nccl-tests'
CUDACHECK, src/common.h: "%s: Test CUDA failure %s:%d '%s'" with cudaGetErrorString; PyTorch's
C10_CUDA_CHECK: "CUDA error: unknown error"; CTranslate2's "CUDA failed with error unknown
error", cudaGetErrorString after its own prefix (its cuda/utils.h); the driver API's enumerator
CUDA_ERROR_UNKNOWN as bindings print it, which Apptainer's GPU troubleshooting quotes alone for a host whose
nvidia_uvm was never loaded (apptainer.org/docs/user/latest/gpu.html); NVIDIA/pyxis#81:
all_reduce_perf's "Test CUDA failure common.cu:1045 'unknown error'" before it listed a
device, gone after modprobe nvidia_uvm). The node fact is what settles it; elsewhere these
words are left alone.
"""

from __future__ import annotations

from collections.abc import Container, Sequence

from gpunode.relazy import lazy_compile

#: The cause of a node whose CUDA lacks the unified-memory module.
UVM_MISSING = "nvidia_uvm_missing"

#: CUDA's unknown error from the calls that initialise it: deviceQuery's "cudaGetDeviceCount
#: returned 30" (999 since CUDA 10.1), cuInit's CUDA_ERROR_UNKNOWN as bindings print it
#: (PyCUDA's "cuInit failed: unknown", TensorFlow's "failed call to cuInit: CUDA_ERROR_UNKNOWN"),
#: PyTorch's words for it at initialisation, and the other frameworks' wrappers of their first
#: call's answer (data/job_errors/frameworks.toml: ggml_cuda_init, TensorRT, Ollama's discovery).
_INIT_UNKNOWN = lazy_compile(
    r"\bcudaGetDeviceCount(?:\(\))? returned (?:30|999)\b"
    r"|\bcuInit\b[^\n]{0,60}?(?:\bCUDA_ERROR_UNKNOWN\b|: unknown\s*(?:error\s*)?$)"
    r"|\bCUDA unknown error - this may be due to an incorrectly set up environment\b"
    r"|\bfailed to initialize CUDA: unknown error\b|\bCUDA initialization failure with error:? 999\b(?!\.\d)"
    r"|\b(?:cudart|cuda driver library|nvcuda) init failure: 999\b(?!\.\d)"
    # cudaGetErrorString(cudaErrorUnknown) in a CUDA check's line (see the module's docstring)
    # (CTranslate2's "CUDA failed with error unknown error", faster-whisper's engine)
    r"|\bCUDA (?:error|failure|failed with error)\b[^\n]{0,80}?(?:\W|^)unknown error\b|\bcudaErrorUnknown\b"
    # the driver API's enumerator for it, which bindings and wrappers print bare
    r"|\bCUDA_ERROR_UNKNOWN\b")


#: The module loader failing on the unified-memory module where CUDA (through nvidia-modprobe)
#: or the job's own setup asked for it: kmod's "could not insert"/"could not find module by
#: name" and modprobe's "Module ... not found" naming nvidia_uvm, or the per-branch name
#: Ubuntu's packaged drivers gave it (nvidia_331_uvm from the nvidia-331-uvm package;
#: NVlabs/nvbio-gpl#7, solved by installing that package; nvidia_331_updates_uvm,
#: Bumblebee-Project/Bumblebee#623). The module is what CUDA lacks, so
#: on a node whose lsmod lists nvidia without nvidia_uvm these words are the same cause as the
#: unknown error at initialisation.
_UVM_NAME = r"nvidia(?:[-_]\d{3}(?:[-_]updates)?)?[-_]uvm"
_UVM_LOAD_FAILED = lazy_compile(
    r"\b(?:modprobe|insmod): (?:ERROR|FATAL): [^\n]{0,160}?['\"=]" + _UVM_NAME + r"\b"
    r"|\b(?:modprobe|insmod): (?:ERROR|FATAL): Module " + _UVM_NAME + r" not found\b")


def uvm_load_failed_index(lines: Sequence[str]) -> int | None:
    """The index of the job's first module-loader failure on the unified-memory module
    (``_UVM_LOAD_FAILED``), or None: the first, as the later lines repeat it."""
    return next((i for i, line in enumerate(lines) if "uvm" in line and _UVM_LOAD_FAILED.search(line)), None)


def says_init_unknown(line: str) -> bool:
    """Whether ``line`` is CUDA's unknown error from the calls that initialise it."""
    lower = line.lower()
    return (("unknown" in lower or "returned" in line or "init" in lower)
            and _INIT_UNKNOWN.search(line) is not None)


def uvm_not_loaded(modules: Container[str] | None) -> bool:
    """The node's loaded modules (lsmod) list nvidia and not nvidia_uvm; False where lsmod was
    not collected or no nvidia module is loaded."""
    return modules is not None and "nvidia" in modules and "nvidia_uvm" not in modules


def init_unknown_index(lines: Sequence[str]) -> int | None:
    """The index of the job's last CUDA unknown error at initialisation, or None."""
    return next((i for i in range(len(lines) - 1, -1, -1) if says_init_unknown(lines[i])), None)
