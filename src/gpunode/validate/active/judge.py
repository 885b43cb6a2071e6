"""Verdicts of active checks from what the test pods did (pure functions)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpunode.bundle.kube import Pod
from gpunode.checks.pods import display_state
from gpunode.model import Evidence
from gpunode.validate.registry import failed, passed, unknown
from gpunode.validation import Outcome

SMI_GPU_LINE = re.compile(r"^GPU (\d+): (.+?) \(UUID: (GPU-[0-9a-fA-F-]+)\)\s*$")
NCCL_LINE = re.compile(r"gpunode-nccl .*?busbw_GBps=(?P<busbw>[0-9.]+)")
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


def judge_nccl(obs: Observed, floor_gbps: float) -> Outcome:
    """Rank 0 reports bus bandwidth; it must reach the floor."""
    ending = _not_finished(obs, "NCCL all-reduce")
    if ending is not None:
        return ending
    match = NCCL_LINE.search(obs.log)
    log_ev = Evidence(f"pod {obs.name} log", obs.log_tail())
    if match is None:
        return failed("NCCL all-reduce printed no bandwidth line", log_ev)
    busbw = float(match.group("busbw"))
    if busbw < floor_gbps:
        return failed(f"bus bandwidth {busbw:g} GB/s below the floor of {floor_gbps:g} GB/s", log_ev)
    return passed(f"bus bandwidth {busbw:g} GB/s (floor {floor_gbps:g} GB/s)", log_ev)
