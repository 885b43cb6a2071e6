"""Run the gpunode agent on the lent H200 (read-only): cycle timings, memory, endpoints."""

import json
import os
import statistics
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from gpunode.agent.condition import condition_for
from gpunode.agent.judge import judge_probe
from gpunode.agent.loop import Agent, AgentConfig
from gpunode.agent.server import start_server
from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.probe import run_probe, write_probe_bundle

OUT = Path(os.environ.get("OUT", "."))
NODE = "h200-device"
summary: dict[str, object] = {}


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


def median_ms(fn: Callable[[], object], runs: int = 30) -> float:
    fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return round(statistics.median(times) * 1000, 2)


def judge_costs(smi: bool) -> None:
    """Judge: in memory vs a temporary bundle on disk, on this machine's own probe."""
    result = run_probe("/", NODE, run_nvidia_smi=smi)

    def on_disk():
        with tempfile.TemporaryDirectory() as d:
            write_probe_bundle(result, Path(d))
            return diagnose(load_bundle(Path(d)), read_node_observations, [NODE])

    summary[f"judge_nvidia_smi_{smi}"] = {
        "raw_bytes": sum(len(v) for v in result.raw.values()),
        "in_memory_ms": median_ms(lambda: judge_probe(result)),
        "temp_bundle_ms": median_ms(on_disk),
        "condition": condition_for(judge_probe(result).nodes[0]).__dict__,
        "statuses": {
            c.component: c.status.value for c in judge_probe(result).nodes[0].components if c.layer <= 2
        },
    }
    print(smi, json.dumps(summary[f"judge_nvidia_smi_{smi}"]), flush=True)


def loop_costs(smi: bool, cycles: int) -> None:
    """The agent loop itself, with or without nvidia-smi each cycle."""
    judge_times: list[float] = []

    def timed_judge(r, n):
        t = time.perf_counter()
        rep = judge_probe(r, n)
        judge_times.append(time.perf_counter() - t)
        return rep

    agent = Agent(
        AgentConfig(NODE, interval_s=0.02),
        lambda: run_probe("/", NODE, run_nvidia_smi=smi),
        judge=timed_judge,
    )
    server = start_server(agent, "127.0.0.1", 0)
    agent.start()
    reg = agent.metrics.registry
    while (reg.get_sample_value("gpunode_probe_duration_seconds_count") or 0) < 10:
        time.sleep(0.05)
    rss10 = rss_kib()
    while (reg.get_sample_value("gpunode_probe_duration_seconds_count") or 0) < cycles:
        time.sleep(0.05)
    url = f"http://127.0.0.1:{server.port}"
    for path, name in (
        ("/metrics", "metrics"),
        ("/facts", "facts"),
        ("/report", "report"),
        ("/healthz", "healthz"),
    ):
        body = urllib.request.urlopen(url + path, timeout=10).read()
        (OUT / f"agent-{name}-smi-{smi}.txt").write_bytes(body)
    count = reg.get_sample_value("gpunode_probe_duration_seconds_count")
    total = reg.get_sample_value("gpunode_probe_duration_seconds_sum")
    server.stop()
    stopped = agent.stop(10)
    summary[f"loop_nvidia_smi_{smi}"] = {
        "cycles": count,
        "probe_mean_ms": round(total / count * 1000, 2),
        "judge_median_ms": round(statistics.median(judge_times) * 1000, 2),
        "rss_kib_after_10": rss10,
        "rss_kib_after_all": rss_kib(),
        "thread_stopped": stopped,
        "errors": {
            s: reg.get_sample_value("gpunode_probe_errors_total", {"step": s})
            for s in ("probe", "nvml", "host", "kernel-log", "nvidia-smi", "judge")
        },
    }
    print(smi, json.dumps(summary[f"loop_nvidia_smi_{smi}"]), flush=True)


if __name__ == "__main__":
    judge_costs(False)
    judge_costs(True)
    loop_costs(True, 40)
    loop_costs(False, 300)
    (OUT / "agent-summary.json").write_text(json.dumps(summary, indent=2))
