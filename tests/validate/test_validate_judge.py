"""Active-check verdicts from pod outcomes, on output recorded on real H200 hosts."""

from __future__ import annotations

import msgspec

from gpunode.bundle.kube import Pod
from gpunode.validate.active.judge import Observed, gpu_lines, judge_gpu_smoke, judge_nccl, judge_pvc_write
from gpunode.validate.live import compare_scrapes
from gpunode.validation import Verdict

# `nvidia-smi -L` on a one-GPU H200 host (device run); MIG lines must not count.
SMI_L = "GPU 0: NVIDIA H200 (UUID: GPU-6244f6dc-89b3-527a-cce8-403b1f872938)\n"
MIG_L = SMI_L + "  MIG 1g.18gb     Device  0: (UUID: MIG-5c89e5a2-3c9b-5b6f-8c49-1f7e0c7d6a11)\n"
# The NCCL test pod's command run as two nodes on a 2x H200 (NV18) host: rank 0's output.
NCCL_OUT = (
    "NCCL version 2.28.9+cuda13.0\ngpunode-nccl world=2 bytes=1073741824 algbw_GBps=328.5 busbw_GBps=328.5\n"
)


def pod(phase: str, **status: object) -> Pod:
    return msgspec.convert({"metadata": {"name": "p"}, "status": {"phase": phase, **status}}, Pod)


def test_gpu_lines_count_full_gpus_only() -> None:
    assert gpu_lines(SMI_L) == [SMI_L.strip()]
    assert gpu_lines(MIG_L) == [SMI_L.strip()]


def test_smoke_pass_and_short_count() -> None:
    done = Observed("gpu-smoke-a", pod("Succeeded"), SMI_L)
    assert judge_gpu_smoke(done, 1).verdict == Verdict.PASS
    short = judge_gpu_smoke(done, 8)
    assert short.verdict == Verdict.FAIL and "listed 1 of 8 GPUs" in short.summary


def test_smoke_pending_reports_the_scheduler() -> None:
    cond = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "0/5 nodes are available",
    }
    waiting = Observed("gpu-smoke-a", pod("Pending", conditions=[cond]), waited_s=300)
    outcome = judge_gpu_smoke(waiting, 8)
    assert outcome.verdict == Verdict.FAIL
    assert (
        "did not finish in 300s" in outcome.summary
        and "Unschedulable: 0/5 nodes are available" in outcome.summary
    )


def test_smoke_denied_is_unknown() -> None:
    outcome = judge_gpu_smoke(Observed("gpu-smoke-a", None, error="403 Forbidden: pods is forbidden"), 8)
    assert outcome.verdict == Verdict.UNKNOWN


def test_nccl_real_output_against_floor() -> None:
    done = Observed("nccl-rank0", pod("Succeeded"), NCCL_OUT)
    assert judge_nccl(done, 100).verdict == Verdict.PASS
    low = judge_nccl(done, 400)
    assert low.verdict == Verdict.FAIL and "328.5 GB/s below the floor of 400 GB/s" in low.summary
    silent = judge_nccl(
        Observed("nccl-rank0", pod("Succeeded"), "NCCL WARN NET/IB : No device found.\n"), 100
    )
    assert silent.verdict == Verdict.FAIL and "no bandwidth line" in silent.summary


def test_pvc_write_needs_bound_claim_and_token() -> None:
    done = Observed("pvc-writer", pod("Succeeded"), "gpunode-validate-x-ok\n")
    assert judge_pvc_write("Bound", done, "gpunode-validate-x-ok", "c").verdict == Verdict.PASS
    assert judge_pvc_write("Bound", done, "other", "c").verdict == Verdict.FAIL


def test_dcgm_freshness_compares_values_per_gpu() -> None:
    first = (
        'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",UUID="GPU-1"} 1000\n'
        'DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-1"} 40\n'
    )
    moved = first.replace(" 1000", " 2500")
    assert compare_scrapes(first, moved) == (True, "1 of 2 DCGM values changed between the two scrapes")
    fresh, detail = compare_scrapes(first, first)
    assert not fresh and "identical" in detail
