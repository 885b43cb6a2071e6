"""The CUDA libraries' statuses in a GPU job's log (src/gpunode/data/job_errors/cuda_libraries.toml):
cuDNN's incompatible CUDA driver and cuTENSOR's insufficient driver name the node's driver; the
rest of cuDNN, cuBLAS, cuFFT, cuRAND, cuSOLVER, cuSPARSE, NVRTC and nvJPEG is the job's or its
image's business (a library built without this GPU's architecture, two cuDNN installs mixed, a
library missing from the image) and names no layer; TensorRT's relayed CUDA errors are read as
CUDA's; a number after a library's name is not read as a CUDA error."""

from __future__ import annotations

from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.job_errors import load_job_errors

TABLE = load_job_errors()


def _job_log(text: str) -> Case:
    """A GPU job's log in a pod that asks for the NVIDIA runtime by its RuntimeClass."""
    return synthetic_case("x-cuda-libraries", [
        {"kind": "workload", "name": "job-0", "namespace": "default", "runtimeClassName": "nvidia"},
        {"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
         "text": text + "\n"},
    ], cluster={"driver_mode": "host"})


#: Lines that name the driver, in the forms the libraries and their callers print them.
READ = {
    # JuliaGPU/CuArrays.jl#330: cuTENSOR's samples on a 418 driver
    "Error: CUTENSOR_STATUS_INSUFFICIENT_DRIVER in line 156": "cutensor-insufficient-driver",
    # CuPy's and cuQuantum's bindings raise the library's name
    "cupy_backends.cuda.libs.cutensor.CuTensorError: CUTENSOR_STATUS_INSUFFICIENT_DRIVER":
        "cutensor-insufficient-driver",
    "cuquantum.bindings.cutensornet.cuTensorNetError: CUTENSORNET_STATUS_INSUFFICIENT_DRIVER":
        "cutensor-insufficient-driver",
    # cuDNN 9's status as PyTorch (cudnnGetErrorString), cuDNN's frontend and Caffe's check print it
    "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER":
        "cudnn-incompatible-cuda-driver",
    "RuntimeError: CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR: cudnnFinalize Descriptor Failed "
    "cudnn_status: CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER": "cudnn-incompatible-cuda-driver",
    "Check failed: status == CUDNN_STATUS_SUCCESS (3005 vs. 0)  The requested functionality is not "
    "compatible with the current CUDA driver. cuDNN": "cudnn-incompatible-cuda-driver",
    # TensorRT relaying CUDA's number and CUDA's text (NVIDIA/TensorRT's logger, TRT 8 and 10)
    "[TRT] [W] CUDA initialization failure with error: 35. Please check your CUDA installation:  "
    "http://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html": "cuda-insufficient-driver",
    "[12/06/2024-10:11:12] [TRT] [E] 1: [defaultAllocator.cpp::allocate::31] Error Code 1: Cuda Runtime "
    "(CUDA driver version is insufficient for CUDA runtime version)": "cuda-insufficient-driver",
    # Caffe's CUDA check after its cuBLAS and cuRAND handles failed (rbgirshick/py-faster-rcnn#667)
    "F0825 12:20:57.196717 12256 common.cpp:142] Check failed: error == cudaSuccess (35 vs. 0)  "
    "CUDA driver version is insufficient for CUDA runtime version": "cuda-insufficient-driver",
}


def test_the_driver_named_by_a_library_is_read() -> None:
    for line, entry in READ.items():
        found = TABLE.read(line)
        assert found is not None and found.id == entry, line
        top = top_pair(_job_log(line))
        assert top == ("driver", "cuda_driver_too_old"), (line, top)


#: The libraries' statuses that are the job's or its image's business: real lines
#: (davisking/dlib#1263, tensorflow/tensorflow#8360, chelsea0x3b/cudarc#113,
#: PaddlePaddle/PaddleDetection#9436) and each library's forms.
SILENT = (
    "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`",
    "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, "
    "m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`",
    "RuntimeError: CUDA error: CUBLAS_STATUS_ARCH_MISMATCH when calling `cublasLtMatmul(ltHandle, ...)`",
    "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
    "CUDNN_STATUS_ARCH_MISMATCH: Your GPU is too old and not supported by cuDNN",
    "E tensorflow/stream_executor/cuda/cuda_dnn.cc:397] could not create cudnn handle: "
    "CUDNN_STATUS_NOT_INITIALIZED",
    "ExternalError: CUDNN error(9), CUDNN_STATUS_NOT_SUPPORTED.",
    "RuntimeError: cuDNN error: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH",
    "RuntimeError: CUDNN_BACKEND_TENSOR_DESCRIPTOR cudnnFinalize failed: "
    "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH",
    "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH",
    "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART",
    "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED_CUDART",
    "Could not load library libcudnn_cnn_infer.so.8. Error: libcudnn_cnn_infer.so.8: cannot open shared "
    "object file: No such file or directory",
    "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 9, 2) but found runtime "
    "version (8, 5, 0).",
    "RuntimeError: cuFFT error: CUFFT_INTERNAL_ERROR",
    "cupy.cuda.curand.CURANDError: CURAND_STATUS_ARCH_MISMATCH",
    "RuntimeError: cuRAND error 102 in /opt/pytorch/aten/src/ATen/cuda/CUDAGeneratorImpl.cpp",
    "RuntimeError: cusolver error: CUSOLVER_STATUS_INTERNAL_ERROR, when calling `cusolverDnCreate(handle)`",
    "RuntimeError: CUDA error: CUSPARSE_STATUS_NOT_INITIALIZED when calling `cusparseCreate(&handle)`",
    "cupy.cuda.compiler.CompileException: nvrtc: error: invalid value for --gpu-architecture (-arch)",
    "RuntimeError: nvjpegCreateEx failed: NVJPEG_STATUS_ARCH_MISMATCH",
    "cupy_backends.cuda.libs.cutensor.CuTensorError: CUTENSOR_STATUS_NOT_SUPPORTED",
    "[TRT] [E] 6: The engine plan file is generated on an incompatible device, expecting compute 8.6 got "
    "compute 8.9, please rebuild.",
    "[TRT] [E] 1: [defaultAllocator.cpp::allocate::20] Error Code 1: Cuda Runtime (out of memory)",
)


def test_the_jobs_and_images_own_statuses_name_no_layer() -> None:
    for line in SILENT:
        assert TABLE.read(line) is None, line
        assert top_pair(_job_log(line)) is None, line


def test_a_healthy_jobs_library_banner_stays_silent() -> None:
    healthy = (
        "[TRT] [I] Loaded engine size: 412 MiB\n"
        "[TRT] [W] CUDA lazy loading is not enabled. Enabling it can significantly reduce device memory "
        "usage and speed up TensorRT initialization.\n"
        "I0000 cuda_dnn.cc:529] Loaded cuDNN version 90300\n"
        "W0000 cuda_dnn.cc:8310] Unable to register cuDNN factory: Attempting to register factory for "
        "plugin cuDNN when one has already been registered\n"
        "cuTENSOR 2.0.1 with cuBLAS 12.4.5 ready; CUTENSOR_STATUS_SUCCESS\n"
        "Epoch 1, step 100: loss 2.31, 1180 tokens/s on cuda:0\n")
    assert top_pair(_job_log(healthy)) is None
