"""Benchmark live collection against the test API server (run in its own process).

    PYTHONPATH=src .venv/bin/python bench/live/run.py [--gpu-nodes 5000 --pods 100000]
        [--reports] [--broken-every N] [--extras suspect|deep|all-nodes] [--live-diagnose]

Builds (or reuses) a synthetic bundle, serves it from a subprocess with
pre-serialised pages, then runs ``collect_bundle`` in a child process and
reports wall time, the child's peak RSS, and the API calls the server counted
by verb; the server's own CPU is read from /proc separately. Then it times
``diagnose --from`` on the saved bundle next to merely parsing its JSON, and with
``--live-diagnose`` a whole live ``gpunode diagnose`` (collect + judge) in a child.
``--reports`` gives every GPU node a gpunode agent and a fresh GPUNodeReport.
Results go to stdout as JSON (and --json FILE).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "src"))

from gpunode.apiserver import serve_bundle  # noqa: E402

CHILD = """
import json, sys, time
from pathlib import Path
from gpunode.collect import collect_bundle
started = time.perf_counter()
r = collect_bundle(Path(sys.argv[1]), kubeconfig=Path(sys.argv[2]), quiet=True,
                  concurrency=int(sys.argv[3]), extras=sys.argv[4],
                  nodes=[n for n in sys.argv[5:] if n])
print(json.dumps({"seconds": time.perf_counter() - started, "cpu_s": round(time.process_time(), 1),
                  "api_calls": r.api_calls, "calls_by_kind": r.calls_by_kind,
                  "retries": r.retries, "objects": r.objects, "extras": r.extras,
                  "extras_nodes": len(r.extras_reasons), "report_nodes": len(r.report_nodes),
                  "partial": r.partial, "warnings": list(r.warnings)[:5]}))
"""

DIAGNOSE = """
import gc, json, sys, time
from pathlib import Path
import msgspec
bundle = Path(sys.argv[1])
started = time.perf_counter()
gc.disable()
for f in sorted((bundle / "cluster").glob("*.json")):
    msgspec.json.decode(f.read_bytes())
gc.enable()
parse = time.perf_counter() - started
from gpunode.cli import build_report
started = time.perf_counter()
report = build_report(bundle, None)
print(json.dumps({"parse_json_s": parse, "diagnose_from_s": time.perf_counter() - started,
                  "nodes_reported": len(report.nodes)}))
"""


def _child(code: str, *args: str) -> tuple[dict[str, Any], float, int]:
    """Run python code in a child; return its JSON line, wall seconds, peak RSS (KiB)."""
    env = {**os.environ, "PYTHONPATH": str(HERE.parents[1] / "src")}
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, env=env)
    assert proc.stdout is not None
    output = proc.stdout.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if status != 0:
        return {"error": f"child exited with status {status >> 8}"}, wall, usage.ru_maxrss
    return json.loads(output.splitlines()[-1]), wall, usage.ru_maxrss


def _live_diagnose(kubeconfig: Path, extras: str) -> dict[str, Any]:
    """A whole live ``gpunode diagnose -o json`` in a child: wall, CPU, peak RSS."""
    env = {**os.environ, "PYTHONPATH": str(HERE.parents[1] / "src")}
    flags = {"suspect": [], "deep": ["--deep"], "all-nodes": ["--all-nodes"]}[extras]
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "gpunode", "diagnose", "--kubeconfig",
                             str(kubeconfig), "-q", "-o", "json", *flags],
                            stdout=subprocess.PIPE, env=env)
    assert proc.stdout is not None
    output = proc.stdout.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    report = json.loads(output) if output else {}
    return {"wall_s": round(time.perf_counter() - started, 1), "exit": status >> 8,
            "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
            "peak_rss_mib": round(usage.ru_maxrss / 1024),
            "nodes_reported": len(report.get("nodes", [])),
            "failed_nodes": sum(n["status"] == "failed" for n in report.get("nodes", []))}


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process has used so far (from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _verbs(stats: dict[str, Any]) -> dict[str, int]:
    counts = Counter(f"{verb} {resource}" for verb, resource, _ns, _name in stats["audit"])
    return dict(sorted(counts.items()))


def _refresh_reports(bundle: Path) -> None:
    """Reports (and agent facts) collected now, so a reused bundle's are not stale."""
    import datetime as dt
    import re

    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ").encode()
    stamp = re.compile(rb'"(collected_at|probedAt|publishedAt)": ?"[^"]*"')
    path = bundle / "cluster" / "gpunodereports.json"
    path.write_bytes(stamp.sub(lambda m: b'"' + m[1] + b'":"' + now + b'"', path.read_bytes()))
    for probe in (bundle / "nodes").glob("*/cmd/gpunode-probe.json"):
        probe.write_bytes(re.sub(rb'"collected_at": ?"[^"]*"', b'"collected_at":"' + now + b'"',
                                 probe.read_bytes()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gpu-nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=100_000)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/gpunode-bench-live"))
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--nodes", nargs="*", default=[],
                        help="name these nodes (they get their extras; lists stay cluster-wide)")
    parser.add_argument("--extras", choices=("suspect", "deep", "all-nodes"), default="suspect")
    parser.add_argument("--reports", action="store_true",
                        help="a gpunode agent and a fresh GPUNodeReport on every GPU node")
    parser.add_argument("--broken-every", type=int, default=100,
                        help="every Nth GPU node has a crash-looping device plugin (0: none)")
    parser.add_argument("--live-diagnose", action="store_true",
                        help="also time a whole live `gpunode diagnose` against the same server")
    args = parser.parse_args(argv)
    variant = f"{'-reports' if args.reports else ''}-b{args.broken_every}"
    bundle = args.workdir / f"cluster-{args.gpu_nodes}n-{args.pods}p{variant}"
    extra = ["--agents", "--reports"] if args.reports else []
    subprocess.run([sys.executable, str(HERE / "make_cluster.py"), str(bundle),  # rebuilt if stale
                    "--gpu-nodes", str(args.gpu_nodes), "--pods", str(args.pods),
                    "--broken-every", str(args.broken_every), "--if-stale", *extra], check=True)
    if args.reports:
        _refresh_reports(bundle)
    out = args.workdir / "collected"
    subprocess.run(["rm", "-rf", str(out)], check=True)
    started = time.perf_counter()
    with serve_bundle(bundle, in_subprocess=True) as server:
        ready = time.perf_counter() - started
        assert server.pid is not None
        before = _cpu_seconds(server.pid)
        collect, wall, rss = _child(CHILD, str(out), str(server.kubeconfig_path),
                                    str(args.concurrency), args.extras, *args.nodes)
        server_cpu = _cpu_seconds(server.pid) - before
        stats = server.stats()
        live = None
        if args.live_diagnose:
            before = _cpu_seconds(server.pid)
            live = _live_diagnose(server.kubeconfig_path, args.extras)
            live["server_cpu_s"] = round(_cpu_seconds(server.pid) - before, 1)
    diag, _wall, diag_rss = _child(DIAGNOSE, str(out))
    result = {"gpu_nodes": args.gpu_nodes, "pods": args.pods, "server_start_s": round(ready, 1),
              "collect_wall_s": round(wall, 1), "collect_peak_rss_mib": round(rss / 1024),
              "collect_cpu_s": collect.pop("cpu_s", None), "server_cpu_s": round(server_cpu, 1),
              "concurrency": args.concurrency, "extras": args.extras, "named": args.nodes,
              "reports": args.reports, "broken_every": args.broken_every,
              "load_average": os.getloadavg(),
              "api_requests": stats["requests"], "by_verb": _verbs(stats),
              "collect": collect, "diagnose": diag, "live_diagnose": live,
              "diagnose_peak_rss_mib": round(diag_rss / 1024)}
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
