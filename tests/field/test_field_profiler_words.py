"""A GPU job's profiler speaking of the layer under it, read with the job-error table
(src/gpunode/data/job_errors.toml): CUPTI's results by name and number, Nsight's ERR_NVGPUCTRPERM,
and DCGM's profiling-module status in a DCGM client's output.

- CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35): the driver restricts the performance counters to admin
  users (NVreg_RestrictProfilingToAdminUsers). CUPTI's result codes,
  https://docs.nvidia.com/cupti/api/group__CUPTI__RESULT__API.html (cupti_result.h's comment on
  the enumerator); https://github.com/geoffxy/habitat/issues/5 and
  https://github.com/openxla/xprof/issues/63 in Docker; https://github.com/NVIDIA/gpu-operator/issues/1158.
- CUPTI_ERROR_NOT_INITIALIZED (15): a driver older than the job's CUPTI. CUPTI's compatibility
  section, https://docs.nvidia.com/cuda/archive/11.0_GA/cupti/Cupti/r_main.html;
  https://github.com/HPCToolkit/hpctoolkit/issues/367.
- ERR_NVGPUCTRPERM: https://developer.nvidia.com/ERR_NVGPUCTRPERM;
  https://github.com/HazyResearch/ThunderKittens/issues/73; https://github.com/IBM/powerai/issues/35.
- DCGM_ST_PROFILING_LIBRARY_ERROR's text ("The third-party Profiling module returned an
  unrecoverable error"): https://github.com/NVIDIA/DCGM/blob/master/dcgmlib/dcgm_structs.h;
  one DCGM profiling a node's GPUs, https://github.com/NVIDIA/dcgm-exporter/issues/126.

A CUPTI result that is a profiler's own business (a second subscriber, 39, under
compute-sanitizer or Nsight; an invalid parameter), a number on a line without CUPTI's name, and
DCGM's other profiling statuses are not read."""

from __future__ import annotations

from case import gpu_job_case
from scoreboard import top_pair

from gpunode.checks.job_words import job_cause, job_names
from gpunode.job_errors import job_error

#: https://github.com/geoffxy/habitat/issues/5 (a tracer in a container, by name)
PRIVILEGES_NAMED = ("/home/ubuntu/home/habitat/cpp/src/cuda/cupti_tracer.cpp:120: error: function "
                    "cuptiActivityRegisterCallbacks(cuptiBufferRequested, cuptiBufferCompleted) failed "
                    "with error CUPTI_ERROR_INSUFFICIENT_PRIVILEGES.")
#: The same result by number, as a profiler's check macro prints a CUptiResult
PRIVILEGES_NUMBER = "Error: function (*cuptiProfilerStartSessionPtr)(&params) failed with error 35."
#: https://github.com/HPCToolkit/hpctoolkit/issues/367's error, in a profiler's check form
NOT_INITIALIZED = ("cupti_tracer.cc:98: error: function cuptiSubscribe(&sub, cb, NULL) failed with error "
                   "CUPTI_ERROR_NOT_INITIALIZED")
NOT_INITIALIZED_NUMBER = "CUPTI call cuptiActivityEnable(CUPTI_ACTIVITY_KIND_KERNEL) failed with error 15"
#: https://github.com/HazyResearch/ThunderKittens/issues/73 (ncu in a rented container)
NCU = ("ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters "
       "on the target device 0. For instructions on enabling permissions and to get more information "
       "see https://developer.nvidia.com/ERR_NVGPUCTRPERM")
#: dcgmi and a go-dcgm client printing DCGM's errorString for DCGM_ST_PROFILING_LIBRARY_ERROR
DCGMI = "Error setting watches. Result: The third-party Profiling module returned an unrecoverable error"
GO_DCGM = "err: error watching fields: The third-party Profiling module returned an unrecoverable error"

#: Look-alikes: the job's own CUPTI conflicts and mistakes, CUPTI's library not found, a 35 that
#: is no CUPTI number, DCGM's profiling not supported on the GPU, a profiler that ran.
OWN = ("cuptiSubscribe failed with error CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED",
       'C++ exception with description "Failed to initialize CUPTI: 39" thrown in the test body.',
       "function cuptiActivityEnable(kind) failed with error CUPTI_ERROR_INVALID_PARAMETER",
       "Could not load dynamic library 'libcupti.so.11.2'; dlerror: libcupti.so.11.2: cannot open shared "
       "object file",
       "CUPTI: 35 activity records flushed",
       "Error: Profiling is not supported for this group of GPUs or GPU",
       "==PROF== Disconnected from process 9012")


def test_cupti_insufficient_privileges_names_the_drivers_counter_restriction() -> None:
    for line in (PRIVILEGES_NAMED, PRIVILEGES_NUMBER, NCU):
        assert job_names(line) == "driver" and job_cause(line, "driver") == "error_permission_denied", line
        assert top_pair(gpu_job_case("x-profiler", line)) == ("driver", "error_permission_denied")


def test_cupti_not_initialized_is_a_driver_older_than_cupti() -> None:
    for line in (NOT_INITIALIZED, NOT_INITIALIZED_NUMBER):
        assert job_cause(line, "driver") == "error_version_mismatch", line
        assert top_pair(gpu_job_case("x-profiler", line)) == ("driver", "error_version_mismatch")


def test_a_dcgm_clients_profiling_module_error_is_the_dcgm_profiling_holder() -> None:
    for line in (DCGMI, GO_DCGM, DCGMI.lower()):
        assert job_cause(line, "dcgm-exporter") == "dcgm_profiling_module_error", line
        assert top_pair(gpu_job_case("x-dcgmi", line)) == ("dcgm-exporter", "dcgm_profiling_module_error")


def test_a_profilers_own_business_is_not_read() -> None:
    for line in OWN:
        assert job_error(line) is None, line
        assert top_pair(gpu_job_case("x-profiler", line)) is None, line


def test_a_cupti_number_is_not_read_as_cudas() -> None:
    """35 on a CUPTI call's line under CUDA's path is CUPTI's privileges, not CUDA's old driver."""
    line = "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so: cuptiProfilerInitialize returned 35"
    assert job_cause(line, "driver") == "error_permission_denied"
    found = job_error("cudaGetDeviceCount returned 35")
    assert found is not None and found.id == "cuda-insufficient-driver"
