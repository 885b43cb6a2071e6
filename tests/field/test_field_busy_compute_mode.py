"""CUDA's busy-or-unavailable error (cudaErrorDevicesUnavailable, 46) in a GPU job, settled by
the node's compute mode (gpunode.checks.busy_gpus): exclusive GPUs that carry a context on a
node handing out whole GPUs are held by a process no pod accounts for, the container
runtime's leftover; in Default mode no other process can make a GPU busy, so the driver or the
device refuses the context.

Sources: the CUDA runtime API's text for cudaErrorDevicesUnavailable (as docs.rs/crseo-sys
quotes it: "busy/unavailable due to use of cudaComputeModeProhibited,
cudaComputeModeExclusiveProcess, ..."); NVML's compute modes (cuda.bindings.nvml.ComputeMode:
Exclusive_Process "only one context per device"); NVIDIA/DIGITS#2005 (an E. Process K40m held
by another process); pytorch/pytorch#3871 (the GPU free once the holder is killed);
tensorflow/tensorflow#526 (the error "should not be possible" in DEFAULT mode);
pytorch/pytorch#100691 (the error on Default-mode T4s). Look-alikes: the same exclusive
GPUs held while the job's log says nothing of the error, an exclusive GPU with no context on
it, Prohibited mode and GPUs shared between pods stay silent."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

from gpunode.checks.busy_gpus import (
    all_exclusive,
    busy_owner,
    compute_modes,
    context_refused_index,
    several_gpus,
)

#: NVIDIA/DIGITS#2005's table (driver 375.26): GPU 0 in E. Process with a process on it.
HELD = """\
| NVIDIA-SMI 375.26                 Driver Version: 375.26                    |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  Tesla K40m          On   | 0000:04:00.0     Off |                    0 |
| N/A   35C    P0    63W / 235W |   9074MiB / 11439MiB |      0%   E. Process |
+-------------------------------+----------------------+----------------------+
"""
#: The same GPU with no context on it.
IDLE = HELD.replace("9074MiB", "   0MiB")
#: A current driver's row in Default mode.
DEFAULT = """\
| NVIDIA-SMI 525.105.17   Driver Version: 525.105.17   CUDA Version: 12.0     |
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|   0  Tesla T4            Off  | 00000000:3B:00.0 Off |                    0 |
| N/A   43C    P0    26W /  70W |      2MiB / 15360MiB |      0%      Default |
"""
#: PyTorch's line (pytorch/pytorch#3871).
BUSY = ("THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch/work/torch/lib/THC/generic/THCStorage.cu "
        "line=66 error=46 : all CUDA-capable devices are busy or unavailable")


def _job(case_id: str, log: str, table: str | None = None, gpus: str = "1") -> Any:
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "job-0", "namespace": "default", "container": "main",
         "resources": {"limits": {"nvidia.com/gpu": gpus}}, "state": "Error", "exit_code": 1},
        {"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
         "container": "main", "text": log + "\n"}]
    if table is not None:
        evidence.append({"kind": "node-cmd", "name": "nvidia-smi.txt", "text": table})
    return synthetic_case(case_id, evidence, cluster={"driver_mode": "host"})


def test_modes_are_read_from_the_table_else_the_xml() -> None:
    assert compute_modes(HELD, "") == ("Exclusive_Process",)
    assert compute_modes("", "<compute_mode>Default</compute_mode>") == ("Default",)
    assert compute_modes("no table", "") == ()


def test_the_owner_by_compute_mode() -> None:
    assert busy_owner(HELD, "", shared=False) == "container-runtime"
    assert busy_owner(DEFAULT, "", shared=False) == "driver"


def test_a_job_given_several_gpus_counts_them_over_its_containers() -> None:
    assert several_gpus([{"nvidia.com/gpu": "4"}])
    assert several_gpus([{"nvidia.com/gpu": "1"}, {"nvidia.com/gpu": "1"}])
    assert not several_gpus([{"nvidia.com/gpu": "1"}, {"cpu": "4"}])
    assert not several_gpus([{"nvidia.com/gpu": "2Gi"}])


def test_held_exclusive_gpus_under_a_multi_gpu_job_say_nothing() -> None:
    # its own unpinned ranks may be the holders (karpathy/nanoGPT#116)
    assert busy_owner(HELD, "", shared=False, own_ranks=True) is None
    assert top_pair(_job("x-busy-ranks", BUSY, HELD, gpus="4")) is None


def test_a_multi_gpu_job_in_default_mode_is_still_the_driver_s() -> None:
    assert busy_owner(DEFAULT, "", shared=False, own_ranks=True) == "driver"
    assert top_pair(_job("x-busy-ranks-default", BUSY, gpus="4")) == ("driver", "error_device")


def test_exclusive_idle_shared_or_prohibited_say_nothing() -> None:
    assert busy_owner(IDLE, "", shared=False) is None
    assert busy_owner(HELD, "", shared=True) is None
    assert busy_owner(DEFAULT.replace("     Default |", "  Prohibited |"), "", shared=False) is None
    assert busy_owner("", "", shared=False) is None


def test_a_job_refused_on_held_exclusive_gpus_is_the_runtime_s() -> None:
    assert top_pair(_job("x-busy-held", BUSY, HELD)) == ("container-runtime", "error_device")


def test_a_job_refused_in_default_mode_is_the_driver_s() -> None:
    # the builder's node reports its GPUs in Default mode
    assert top_pair(_job("x-busy-default", BUSY)) == ("driver", "error_device")


def test_held_exclusive_gpus_under_a_job_that_runs_are_healthy() -> None:
    assert top_pair(_job("x-busy-quiet", "Using device: cuda:0\nEpoch 1/10 loss=0.52", HELD)) is None


#: OpenMM's CudaContext where every cuCtxCreate failed (openmm/openmm#2840: Exclusive_Process
#: GPUs), and LAMMPS's GPU package refusing several ranks on one GPU (its error reference).
NO_CONTEXT = "No compatible CUDA device is available"
NO_SHARING = "Accelerator sharing is not currently supported on system"


def test_no_context_on_exclusive_gpus_is_the_driver_s_mode() -> None:
    for line in (NO_CONTEXT, NO_SHARING):
        assert context_refused_index(["Running tests...", line]) == 1
        for table in (HELD, IDLE):
            assert top_pair(_job("x-no-context", line, table)) == ("driver", "error_device")


def test_no_context_words_off_exclusive_mode_or_in_a_multi_gpu_job_say_nothing_of_the_mode() -> None:
    """In Default mode the words mean a GPU too old or full; a job given several GPUs may have
    opened its first GPU from every rank; a healthy line naming a compatible device is no word."""
    assert not all_exclusive(DEFAULT, "")
    assert top_pair(_job("x-no-context-default", NO_CONTEXT, DEFAULT)) != ("driver", "error_device")
    assert top_pair(_job("x-no-context-ranks", NO_CONTEXT, HELD, gpus="4")) is None
    assert context_refused_index(["Found a compatible CUDA device: Tesla K40m"]) is None
