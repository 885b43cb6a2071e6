"""Verdicts of active checks from what the test pods did (pure functions)."""

from __future__ import annotations

from dataclasses import dataclass

from gpunode.bundle.kube import Pod
from gpunode.checks.pods import display_state
from gpunode.model import Evidence
from gpunode.parse.nccl_tests import parse_nccl_tests
from gpunode.relazy import lazy_compile
from gpunode.validate.active.rated import Rating
from gpunode.validate.registry import failed, passed, unknown, warned
from gpunode.validation import Outcome

SMI_GPU_LINE = lazy_compile(r"^GPU (\d+): (.+?) \(UUID: (GPU-[0-9a-fA-F-]+)\)\s*$")
NCCL_LINE = lazy_compile(r"gpunode-nccl .*?busbw_GBps=(?P<busbw>[0-9.]+)")
LOG_TAIL = 3


@dataclass(frozen=True)
class Observed:
    """One test pod at the end of the wait: its last status, log, and any API error."""

    name: str
    pod: Pod | None
    log: str = ""
    error: str = ""
    waited_s: float = 0.0
    host_ip: str = ""

    @property
    def phase(self) -> str:
        return self.pod.status.phase if self.pod else ""

    def state(self) -> str:
        """kubectl-like state plus why it is not scheduled, for evidence."""
        if self.pod is None:
            return self.error or "pod not found"
        line = f"{display_state(self.pod)} ({self.phase})"
        scheduled = next((c for c in self.pod.status.conditions if c.type == "PodScheduled"), None)
        if scheduled is not None and scheduled.status == "False":
            line += f": {scheduled.reason}: {scheduled.message}"
        return line

    def evidence(self) -> Evidence:
        return Evidence(f"pod {self.name}", self.state())

    def pod_node(self) -> str:
        return self.pod.spec.node_name if self.pod and self.pod.spec.node_name else "its node"

    def log_tail(self) -> str:
        return " | ".join(self.log.strip().splitlines()[-LOG_TAIL:]) or "(empty log)"


def _not_finished(obs: Observed, what: str) -> Outcome | None:
    """Common endings: API error, never completed, or failed; None when the pod Succeeded."""
    if obs.error and obs.pod is None:
        return unknown(f"{what}: {obs.error}", Evidence(f"pod {obs.name}", obs.error))
    if obs.phase == "Succeeded":
        return None
    if obs.phase == "Failed":
        log = Evidence(f"pod {obs.name} log", obs.log_tail())
        return failed(f"{what} failed: {obs.state()}", obs.evidence(), log)
    return failed(f"{what} did not finish in {obs.waited_s:.0f}s: {obs.state()}", obs.evidence())


def gpu_lines(log: str) -> list[str]:
    """The ``GPU n: <name> (UUID: GPU-…)`` lines of ``nvidia-smi -L`` (MIG lines excluded)."""
    return [line.strip() for line in log.splitlines() if SMI_GPU_LINE.match(line.strip())]


def judge_gpu_smoke(obs: Observed, requested: int) -> Outcome:
    """The pod got ``requested`` GPUs and nvidia-smi listed exactly that many."""
    ending = _not_finished(obs, f"nvidia-smi pod requesting {requested} GPUs")
    if ending is not None:
        return ending
    listed = gpu_lines(obs.log)
    ev = Evidence(
        f"pod {obs.name} log", "; ".join(listed[:2]) + (f" (+{len(listed) - 2})" if len(listed) > 2 else "")
    )
    if len(listed) != requested:
        return failed(f"nvidia-smi -L listed {len(listed)} of {requested} GPUs", ev, obs.evidence())
    return passed(f"nvidia-smi -L listed all {requested} GPUs", ev)


def judge_pvc_write(claim_phase: str, obs: Observed, token: str, claim: str) -> Outcome:
    """The claim bound on the default class and the pod read back what it wrote."""
    claim_ev = Evidence(f"pvc {claim} status.phase", claim_phase or "not found")
    ending = _not_finished(obs, "PVC writer pod")
    if ending is not None:
        return Outcome(ending.verdict, ending.summary, (*ending.evidence, claim_ev), ending.fix)
    if claim_phase != "Bound":
        return failed(f"claim is {claim_phase or 'gone'} although the writer finished", claim_ev)
    if token not in obs.log:
        return failed(
            "the writer did not read back what it wrote",
            claim_ev,
            Evidence(f"pod {obs.name} log", obs.log_tail()),
        )
    return passed(
        f"claim Bound on the default StorageClass, written and read back on {obs.pod_node()}", claim_ev
    )


#: Bus bandwidth as a share of the pair's rated link speed: at or above PASS_SHARE passes
#: (a healthy InfiniBand or RoCE pair reaches 80-95 % at 1 GiB), below FAIL_SHARE fails
#: (NCCL on sockets, or GPUDirect RDMA off, lands far below), between warns.
PASS_SHARE = 0.6
FAIL_SHARE = 0.25


def judge_nccl(obs: Observed, floor_gbps: float, rating: Rating | None = None,
               worker: Observed | None = None) -> Outcome:
    """The launcher's nccl-tests table: its peak out-of-place bus bandwidth against the
    pair's rated link speed, or against the floor where the links' rate is unknown."""
    ending = _worker_ended(obs, worker) or _not_finished(obs, "NCCL all-reduce")
    if ending is not None:
        return ending
    log_ev = Evidence(f"pod {obs.name} log", obs.log_tail())
    busbw, size = _busbw(obs.log)
    if busbw is None:
        return failed("NCCL all-reduce printed no bandwidth line", log_ev)
    measured = f"bus bandwidth {busbw:g} GB/s" + (f" at {_size(size)}" if size else "")
    if rating is None:
        return _against_floor(measured, busbw, floor_gbps, log_ev)
    rated_ev = Evidence("rated link speed", f"{rating.gbps:g} GB/s: {rating.text}")
    share = busbw / rating.gbps if rating.gbps else 0.0
    against = f"{measured}, {share:.0%} of the links' rated {rating.gbps:g} GB/s ({rating.text})"
    if share < FAIL_SHARE:
        return failed(against, log_ev, rated_ev)
    if share < PASS_SHARE:
        return warned(against, log_ev, rated_ev)
    return passed(against, log_ev, rated_ev)


def _worker_ended(obs: Observed, worker: Observed | None) -> Outcome | None:
    """No launcher because its worker (sshd) never got a node or an address."""
    if obs.pod is not None or worker is None or worker.phase == "Running":
        return None
    return _not_finished(worker, "NCCL worker (sshd)") or failed(
        f"NCCL worker ended before its launcher started: {worker.state()}", worker.evidence())


def _against_floor(measured: str, busbw: float, floor_gbps: float, log_ev: Evidence) -> Outcome:
    if busbw < floor_gbps:
        return failed(f"{measured} below the floor of {floor_gbps:g} GB/s (links' rate unknown)", log_ev)
    return passed(f"{measured} (floor {floor_gbps:g} GB/s; links' rate unknown)", log_ev)


def _busbw(log: str) -> tuple[float | None, int | None]:
    """The peak out-of-place bus bandwidth of an nccl-tests table and its message size, or
    the project's own one-line form (``gpunode-nccl ... busbw_GBps=``)."""
    table = parse_nccl_tests(log)
    if table is not None and table.rows:
        best = max(table.rows, key=lambda r: r.busbw_gbps)
        return best.busbw_gbps, best.size_bytes
    match = NCCL_LINE.search(log)
    return (float(match.group("busbw")), None) if match else (None, None)


def _size(size: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"
