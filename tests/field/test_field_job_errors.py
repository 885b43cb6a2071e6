"""A GPU job's own error line read with the job-error table (src/gpunode/data/job_errors.toml
and the files of data/job_errors/): each entry's line is read to its layer and cause, in every
form jobs print it (name, message, number), on real lines from public reports; a job's own
errors and a healthy job log are not;
the table's validation refuses a bad entry with one line naming the file and the entry."""

from __future__ import annotations

from importlib import resources

import msgspec
import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.errors import BundleError
from gpunode.job_errors import load_job_errors, parse_job_error_files, parse_job_errors, shipped_known

TABLE = load_job_errors()


def _job_log(text: str) -> Case:
    """A GPU job's log in a pod that asks for the NVIDIA runtime by its RuntimeClass (a pod that
    does not, on a node whose default runtime is not NVIDIA's, is settled by that fact first)."""
    return synthetic_case("x-job-errors", [
        {"kind": "workload", "name": "job-0", "namespace": "default", "runtimeClassName": "nvidia"},
        {"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
         "text": text + "\n"},
    ], cluster={"driver_mode": "host"})


#: Entries whose line, in a GPU job's own log, is the job's and not the stack's; the table's
#: layer and cause are read where another component prints the line. CUDA's stub-library
#: error: the job's own search path put the toolkit's stubs ahead of the driver's libcuda
#: (checks.workload_logs.own_stub_library; NVIDIA/warp#219); the operator's validator, whose
#: image puts no stubs on its path, is read to the table's cause.
JOBS_OWN = frozenset({"cuda-stub-library"})


@pytest.mark.parametrize("entry", TABLE.entries, ids=lambda e: e.id)
def test_each_entrys_line_is_read_to_its_layer_and_cause(entry: object) -> None:
    from gpunode.job_errors import JobError

    assert isinstance(entry, JobError)
    found = TABLE.read(entry.example)
    assert found is not None and found.id == entry.id
    top = top_pair(_job_log(entry.example))
    if entry.id in JOBS_OWN:
        assert top is None, top
        return
    assert top is not None and top[0] == entry.component, top
    if entry.cause:
        assert top[1] == entry.cause, top


#: Real lines from public reports, in the forms the libraries and their callers print them.
REAL = {
    # pytorch/pytorch#35710: PyTorch's old form, and the CUDA sample's check macro
    "RuntimeError: cuda runtime error (802) : system not yet initialized at /opt/conda/conda-bld/"
    "pytorch_1579022034529/work/aten/src/THC/THCGeneral.cpp:50": "cuda-system-not-ready",
    "cudaGetDeviceProperties returned 802": "cuda-system-not-ready",
    # cupy/cupy#2845, NVIDIA/nccl-tests#264, ollama/ollama#11963
    "cupy.cuda.runtime.CUDARuntimeError: cudaErrorSystemNotReady: system not yet initialized":
        "cuda-system-not-ready",
    "Test CUDA failure common.cu:941 'system not yet initialized'": "cuda-system-not-ready",
    "ggml_cuda_init: failed to initialize CUDA: system not yet initialized": "cuda-system-not-ready",
    # numba/numba#9732, xmake-io/xmake#4686: the stub libcuda loaded instead of the driver's
    "numba.cuda.cudadrv.driver.CudaAPIError: [34]": "cuda-stub-library",
    "CUDA API Error at line 28: CUDA driver is a stub library": "cuda-stub-library",
    # wookayin/gpustat#147, tensorpack/tensorpack#1244, abysssol/ollama-flake#4 (NVML's number)
    "pynvml.nvml.NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version mismatch.":
        "nvml-lib-rm-version-mismatch",
    "tensorpack.utils.nvml.NvmlException: NVML_ERROR_LIB_RM_VERSION_MISMATCH": "nvml-lib-rm-version-mismatch",
    "nvmlInit_v2 err: 18": "nvml-lib-rm-version-mismatch",
    # LSSI-ETH/plmfit#40: Slurm's NVML call
    "slurmstepd: error: NVML: Failed to get usage(15): GPU is lost": "nvml-gpu-is-lost",
    # huggingface/candle#1846 (the driver API's name with its message), cuda_memtest#31
    'Error: Cuda(Load { cuda: DriverError(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "the provided PTX was '
    'compiled with an unsupported toolchain.") })': "cuda-unsupported-ptx-version",
    "ERROR: CUDA error: the provided PTX was compiled with an unsupported toolchain., line 148":
        "cuda-unsupported-ptx-version",
    # MIC-DKFZ/nnUNet#1519
    "RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution":
        "cuda-nvlink-uncorrectable",
    # NVIDIA/nccl#1814: NCCL's IB transport relaying the verbs status, "with status=12"
    "NCCL WARN NET/IB : Got completion from peer xxx.xxx.xxx.xxx<55921> with status=12 opcode=1 len=0 "
    "vendor err 129 (Send) localGid ::ffff:29.87.4.221 remoteGids::ffff:29.87.88.182": "verbs-retry-exceeded",
    # NVIDIA/nccl#214, #1052: IBV_WC_LOC_PROT_ERR, the GPUDirect RDMA path (ACS, nccl#928)
    "transport/net_ib.cu:788 NCCL WARN NET/IB : Got completion with error 4, opcode 1, len 21938, "
    "vendor err 81": "verbs-local-protection",
    "transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer with error 4, opcode 0, len 0, "
    "vendor err 81 (Send) localGid ::ffff: remoteGid ::ffff:": "verbs-local-protection",
    # openucx/ucx#9590 (InfiniBand), #6000 (RoCE): UCX's mlx5 syndrome for the same retry exhaustion
    "[lxbk1127:2330856:0:2330856] ib_mlx5_log.c:177  Transport retry count exceeded on mlx5_0:1/IB "
    "(synd 0x15 vend 0x81 hw_synd 0/0)": "ucx-mlx5-retry-exceeded",
    "Error: Transport retry count exceeded on mlx5_0:1/RoCE": "ucx-mlx5-retry-exceeded",
    # VITA-Group/FasterSeg#82: PyTorch printing cudaGetErrorString of cudaErrorCallRequiresNewerDriver
    "RuntimeError: CUDA error: API call is not supported in the installed CUDA driver":
        "cuda-call-requires-newer-driver",
    # NVIDIA/nvidia-container-toolkit#1875: CUDA's text for 221 printed bare, no "CUDA" on the line
    "PTX JIT compiler library not found": "cuda-jit-compiler-not-found",
    # NVIDIA/nvidia-container-toolkit#1631 (a CDI spec dropping /dev/nvmap's group), and the
    # library's other form (anduril/jetpack-nixos#118)
    "NvRmMemInitNvmap failed: error Permission denied": "tegra-nvmap-permission-denied",
    "NvRmMemInitNvmap failed with Permission denied": "tegra-nvmap-permission-denied",
    # NVIDIA/aicr's GKE TCPXO guide: RxDM without the host /sys mount finds no GPU in the PCI tree
    "Number of GPUs detected in the PCI tree 0": "tcpxo-rxdm-no-pci-tree",
}

#: The frameworks' wrappers around the same errors, in the formats their sources print them:
#: TensorFlow's cuInit failure (an enumerator it has no name for as "UNKNOWN ERROR (n)"), JAX's
#: and Numba's driver API names, CuPy's runtime names, CUDA.jl's "(code n, ERROR_X)", ONNX
#: Runtime's CUDA EP "CUDA failure n: text", TensorRT's initialisation failure.
FRAMEWORKS = {
    "E tensorflow/stream_executor/cuda/cuda_driver.cc:271] failed call to cuInit: UNKNOWN ERROR (34)":
        "cuda-stub-library",
    "failed call to cuInit: CUDA_ERROR_SYSTEM_NOT_READY: system not yet initialized": "cuda-system-not-ready",
    "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: operation cuInit(0) failed: "
    "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE": "cuda-compat-not-supported",
    "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: Call to cuInit results in "
    "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803)": "cuda-system-driver-mismatch",
    "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorInsufficientDriver: CUDA driver version is "
    "insufficient for CUDA runtime version": "cuda-insufficient-driver",
    "ERROR: LoadError: CUDA error: system not yet initialized (code 802, ERROR_SYSTEM_NOT_READY)":
        "cuda-system-not-ready",
    "CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version ; GPU=0 ; hostname=n1":
        "cuda-insufficient-driver",
    "[TRT] CUDA initialization failure with error: 35. Please check your CUDA installation":
        "cuda-insufficient-driver",
}


def test_the_frameworks_wrappers_are_read() -> None:
    for line, entry in FRAMEWORKS.items():
        found = TABLE.read(line)
        assert found is not None and found.id == entry, line


def test_real_lines_are_read_in_every_form() -> None:
    for line, entry in REAL.items():
        found = TABLE.read(line)
        assert found is not None and found.id == entry, line


#: A job's own errors (its bug, never the stack's), NCCL's return codes that name no layer, and
#: look-alikes of the table's forms.
OWN = (
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.",
    "RuntimeError: CUDA error: invalid argument",
    "RuntimeError: CUDA error: device-side assert triggered",
    "RuntimeError: CUDA error: no kernel image is available for execution on the device",
    "RuntimeError: CUDA error: unspecified launch failure",
    "CUDA error 2 at kernel.cu:35",
    "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled system error, NCCL version 2.14.3",
    "ncclRemoteError: remote process exited or there was a network error",
    "torch.distributed.DistBackendError: NCCL error: internal error - please report this issue",
    # NCCL's "Error while creating shared memory segment" alone is the pod's /dev/shm
    # (tests/field/test_field_shm_nccl_create.py); after a CUDA error it is the job's.
    "HTTP request to /v1/completions returned status 200 in 35 ms on cuda:0",
    "nvidia-ml-py 12.535.133 installed; NVML version 535.129",
    "cuda worker stderr: 34 lines dropped",
    "the docs on forward compatibility were updated",
    # the JIT library's name in a healthy line, and a JIT the job turned off itself
    "Loaded PTX JIT compiler library libnvidia-ptxjitcompiler.so.1 (found in /usr/lib64)",
    "CUDA_DISABLE_PTX_JIT=1: PTX JIT compiler disabled, loading SASS only",
    # the memory manager's other failures, and EPERM (a device rule, not the node's group)
    "NvRmMemMgrInit failed: Memory Manager Not supported, line 333",
    "NvRmMemInitNvmap failed: error Operation not permitted",
    "NvRmMemInitNvmap succeeded after retry; Permission denied earlier was for /tmp/cache",
    # RxDM finding every GPU
    "Number of GPUs detected in the PCI tree 8",
    # each family's look-alike: a program's own error of the same library
    "RuntimeError: CUDA error: operation not permitted when stream is capturing",
    "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorInvalidValue: invalid argument",
    "pynvml.nvml.NVMLError_InvalidArgument: Invalid Argument",
    "pynvml.nvml.NVMLError_Uninitialized: Uninitialized",
    "ibv_rc_pingpong: Failed status local length error (1) for wr_id 2",
    "Send completion with error: local length error, status 1",
    # UCX's receiver-not-ready syndrome (a slow or gone peer) and a program's own retry limit
    "[lxbk1127:2330856:0:2330856] ib_mlx5_log.c:177  Receive-no-ready retry count exceeded on mlx5_0:1/IB "
    "(synd 0x16 vend 0x82 hw_synd 0/0)",
    "ValueError: remote transport retry count exceeded the protocol limit",
)


def test_a_jobs_own_errors_and_a_healthy_log_name_no_layer() -> None:
    for line in OWN:
        assert TABLE.read(line) is None, line
        assert top_pair(_job_log(line)) is None, line
    healthy = ("NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.2<0>\n"
               "NCCL INFO ncclCommInitRank comm 0x55 rank 0 nranks 8 cudaDev 0 busId 1b000 - Init COMPLETE\n"
               "Epoch 1, step 100: loss 2.31, 1180 tokens/s on cuda:0\n")
    assert top_pair(_job_log(healthy)) is None


def _shipped() -> str:
    return resources.files("gpunode").joinpath("data/job_errors.toml").read_text("utf-8")


def _entry(**fields: object) -> str:
    base: dict[str, object] = {
        "id": "x-err", "library": "cuda", "names": ["cudaErrorSystemNotReady"], "component": "fabric-manager",
        "cause": "fabric_manager_not_running", "source": "https://docs.nvidia.com/cuda/",
        "example": "cudaErrorSystemNotReady"}
    base.update(fields)
    body = "\n".join(f"{key} = {value!r}".replace("'", '"') if not isinstance(value, list)
                     else f"{key} = {msgspec.json.encode(value).decode()}" for key, value in base.items())
    return f"[[error]]\n{body}\n"


@pytest.mark.parametrize(("fields", "said"), [
    ({"component": "no-such-component"}, "unknown component"),
    ({"cause": "no_such_cause"}, "unknown cause"),
    ({"cause": "driver_library_mismatch"}, "not 'fabric-manager''s"),
    ({"names": ["SystemNotReady"]}, "not a cuda identifier"),
    ({"example": "all good"}, "does not read its own example"),
    ({"source": "docs.nvidia.com"}, "https://"),
    ({"library": "job", "names": [], "pattern": "x", "literal": "X", "example": "x"}, "lowercase literal"),
])
def test_validation_refuses_a_bad_entry_in_one_line(fields: dict[str, object], said: str) -> None:
    with pytest.raises(BundleError) as refused:
        parse_job_errors(_entry(**fields), shipped_known(), "job_errors.toml")
    message = str(refused.value)
    assert "\n" not in message and message.startswith("job_errors.toml: entry 'x-err': ") and said in message


def test_an_entry_listed_twice_is_refused() -> None:
    with pytest.raises(BundleError, match=r"^job_errors\.toml: entry 'x-err': id"):
        parse_job_errors(_entry() + _entry(), shipped_known(), "job_errors.toml")


def test_an_entry_listed_in_two_files_is_refused_naming_the_later() -> None:
    files = [("job_errors.toml", _entry()), ("job_errors/more.toml", _entry(id="x-other"))]
    with pytest.raises(BundleError, match=r"^job_errors/more\.toml: entry 'x-other': name"):
        parse_job_error_files(files, shipped_known())


def test_the_shipped_table_is_valid_and_reads_every_file() -> None:
    data = resources.files("gpunode").joinpath("data")
    more = [f for f in data.joinpath("job_errors").iterdir() if f.name.endswith(".toml")]
    counts = [len(parse_job_errors(f.read_text("utf-8"), shipped_known()).entries) for f in more]
    assert len(parse_job_errors(_shipped(), shipped_known()).entries) + sum(counts) == len(TABLE.entries)


def test_explain_reads_the_table_where_no_signature_matched() -> None:
    from gpunode.explain import explain_lines

    # the CUDA samples' deviceQuery form: the number alone names the driver too old
    said = explain_lines(["cudaGetDeviceCount returned 35"])
    assert said.matches and said.matches[0].cause.code == "cuda_driver_too_old"
    # a job's own CUDA error stays in its class
    own = explain_lines(["RuntimeError: CUDA error: an illegal memory access was encountered"])
    assert not own.matches or own.matches[0].cause.code.startswith("error_")


def test_explain_takes_a_coded_line_where_no_line_reads_as_an_error() -> None:
    from gpunode.explain import explain_lines

    # pynvml's exception for NVML_ERROR_GPU_IS_LOST carries no error word of its own
    said = explain_lines(["Epoch 3 step 120", "NVMLError_GpuIsLost: GPU is lost"])
    assert said.decisive is not None and said.decisive.text.endswith("GPU is lost")
    assert said.decisive_class == "gpu_fallen_off_bus"
    # perftest's words for the verbs connection it could not make
    assert TABLE.read("Failed to modify QP 59 to RTR") is not None
    assert TABLE.read("Failed to modify the configuration file") is None


def test_rxdm_short_of_cudas_count_is_not_the_missing_sysfs_mount() -> None:
    """Some GPUs in RxDM's PCI tree: the tree was read, so not the host /sys mount."""
    found = TABLE.read("Number of GPUs detected in the PCI tree 7 is not equal to the actual number of GPUs "
                       "reported by CUDA 8")
    assert found is None or found.id != "tcpxo-rxdm-no-pci-tree"
