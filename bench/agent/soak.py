"""The agent as a user runs it, watched from outside: CPU and memory over a soak period.

    python3 bench/agent/soak.py --seconds 90 --out soak.json -- gpunode agent --no-node-report ...

Starts the command, samples its CPU time (user + system, children included) and resident
memory once a second from /proc, notes when /healthz first answers 200, and at the end
fetches /report and /metrics before stopping it with SIGTERM. Read-only: the agent only
probes; nothing is changed on the node.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime + cutime + cstime of the process, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / TICKS


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return -1.0


def get(url: str, timeout: float = 2.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except OSError:
        return 0, b""


def soak(command: list[str], seconds: float, port: int) -> dict[str, object]:
    base = f"http://127.0.0.1:{port}"
    started = time.monotonic()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    healthy_after: float | None = None
    samples: list[tuple[float, float, float]] = []
    try:
        while (elapsed := time.monotonic() - started) < seconds and proc.poll() is None:
            samples.append((round(elapsed, 2), cpu_seconds(proc.pid), rss_mib(proc.pid)))
            if healthy_after is None and get(base + "/healthz", 0.5)[0] == 200:
                healthy_after = round(time.monotonic() - started, 2)
            time.sleep(1.0)
        report_status, report = get(base + "/report", 10.0)
        metrics_status, metrics = get(base + "/metrics", 10.0)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            _, err = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
    cpu = samples[-1][1] - samples[0][1] if len(samples) > 1 else 0.0
    span = samples[-1][0] - samples[0][0] if len(samples) > 1 else 0.0
    rss = [s[2] for s in samples]
    return {
        "command": command,
        "seconds": span,
        "healthz_200_after_s": healthy_after,
        "cpu_seconds": round(cpu, 3),
        "cpu_percent_of_one_core": round(100 * cpu / span, 2) if span else None,
        "rss_mib": {"first": rss[0] if rss else None, "max": max(rss, default=None),
                    "last": rss[-1] if rss else None},
        "report_status": report_status,
        "report": json.loads(report) if report_status == 200 else None,
        "metrics_status": metrics_status,
        "metrics_bytes": len(metrics),
        "exit_code": proc.returncode,
        "stderr_tail": err.decode(errors="replace")[-2000:],
        "samples": samples,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=90.0)
    parser.add_argument("--port", type=int, default=9808)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    ns = parser.parse_args()
    command = [c for c in ns.command if c != "--"] or ["gpunode", "agent", "--no-node-report"]
    result = soak(command, ns.seconds, ns.port)
    ns.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k not in ("samples", "report")}))


if __name__ == "__main__":
    main()
