"""A GPU job's CUDA unknown error at initialisation on a node whose lsmod lists nvidia and not
nvidia_uvm is the driver's ``nvidia_uvm_missing`` (checks.uvm_words): CUDA needs the
unified-memory module, nvidia-smi does not, and the first CUDA call fails with an error that
several layers share, which the node's loaded modules settle.

Sources: NVlabs/nvbio-gpl#7 (deviceQuery's "cudaGetDeviceCount returned 30 -> unknown error",
fixed by installing the uvm module); Bumblebee-Project/Bumblebee#623 (PyCUDA's "cuInit failed:
unknown" with nvidia_uvm not loaded); ultralytics/ultralytics#7716 (PyTorch's "CUDA unknown
error" after a suspend, fixed by reloading nvidia_uvm). Look-alikes: the same words on a node
whose lsmod lists nvidia_uvm, or lists no nvidia module at all, are not read as it.

Without nvidia_uvm no CUDA call gets past initialisation, so the runtime's own text for
cudaErrorUnknown as a job's CUDA check prints it is read the same: nccl-tests' CUDACHECK
(https://github.com/NVIDIA/nccl-tests/blob/master/src/common.h: "%s: Test CUDA failure %s:%d '%s'"
with cudaGetErrorString; NVIDIA/pyxis#81, fixed by modprobe nvidia_uvm), PyTorch's C10_CUDA_CHECK
("CUDA error: unknown error", https://github.com/pytorch/pytorch/blob/main/c10/cuda/CUDAException.cpp).
With nvidia_uvm loaded the same words stay unread by this rule."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

DEVICE_QUERY = "cudaGetDeviceCount returned 30\n-> unknown error\nResult = FAIL"
PYCUDA = "pycuda._driver.Error: cuInit failed: unknown"
TORCH = ("RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment, e.g. "
         "changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the available devices "
         "to be zero.")

#: nccl-tests' CUDACHECK line (src/common.h) with cudaGetErrorString(cudaErrorUnknown)
NCCL_TESTS = ("node-1: Test CUDA failure common.cu:893 'unknown error'\n"
              " .. node-1 pid 81: Test failure common.cu:844")
#: PyTorch's C10_CUDA_CHECK text for cudaErrorUnknown
#: the driver API's enumerator alone, as Apptainer's GPU troubleshooting quotes it for a host whose
#: nvidia_uvm was never loaded (https://apptainer.org/docs/user/latest/gpu.html)
BARE_ENUM = "CUDA_ERROR_UNKNOWN"
TORCH_CHECK = "RuntimeError: CUDA error: unknown error\nCUDA kernel errors might be asynchronously reported"

NO_UVM = ("nvidia_drm             45056  0\nnvidia_modeset       1110016  1 nvidia_drm\n"
          "nvidia              14368768  1 nvidia_modeset\n")
WITH_UVM = ("nvidia_uvm           1032192  2\n"
            + NO_UVM.replace("1 nvidia_modeset", "3 nvidia_uvm,nvidia_modeset"))
NO_NVIDIA = "nouveau              2293760  0\ndrm_kms_helper        184320  1 nouveau\n"


def _job(text: str, lsmod: str) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "job-0", "namespace": "default", "container": "job", "state": "Error",
         "exit_code": 1},
        {"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
         "container": "job", "text": text + "\n"},
        {"kind": "node-cmd", "name": "lsmod.txt", "text": lsmod}]
    return synthetic_case("x-uvm", evidence)


def test_an_init_unknown_error_without_nvidia_uvm_is_the_module_missing() -> None:
    for text in (DEVICE_QUERY, PYCUDA, TORCH, NCCL_TESTS, TORCH_CHECK, BARE_ENUM):
        assert top_pair(_job(text, NO_UVM)) == ("driver", "nvidia_uvm_missing"), text


def test_with_nvidia_uvm_loaded_or_no_nvidia_module_it_is_not_read() -> None:
    for text in (DEVICE_QUERY, PYCUDA, TORCH, NCCL_TESTS, TORCH_CHECK, BARE_ENUM):
        for lsmod in (WITH_UVM, NO_NVIDIA):
            top = top_pair(_job(text, lsmod))
            assert top is None or top[1] != "nvidia_uvm_missing", (text, lsmod, top)


def test_a_longer_name_holding_the_enumerator_is_not_read() -> None:
    from gpunode.checks.uvm_words import says_init_unknown
    assert not says_init_unknown("CUDA_ERROR_UNKNOWN_FOO")
    assert not says_init_unknown("status=CUDA_SUCCESS (no CUDA_ERROR_UNKNOWNS seen)")


#: NVlabs/nvbio-gpl#7: CUDA's attempt to load Ubuntu's per-branch uvm module, whose package was
#: never installed; and modprobe's own word for an absent nvidia-uvm.
UVM_LOAD = ("modprobe: ERROR: ../libkmod/libkmod-module.c:809 kmod_module_insert_module() could not find "
            "module by name='nvidia_331_uvm'\n"
            "modprobe: ERROR: could not insert 'nvidia_331_uvm': Function not implemented\n"
            "error   : caught a std::bad_alloc exception:")
UVM_NOT_FOUND = "modprobe: FATAL: Module nvidia-uvm not found in directory /lib/modules/5.15.0-91-generic"
#: The loader failing on another module (a job's own setup loading a NIC driver).
OTHER_MODULE = "modprobe: ERROR: could not insert 'ib_umad': Operation not permitted"


def test_the_loader_failing_on_the_uvm_module_without_nvidia_uvm_is_the_module_missing() -> None:
    updates = "modprobe: ERROR: could not insert 'nvidia_331_updates_uvm': No such device"
    for text in (UVM_LOAD, UVM_NOT_FOUND, updates):
        assert top_pair(_job(text, NO_UVM)) == ("driver", "nvidia_uvm_missing"), text


def test_the_loader_words_with_nvidia_uvm_loaded_or_on_another_module_are_not_it() -> None:
    assert top_pair(_job(UVM_LOAD, WITH_UVM)) != ("driver", "nvidia_uvm_missing")
    assert top_pair(_job(OTHER_MODULE, NO_UVM)) != ("driver", "nvidia_uvm_missing")
