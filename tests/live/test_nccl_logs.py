"""NCCL's transport choice read live (issue 26): the start of a running GPU job's log where
NCCL runs at INFO, as the simulated nccl_socket_fallback scenario and a plain pod show it."""

from __future__ import annotations

from pathlib import Path

import msgspec

from gpunode.collect.plan import NCCL_LOGS_PER_NODE, nccl_log_targets, nccl_verbose
from gpunode.collect.slim import Pod, PodPage
from gpunode.sim import build_bundle, load_scenario


def _pod(name: str, node: str, nccl_debug: str | None, *, running: bool = True) -> Pod:
    env = [{"name": "NCCL_DEBUG", "value": nccl_debug}] if nccl_debug is not None else []
    state = {"running": {"startedAt": "2026-12-05T10:00:00Z"}} if running else {
        "waiting": {"reason": "ContainerCreating"}}
    doc = {"metadata": {"name": name, "namespace": "ml"},
           "spec": {"nodeName": node, "containers": [{"name": "trainer", "env": env}]},
           "status": {"phase": "Running" if running else "Pending",
                      "containerStatuses": [{"name": "trainer", "state": state}]}}
    return msgspec.convert(doc, Pod)


def test_only_running_jobs_that_log_nccl_at_info_are_read_from_their_start() -> None:
    pods = [_pod("info", "gpu-a", "INFO"), _pod("trace", "gpu-a", "trace"), _pod("warn", "gpu-a", "WARN"),
            _pod("none", "gpu-a", None), _pod("starting", "gpu-a", "INFO", running=False),
            _pod("elsewhere", "gpu-b", "INFO")]
    assert [nccl_verbose(p) for p in pods] == [True, True, False, False, True, True]
    targets = nccl_log_targets(pods, ["gpu-a"])
    assert [(t.pod, t.container, t.previous, t.head) for t in targets] == [
        ("info", "trainer", False, True), ("trace", "trainer", False, True)]
    assert targets[0].bundle_path == "logs/ml/info/trainer.log"


def test_a_node_gives_at_most_a_few_jobs_logs() -> None:
    pods = [_pod(f"rank-{i}", "gpu-a", "INFO") for i in range(10)]
    assert len(nccl_log_targets(pods, ["gpu-a"])) == NCCL_LOGS_PER_NODE


def test_the_scenario_pod_is_the_one_read(tmp_path: Path) -> None:
    bundle = build_bundle(load_scenario("fault-nccl-socket-fallback"), tmp_path / "b")
    pods = msgspec.json.decode((bundle / "cluster" / "pods.json").read_bytes(), type=PodPage).items
    targets = nccl_log_targets(pods, ["gpu-wk-01", "gpu-wk-02"])
    assert [(t.node, t.bundle_path) for t in targets] == [
        ("gpu-wk-02", "logs/ml/llm-pretrain-1/trainer.log")]
    assert "NCCL INFO NET/IB : No device found." in (bundle / targets[0].bundle_path).read_text()
