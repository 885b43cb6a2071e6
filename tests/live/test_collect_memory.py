"""`collect` stays within 512 MiB against a hostile API server (docs/limits.md, "Memory").

The server ignores ``limit`` and answers each list whole: 1,000,000 tiny pods in one
45 MB page (before lists were bounded, the collector peaked at 746 MiB on it) and
150,000 tiny events in one page under MAX_PAGE_BYTES. The collector runs in a child
process whose peak resident memory (``VmHWM``) is printed last on stderr; it must stay
within the bound, exit by findings with no traceback, say the cut first, and keep
neither list whole: pods fall back to the GPU stack's namespaces (``scoped``), events
are ``missing`` with the reason.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpunode.apiserver import Faults, serve_bundle
from gpunode.limits import MAX_PAGE_ITEMS

pytestmark = pytest.mark.slow

MINI = Path(__file__).parent / "fixtures" / "mini"
LIMIT_MIB = 512
TINY_PODS = 1_000_000
TINY_EVENTS = 150_000
PEAK = ("import sys\nfrom gpunode.cli import main\ntry:\n    main()\nfinally:\n"
        "    hwm = [int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:')]\n"
        "    print(max(hwm), file=sys.stderr)")


def _hostile(dest: Path) -> Path:
    """The mini cluster plus a million tiny pods and 150,000 tiny events."""
    bundle = shutil.copytree(MINI, dest)
    for name, count, kind in (("pods", TINY_PODS, "PodList"), ("events", TINY_EVENTS, "EventList")):
        path = bundle / "cluster" / f"{name}.json"
        items = json.loads(path.read_text())["items"]
        tiny = (f'{{"metadata":{{"name":"t{i}","namespace":"x"}}}}' for i in range(count))
        path.write_text(f'{{"kind":"{kind}","apiVersion":"v1","items":['
                        + ",".join([*(json.dumps(i) for i in items), *tiny]) + "]}")
    return bundle


def test_hostile_lists_stay_within_bound(tmp_path: Path) -> None:
    assert TINY_EVENTS > MAX_PAGE_ITEMS
    bundle = _hostile(tmp_path / "b")
    out = tmp_path / "out"
    faults = Faults(answers=("whole list pods", "whole list events"))
    with serve_bundle(bundle, faults=faults, in_subprocess=True) as server:
        proc = subprocess.run([sys.executable, "-c", PEAK, "collect", "--kubeconfig",
                               str(server.kubeconfig_path), "-o", str(out), "--quiet"],
                              capture_output=True, text=True, timeout=300, check=False)
    lines = proc.stderr.strip().splitlines()
    peak_mib = int(lines[-1]) // 1024
    print(f"collect peaked at {peak_mib} MiB")
    assert peak_mib <= LIMIT_MIB, f"collect peaked at {peak_mib} MiB"
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr
    assert lines[0].startswith("warning: pods were listed only in"), lines[0]
    assert "cut at 0 items" in lines[0]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["partial"] is True
    scoped = {s["path"]: s["namespaces"] for s in manifest["scoped"]}
    assert "gpu-operator" in scoped["cluster/pods.json"]
    missing = {m["path"]: m["reason"] for m in manifest["missing"]}
    assert "items to a page of" in missing["cluster/events.json"]
    assert not (out / "cluster" / "events.json").exists()
    pods = json.loads((out / "cluster" / "pods.json").read_text())["items"]
    assert 0 < len(pods) < 100 and all(p["metadata"]["namespace"] != "x" for p in pods)
