"""CUDA's busy-or-unavailable error (cudaErrorDevicesUnavailable, 46) in a GPU job on a node whose
GPUs are vGPUs is the guest driver refusing CUDA, the driver's ``error_device``
(checks.vgpu_words): an unlicensed vGPU is degraded past its grace period while nvidia-smi
answers. On a GPU that is no vGPU the vGPU reading says nothing: the same words keep their
other readings, settled by the node's compute mode (checks.busy_gpus: exclusive mode held by
another process is the runtime's leftover; the Default mode these nodes' nvidia-smi shows is the
driver or the device refusing).

Sources: NVIDIA vGPU for Compute licensing (an unlicensed VM degrades after a 20-minute grace
period; docs.nvidia.com/ai-enterprise/release-8/latest/infra-software/vgpu/licensing.html);
Azure/AKS#4870 (PyTorch's "CUDA-capable device(s) is/are busy or unavailable" on unlicensed A10
vGPU nodes); NVIDIA/DIGITS#2005 (the same error, 46, on a bare-metal K40m in exclusive-process
mode held by another process: the look-alike that is not the driver's)."""

from __future__ import annotations

from case import Case, running_job_case
from scoreboard import diagnose_case, top_pair, top_root_cause

from gpunode.checks.vgpu_words import VGPU_PROFILE

TF = ("tensorflow.python.framework.errors_impl.InternalError: CUDA runtime implicit initialization on "
      "GPU:0 failed. Status: all CUDA-capable devices are busy or unavailable")
TORCH = "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable"


def _job(text: str, gpu: str | None) -> Case:
    cluster = {"driver_mode": "host", "gpu_node": {"gpu": gpu, "gpus": 1}} if gpu else None
    return running_job_case("x-vgpu", text, cluster)


def test_vgpu_profiles_are_recognised() -> None:
    for name in ("GRID V100D-8C", "NVIDIA A10-24Q", "GRID A100-4-20C", "NVIDIA H100-80C", "GRID-V100D-8C"):
        assert VGPU_PROFILE.match(name), name
    for name in ("NVIDIA A10", "Tesla K40m", "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB", "Tesla T4"):
        assert not VGPU_PROFILE.match(name), name


def test_busy_or_unavailable_on_a_vgpu_is_the_driver_refusing() -> None:
    for text in (TF, TORCH):
        assert top_pair(_job(text, "GRID V100D-8C")) == ("driver", "error_device"), text


def test_busy_or_unavailable_on_a_physical_gpu_is_not_read_as_the_vgpu() -> None:
    for text in (TF, TORCH):
        for gpu in ("Tesla K40m", None):
            case = _job(text, gpu)
            top = top_root_cause(diagnose_case(case), case.node)
            assert top is None or "vGPU" not in top.title, (text, gpu, top)
    vgpu = _job(TF, "GRID V100D-8C")
    top = top_root_cause(diagnose_case(vgpu), vgpu.node)
    assert top is not None and "vGPU" in top.title
