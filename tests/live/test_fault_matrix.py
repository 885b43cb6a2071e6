"""The live fault matrix: `collect` and `diagnose` against a misbehaving test API server.

Every case serves the same small cluster (tests/live/fixtures/mini: a GPU fallen off
the bus and a crash-looping device plugin on gpu-wk-02, gpu-wk-01 healthy) with one
fault — a credential refused, a verb forbidden on a resource, a resource or pod gone,
throttling, server errors, an endpoint slower than the client's timeout, one that
accepts and never answers or stops mid-body (a list's first or a later page, the
node-facts exec, a pod log, an exporter scrape; run with a small ``--request-timeout``),
a continue token that expires mid-list, a body cut mid-JSON, hostile names — and runs
the CLI in-process, as a user would, and then judges what came out against the
fault-free run:

- the documented exit code: 0/1 by findings, 3 for refused credentials or an
  unreachable server; never 4 (a crash) and never a traceback;
- the warning naming the lost source is the first line on stderr;
- no false ``failed``: a component is failed or degraded only where it is without the
  fault, a root cause the fault-free run places lower says what it could not verify,
  and every component that depends on the faulty source alone is ``unknown``;
- nothing is written outside the output directory (the whole temporary tree, the
  temporary directory and HOME are compared before and after);
- under a stall, each command ends within a bound derived from ``--request-timeout``,
  the stalled sources are in the manifest's ``missing`` saying they timed out, and the
  nodes the stall does not touch are reported exactly as without it.

Ctrl-C during a stalled collection ends it at once (exit 130, one line, nothing left).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpunode import cli
from gpunode.apiserver import Faults, serve_bundle
from gpunode.collect import kube, live
from gpunode.report.jsonout import to_json

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))
from fleet import Fleet, build

MINI = Path(__file__).parent / "fixtures" / "mini"
#: Components of the fixture judged from pods (their pods run on both GPU nodes).
POD_RUN = ("driver", "container-toolkit", "dcgm-exporter", "node-exporter")
PROBLEMS = ("failed", "degraded")
HANG_S = 3.0
NO_FAULTS = Faults()
#: ``--request-timeout`` of the stall cases, and the longest each command may take under
#: one: a few calls in a row (lists, the pod-list fallback, a node's exec after its agent
#: facts), each given up after CALL_TIMEOUTS timeouts, plus one more read and start-up.
TIMEOUT_S = 0.5
STALL_BOUND_S = 4 * (kube.CALL_TIMEOUTS + 1) * TIMEOUT_S + 4


@dataclass(frozen=True)
class Case:
    """One fault and what must hold under it."""

    id: str
    faults: Faults = NO_FAULTS
    bundle: str = "mini"
    #: the exit code of both commands when the fault is fatal (3); None: by findings
    fatal: int | None = None
    #: words the first stderr line must hold ("" for a clean run: stderr empty)
    warns: tuple[str, ...] = ()
    #: "node/component" ("*" for every GPU node) that must come out unknown
    unknown: tuple[str, ...] = ()
    #: what the summary of every component in ``unknown`` says (one of these; {node}: its node)
    why: tuple[str, ...] = ()
    #: bundle paths the manifest must list as missing (prefixes)
    missing: tuple[str, ...] = ()
    #: a transient fault: the bundle must come out whole and the report as without it
    whole: bool = False
    #: every node's extras (--all-nodes); False: list first, extras for suspect nodes only
    sweep: bool = True
    #: run with ``--request-timeout TIMEOUT_S``: each command must end within STALL_BOUND_S and
    #: every ``missing`` path must give a reason saying it timed out
    stalls: bool = False
    #: GPU nodes the fault does not touch: reported exactly as without it
    same: tuple[str, ...] = ()


def forbid(*rules: str) -> Faults:
    return Faults(forbid=rules)


def answer(*rules: str) -> Faults:
    return Faults(answers=rules, hang_s=HANG_S)


def stall(*rules: str) -> Faults:
    return Faults(answers=rules)


def both(*components: str) -> tuple[str, ...]:
    return tuple(f"*/{c}" for c in components)


CASES = [
    Case("no-fault", whole=True),
    # 401: refused credentials end the run (exit 3), a token expiring mid-run does not
    Case("401-bad-token", fatal=3),
    Case("401-token-expires-mid-run", answer("401 * pods/exec", "401 * pods/proxy"),
         warns=("cannot", "pods/"), unknown=both("gpu-hardware"),
         missing=("nodes/gpu-wk-01/cmd/nvidia-smi-q.xml",)),
    # 403 per verb and resource
    Case("403-list-nodes", forbid("list nodes"), warns=("cannot list nodes",),
         unknown=both("kernel", "container-runtime", "kubelet"), missing=("cluster/nodes.json",),
         why=("no Node object: forbidden to list nodes cluster-wide (403)",)),
    Case("403-list-pods-everywhere", forbid("list pods"), warns=("cannot list pods",),
         unknown=both("gpu-hardware", *POD_RUN), missing=("cluster/pods.json",),
         why=("no pod list: forbidden to list pods cluster-wide (403)",
              "no nvidia-smi output for {node}: no pod to run it in: the pod list was not read")),
    Case("403-list-pods-cluster-wide", forbid("list pods -"), warns=("pods were listed only in",)),
    Case("403-list-pods-cluster-wide-and-namespace", forbid("list pods -", "list pods gpu-operator"),
         warns=("pods were listed only in",)),
    Case("403-list-events", forbid("list events"), warns=("cannot list events",),
         missing=("cluster/events.json",)),
    Case("403-list-daemonsets", forbid("list daemonsets"), warns=("cannot list daemonsets",),
         missing=("cluster/daemonsets.json",)),
    Case("403-get-crs", forbid("list clusterpolicies"), warns=("cannot list clusterpolicies",),
         missing=("cluster/clusterpolicies.json",)),
    Case("403-exec", forbid("create pods/exec"), warns=("cannot exec into pods",),
         unknown=both("gpu-hardware"),
         why=("no nvidia-smi output for {node}: pods/exec create forbidden (403)",),
         missing=("nodes/gpu-wk-01/cmd/nvidia-smi-q.xml", "nodes/gpu-wk-02/cmd/nvidia-smi-q.xml")),
    Case("403-proxy", forbid("get pods/proxy"), warns=("cannot reach pod metrics",),
         missing=("nodes/gpu-wk-01/metrics/dcgm-exporter.prom",)),
    Case("403-logs", forbid("get pods/log"), warns=("cannot read pod logs",),
         missing=("logs/gpu-operator/nvidia-device-plugin-daemonset-z8c3x/",)),
    # 404: custom resources not served, objects gone between list and use
    Case("404-crds-missing", bundle="no-crds"),
    Case("404-cr-deleted-after-discovery", answer("404 list clusterpolicies")),
    Case("404-pod-gone-before-its-log", answer("404 get pods/log"),
         missing=("logs/gpu-operator/nvidia-device-plugin-daemonset-z8c3x/",)),
    Case("404-pod-gone-before-exec", answer("404 create pods/exec"), unknown=both("gpu-hardware"),
         missing=("nodes/gpu-wk-01/cmd/nvidia-smi-q.xml",)),
    # 429 and 5xx: retried when transient, a lost source when they persist
    Case("429-every-third", Faults(too_many_every=3, retry_after_s=0), whole=True),
    Case("429-events-always", answer("429 list events"), warns=("listing events", "failed"),
         missing=("cluster/events.json",)),
    Case("500-every-third", Faults(error_500_every=3), whole=True),
    Case("500-pods-always", answer("500 list pods"), warns=("listing pods", "failed"),
         unknown=both("gpu-hardware", *POD_RUN), missing=("cluster/pods.json",)),
    Case("503-metrics-always", answer("503 get pods/proxy"),  # an exporter not answering: a note
         missing=("nodes/gpu-wk-01/metrics/dcgm-exporter.prom",)),
    Case("500-metrics-always", answer("500 get pods/proxy"), warns=("scrape", "gave up"),
         missing=("nodes/gpu-wk-01/metrics/dcgm-exporter.prom",)),
    Case("500-everything", Faults(error_500_every=1), fatal=3),
    # timeouts: an endpoint slower than the client's timeout
    Case("timeout-metrics", answer("hang get pods/proxy"), warns=("scrape",),
         missing=("nodes/gpu-wk-01/metrics/dcgm-exporter.prom",)),
    Case("timeout-list-nodes", answer("hang list nodes"), warns=("listing nodes", "failed"),
         unknown=both("kernel", "container-runtime", "kubelet"), missing=("cluster/nodes.json",),
         why=("no Node object: could not list nodes cluster-wide (gave up after",)),
    Case("timeout-once", answer("hangx1 list events"), whole=True),
    # a server that accepts and never answers, or stops mid-body (--request-timeout 0.5)
    Case("stall-list-first-page", stall("stall list nodes"), stalls=True,
         warns=("listing nodes", "failed", "timed out"),
         unknown=both("kernel", "container-runtime", "kubelet"), missing=("cluster/nodes.json",),
         why=("no Node object: could not list nodes cluster-wide (gave up after",)),
    Case("stall-list-later-page", stall("stall-later list pods"), stalls=True,
         warns=("listing pods", "failed", "timed out"), unknown=both("gpu-hardware", *POD_RUN),
         missing=("cluster/pods.json",)),
    Case("stall-list-mid-body", stall("stall-body list daemonsets"), stalls=True,
         warns=("listing daemonsets", "failed", "timed out"), missing=("cluster/daemonsets.json",)),
    Case("stall-exec-node-facts", stall("stall create pods/exec * nvidia-driver-daemonset-4xk2p"),
         stalls=True, warns=("exec", "timed out"), unknown=("gpu-wk-01/gpu-hardware",),
         why=("no nvidia-smi output for gpu-wk-01: pods/exec create failed (no answer: gave up after",),
         missing=("nodes/gpu-wk-01/cmd/nvidia-smi-q.xml", "nodes/gpu-wk-01/cmd/dmesg.txt"),
         same=("gpu-wk-02",)),
    Case("stall-exec-command-hangs", stall("stall-body create pods/exec * nvidia-driver-daemonset-9fz7c"),
         stalls=True, warns=("exec", "timed out"), unknown=("gpu-wk-02/gpu-hardware",),
         missing=("nodes/gpu-wk-02/cmd/nvidia-smi-q.xml",), same=("gpu-wk-01",)),
    Case("stall-log", stall("stall get pods/log * nvidia-device-plugin-daemonset-z8c3x"), stalls=True,
         warns=("log", "timed out"), missing=("logs/gpu-operator/nvidia-device-plugin-daemonset-z8c3x/",),
         same=("gpu-wk-01",)),
    Case("stall-log-mid-body", stall("stall-body get pods/log"), stalls=True, warns=("log", "timed out"),
         missing=("logs/gpu-operator/nvidia-device-plugin-daemonset-z8c3x/",)),
    Case("stall-dcgm-scrape", stall("stall get pods/proxy gpu-operator nvidia-dcgm-exporter-k3p9d:*"),
         stalls=True, warns=("scrape", "timed out"), missing=("nodes/gpu-wk-01/metrics/dcgm-exporter.prom",),
         same=("gpu-wk-02",)),
    Case("stall-node-exporter-scrape-mid-body", stall("stall-body get pods/proxy monitoring"), stalls=True,
         warns=("scrape", "timed out"), missing=("nodes/gpu-wk-01/metrics/node-exporter.prom",
                                                 "nodes/gpu-wk-02/metrics/node-exporter.prom")),
    # dropped pages: the continue token expires mid-list (410 Gone)
    Case("410-once-mid-list", answer("410x1 list pods"), whole=True),
    Case("410-every-continue", answer("410 list pods"), warns=("pods were listed only in",)),
    Case("drop-every-fifth", Faults(drop_every=5), whole=True),
    # pagination that never ends, a server that ignores limit (docs/limits.md)
    Case("endless-list-events", answer("endless list events"),
         warns=("listing events", "was cut", "same continue token"), missing=("cluster/events.json",)),
    Case("endless-list-pods", answer("endless list pods"), warns=("listing pods", "was cut"),
         unknown=both("gpu-hardware", *POD_RUN), missing=("cluster/pods.json",)),
    Case("limit-ignored-small-lists", answer("whole list *"), whole=True),
    # truncated bodies: a connection lost mid-body, JSON cut off by a broken proxy
    Case("cut-once", answer("cutx1 list pods", "cutx1 list nodes"), whole=True),
    Case("cut-list-nodes-always", answer("cut list nodes"), warns=("listing nodes", "failed"),
         unknown=both("kernel", "container-runtime", "kubelet"), missing=("cluster/nodes.json",)),
    Case("garbled-pod-list", answer("garble list pods"), warns=("listing pods", "failed"),
         unknown=both("gpu-hardware", *POD_RUN), missing=("cluster/pods.json",)),
    Case("garbled-metrics", answer("garble get pods/proxy")),
    Case("garbled-logs", answer("garble get pods/log")),
    # not the API's answer: an HTML login page, a redirect to a login host (a proxy in front)
    Case("html-list-nodes", answer("html list nodes"), warns=("listing nodes", "HTML page"),
         unknown=both("kernel", "container-runtime", "kubelet"), missing=("cluster/nodes.json",),
         why=("no Node object: could not list nodes cluster-wide (200)",)),
    Case("redirect-list-pods", answer("redirect list pods"), warns=("listing pods", "redirected to"),
         unknown=both("gpu-hardware", *POD_RUN), missing=("cluster/pods.json",)),
    Case("html-every-list", answer("html list *"), fatal=3),
    Case("redirect-every-list", answer("redirect list *"), fatal=3),
    Case("html-exec", answer("html create pods/exec"), warns=("exec", "HTML page"),
         unknown=both("gpu-hardware"), missing=("nodes/gpu-wk-01/cmd/nvidia-smi-q.xml",)),
    Case("html-metrics", answer("html get pods/proxy"), warns=("scrape", "HTML page"),
         missing=("nodes/gpu-wk-01/metrics/dcgm-exporter.prom",)),
    Case("redirect-metrics", answer("redirect get pods/proxy"), warns=("scrape", "redirected to"),
         missing=("nodes/gpu-wk-01/metrics/dcgm-exporter.prom",)),
    Case("redirect-logs", answer("redirect get pods/log"), warns=("log", "redirected to"),
         missing=("logs/gpu-operator/nvidia-device-plugin-daemonset-z8c3x/",)),
    # hostile names: path parts and terminal escapes from the API
    Case("hostile-names", bundle="hostile"),
    # list first (the default): healthy nodes judged from lists and their GPUNodeReports
    Case("list-first", bundle="fleet", sweep=False),
    Case("list-first-no-reports", bundle="fleet-bare", sweep=False,
         unknown=("gpu-00000/gpu-hardware", "gpu-00001/gpu-hardware"),
         why=("no nvidia-smi output for {node}: node extras not fetched: judged healthy from the "
              "cluster lists (--deep fetches them)",)),
    Case("list-first-403-pods", forbid("list pods"), sweep=False, warns=("cannot list pods",),
         unknown=both("gpu-hardware", *POD_RUN), missing=("cluster/pods.json",),
         why=("no pod list: forbidden to list pods cluster-wide (403)",
              "no nvidia-smi output for {node}: no pod to run it in: the pod list was not read")),
    Case("list-first-403-reports", forbid("list gpunodereports"), bundle="fleet", sweep=False,
         warns=("cannot list gpunodereports",), missing=("cluster/gpunodereports.json",)),
    Case("list-first-500-reports", answer("500 list gpunodereports"), bundle="fleet", sweep=False,
         warns=("listing gpunodereports", "failed"), missing=("cluster/gpunodereports.json",)),
    Case("list-first-garbled-reports", answer("garble list gpunodereports"), bundle="fleet",
         sweep=False, warns=("listing gpunodereports", "failed"),
         missing=("cluster/gpunodereports.json",)),
    Case("list-first-403-agent-proxy", forbid("get pods/proxy"), bundle="fleet", sweep=False,
         warns=("cannot",)),
    Case("list-first-403-exec", forbid("create pods/exec"), bundle="fleet", sweep=False,
         warns=("cannot",)),
]


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("served")
    no_crds = root / "no-crds"
    shutil.copytree(MINI, no_crds)
    (no_crds / "cluster" / "clusterpolicies.json").unlink()
    return {"mini": MINI, "no-crds": no_crds, "hostile": _hostile(root / "hostile"),
            "fleet": build(root / "fleet", Fleet(3, agents=True, reports=True, broken=(2,))),
            "fleet-bare": build(root / "fleet-bare", Fleet(3, broken=(2,)))}


def _hostile(dest: Path) -> Path:
    """The mini cluster with names that would lead writes out of a bundle, or print escapes."""
    shutil.copytree(MINI, dest)
    pods_file = dest / "cluster" / "pods.json"
    doc = json.loads(pods_file.read_text())
    for pod in doc["items"]:
        for volume in pod["spec"].get("volumes", []):
            if "hostPath" in volume:
                volume["hostPath"]["path"] = "/../../../../../../../../escape-hostpath"
        for status in pod["status"].get("containerStatuses", []):
            if status.get("restartCount"):
                old, status["name"] = status["name"], "../../../../../escape\x1b]0;pwned\x07"
                for container in pod["spec"]["containers"]:
                    if container["name"] == old:
                        container["name"] = status["name"]
    pods_file.write_text(json.dumps(doc))
    return dest


@dataclass(frozen=True)
class Run:
    code: int
    stdout: str
    stderr: str
    written: frozenset[Path]
    seconds: float = 0.0


@pytest.fixture()
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Temporary files, HOME and the working directory all inside ``tmp_path``; a short
    client timeout and small list pages, so timeouts and pagination are exercised quickly."""
    for sub in ("tmp", "home", "cwd"):
        (tmp_path / sub).mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.chdir(tmp_path / "cwd")
    monkeypatch.setattr(kube, "REQUEST_TIMEOUT_S", 1.0)
    monkeypatch.setattr(kube, "EXEC_TIMEOUT_S", 2.0)
    monkeypatch.setattr(kube, "DEFAULT_POLICY", kube.RetryPolicy(
        attempts=6, deadline_s=5.0, base_delay_s=0.02, max_delay_s=0.1))
    monkeypatch.setattr(kube, "_PROBE_POLICY", kube.RetryPolicy(
        attempts=3, deadline_s=3.0, base_delay_s=0.02, max_delay_s=0.1))
    monkeypatch.setattr(live, "PAGE_SIZE", 4)
    return tmp_path


def _files(root: Path) -> frozenset[Path]:
    return frozenset(p for p in root.rglob("*") if not p.is_dir())


Cli = Callable[[list[str]], Run]


@pytest.fixture()
def run_cli(sandbox: Path, capfd: pytest.CaptureFixture[str],
            monkeypatch: pytest.MonkeyPatch) -> Cli:
    """``gpunode ARGV`` in this process, as the console script runs it (main()), with
    the files it wrote anywhere under the sandbox."""
    def run(argv: list[str]) -> Run:
        before = _files(sandbox)
        capfd.readouterr()
        monkeypatch.setattr(sys, "argv", ["gpunode", *argv])
        started = time.monotonic()
        with pytest.raises(SystemExit) as exited:
            cli.main()
        took = time.monotonic() - started
        out, err = capfd.readouterr()
        code = exited.value.code
        return Run(code if isinstance(code, int) else -1, out, err, _files(sandbox) - before, took)
    return run


def _bad_token(kubeconfig: Path, dest: Path) -> Path:
    config = yaml.safe_load(kubeconfig.read_text())
    config["users"][0]["user"]["token"] = "expired-or-revoked"
    dest.write_text(yaml.safe_dump(config))
    return dest


Baselines = Callable[[str], dict[str, Any]]


@pytest.fixture(scope="module")
def baselines(bundles: dict[str, Path]) -> Baselines:
    """The fault-free report of each served cluster, every node's extras read, once."""
    cache: dict[str, dict[str, Any]] = {}

    def baseline(name: str) -> dict[str, Any]:
        if name not in cache:
            with serve_bundle(bundles[name]) as server, tempfile.TemporaryDirectory() as tmp:
                result = live.collect_bundle(Path(tmp) / "b", kubeconfig=server.kubeconfig_path,
                                             quiet=True, extras="all-nodes")
                cache[name] = json.loads(to_json(cli.build_report(result.path, None)))
        return cache[name]
    return baseline


def statuses(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    out = {("cluster", c["component"]): c for c in report["cluster"]["components"]}
    out.update({(n["name"], c["component"]): c for n in report["nodes"] for c in n["components"]})
    return out


def root_causes(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    out = {("cluster", r["component"]): r for r in report["cluster"]["root_causes"]}
    out.update({(n["name"], r["component"]): r for n in report["nodes"] for r in n["root_causes"]})
    return out


def gpu_nodes(report: dict[str, Any]) -> list[str]:
    return [n["name"] for n in report["nodes"]]


def report_node(report: dict[str, Any], name: str) -> dict[str, Any]:
    node: dict[str, Any] = next(n for n in report["nodes"] if n["name"] == name)
    return node



def without_open(value: object) -> object:
    """A report part without its evidence's ``open``: what the user opens differs by design
    between a live run (the kubectl command) and a bundle (a path in it); the rest is equal."""
    if isinstance(value, dict):
        return {k: without_open(v) for k, v in value.items() if k != "open"}
    if isinstance(value, list):
        return [without_open(v) for v in value]
    return value


def assert_no_false_verdict(case: Case, report: dict[str, Any], base: dict[str, Any]) -> None:
    """Failed only where the fault-free run fails; unknown where the lost source decides."""
    now, then = statuses(report), statuses(base)
    for key, comp in now.items():
        if comp["status"] in PROBLEMS:
            before = then.get(key, {}).get("status")
            assert before in PROBLEMS, f"{case.id}: false {comp['status']} {key}: {comp['summary']}"
    base_roots = root_causes(base)
    for key, cause in root_causes(report).items():
        if key not in base_roots:  # what it sat on in the fault-free run is not seen now
            assert cause["unverified_below"], f"{case.id}: {key} a root cause with nothing unverified"
    for want in case.unknown:
        node, _, component = want.partition("/")
        for name in gpu_nodes(base) if node == "*" else (node,):
            comp = now[(name, component)]
            assert comp["status"] == "unknown", f"{case.id}: {name}/{component} is {comp['status']}"
            summary = comp["summary"]
            said = not case.why or any(w.format(node=name) in summary for w in case.why)
            assert said, f"{case.id}: {name}/{component}: {summary}"
            lacked = [m for m in report_node(report, name)["missing_data"] if component in m["components"]]
            assert lacked and all(m["reason"] for m in lacked), f"{case.id}: {name}/{component}"
    if case.whole:
        assert now == then, case.id
        assert without_open(report["nodes"]) == without_open(base["nodes"]), case.id
    for name in case.same:
        same = without_open(report_node(report, name)) == without_open(report_node(base, name))
        assert same, f"{case.id}: {name} changed"


def assert_warned_first(case: Case, run: Run, what: str) -> None:
    assert "Traceback" not in run.stderr, f"{case.id} {what}: {run.stderr}"
    lines = run.stderr.splitlines()
    if case.whole:
        assert lines == [], f"{case.id} {what}: {run.stderr}"
    if case.warns:
        assert lines, f"{case.id} {what}: no warning"
        assert lines[0].startswith("warning: "), f"{case.id} {what}: {lines[0]}"
        assert all(word in lines[0] for word in case.warns), f"{case.id} {what}: {lines[0]}"


def _waits(case: Case) -> bool:
    """A stall or a time-out: seconds of real time until the client gives up (make test only)."""
    return case.stalls or case.id.startswith("timeout-")


#: The cases ``make check`` runs, one or two of each kind of fault (0.4 s of CPU each: a server,
#: a collection and a diagnosis); ``make test`` runs every one.
QUICK = frozenset({
    "no-fault", "401-bad-token", "401-token-expires-mid-run", "403-list-pods-everywhere", "403-exec",
    "404-pod-gone-before-exec", "429-every-third", "500-pods-always", "410-every-continue",
    "endless-list-pods", "cut-once", "garbled-pod-list", "html-list-nodes", "hostile-names",
    "list-first", "list-first-no-reports",
})


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id, marks=[] if c.id in QUICK and not _waits(c)
                                               else [pytest.mark.slow]) for c in CASES])
def test_fault(case: Case, bundles: dict[str, Path], baselines: Baselines, sandbox: Path,
               *, run_cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    if case.id.startswith("timeout-"):  # retries of a hung call end at 2.5 s (1 s timeouts), not 5 s
        monkeypatch.setattr(kube, "DEFAULT_POLICY", replace(kube.DEFAULT_POLICY, deadline_s=2.5))
    with serve_bundle(bundles[case.bundle], faults=case.faults) as server:
        kubeconfig = server.kubeconfig_path
        if case.id == "401-bad-token":
            kubeconfig = _bad_token(kubeconfig, sandbox / "kubeconfig")
        out = sandbox / "out" / "bundle"
        # every node's extras, so every fault meets every node; list-first cases: the default
        sweep = ["--all-nodes"] if case.sweep else []
        if case.stalls:
            sweep += ["--request-timeout", f"{TIMEOUT_S:g}s"]
        collected = run_cli(["collect", "-q", *sweep, "--kubeconfig", str(kubeconfig), "-o", str(out)])
        diagnosed = run_cli(["diagnose", "-q", *sweep, "--kubeconfig", str(kubeconfig), "-o", "json"])
        assert server.errors() == []
    for run, what in ((collected, "collect"), (diagnosed, "diagnose")):
        assert not case.stalls or run.seconds < STALL_BOUND_S, f"{case.id} {what}: {run.seconds:.1f} s"
    for run, what in ((collected, "collect"), (diagnosed, "diagnose")):
        assert "\x1b" not in run.stdout + run.stderr, f"{case.id} {what}: a terminal escape printed"
    assert not [p for p in collected.written if not p.is_relative_to(out)], collected.written
    assert diagnosed.written == frozenset(), diagnosed.written
    if case.fatal is not None:
        for run, what in ((collected, "collect"), (diagnosed, "diagnose")):
            assert run.code == case.fatal, f"{case.id} {what}: exit {run.code}: {run.stderr}"
            assert len(run.stderr.splitlines()) == 1 and run.stderr.startswith("gpunode: "), run.stderr
            assert server.url in run.stderr, run.stderr
        assert not out.exists()
        return
    assert collected.code == 0, f"{case.id} collect: exit {collected.code}: {collected.stderr}"
    assert_warned_first(case, collected, "collect")
    manifest = json.loads((out / "manifest.json").read_text())
    lost = [m["path"] for m in manifest["missing"]]
    for path in case.missing:
        assert any(p.startswith(path) for p in lost), f"{case.id}: {path} not in missing {lost}"
        timed_out = [m["reason"] for m in manifest["missing"] if m["path"].startswith(path)]
        assert not case.stalls or all("timed out" in r for r in timed_out), f"{case.id}: {timed_out}"
    assert manifest["partial"] == bool(manifest["warnings"])
    assert not case.whole or (manifest["missing"], manifest["warnings"]) == ([], []), manifest
    assert_warned_first(case, diagnosed, "diagnose")
    report = json.loads(diagnosed.stdout)
    assert diagnosed.code == (1 if report["groups"] or report["cluster"]["root_causes"] else 0)
    served = case.bundle if case.bundle.startswith("fleet") else "mini"
    assert_no_false_verdict(case, report, baselines(served))


def test_table_output_says_why_nodes_are_unknown(sandbox: Path, run_cli: Cli,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The terminal report names the missing data and its reason under the unknown nodes,
    and after a root cause's 'verify first'."""
    monkeypatch.setenv("COLUMNS", "200")
    with serve_bundle(MINI, faults=forbid("create pods/exec")) as server:
        table = run_cli(["diagnose", "-q", "--all-nodes", "--kubeconfig", str(server.kubeconfig_path)])
    assert table.code == 1, table.stderr
    lines = table.stdout.splitlines()
    unknown = lines.index("unknown: gpu-wk-01")
    assert lines[unknown + 1].strip() == ("no nvidia-smi output: pods/exec create forbidden (403) — "
                                          "fabric-manager, gpu-hardware on gpu-wk-01")
    verify = [ln.strip() for ln in lines if ln.strip().startswith("verify first (no data)")]
    assert verify and all(ln.endswith("— no nvidia-smi output: pods/exec create forbidden (403)")
                          for ln in verify), verify


#: gpunode as started from a terminal: a suite run from a script in the background starts
#: with SIGINT ignored, children inherit that, and Python then never turns Ctrl-C into
#: KeyboardInterrupt (as wanted for a background job); the test is about a foreground run.
_AS_AT_A_TERMINAL = ("import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
                     "runpy.run_module('gpunode', run_name='__main__', alter_sys=True)")


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "code", "said"), [(signal.SIGINT, 130, "interrupted"),
                                                   (signal.SIGTERM, 143, "terminated")])
@pytest.mark.parametrize("command", [["collect", "-o", "OUT"], ["diagnose", "-o", "json"]])
def test_ctrl_c_ends_a_stalled_collection_at_once(command: list[str], sig: signal.Signals, code: int,
                                                  said: str, sandbox: Path) -> None:
    """SIGINT (Ctrl-C) or SIGTERM (a cancelled job) while every exec hangs (a long
    --request-timeout): the process ends within a second or two, says so in one line,
    exits non-zero, and leaves nothing behind — no partial bundle, no temporary folder,
    nothing in HOME or the working directory."""
    out = sandbox / "out" / "bundle"
    argv = [str(out) if a == "OUT" else a for a in command]
    env = {**os.environ, "TMPDIR": str(sandbox / "tmp"), "HOME": str(sandbox / "home")}
    env.pop("KUBECONFIG", None)
    with serve_bundle(MINI, faults=stall("stall create pods/exec")) as server:
        before = _files(sandbox)
        proc = subprocess.Popen(
            [sys.executable, "-c", _AS_AT_A_TERMINAL, *argv, "-q", "--all-nodes", "--request-timeout", "5m",
             "--kubeconfig", str(server.kubeconfig_path)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=sandbox / "cwd", env=env)
        try:
            deadline = time.monotonic() + 60
            while not any(a.verb == "create" for a in server.audit()):  # the execs hang now
                assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
                time.sleep(0.05)
            time.sleep(0.3)
            assert proc.poll() is None, proc.communicate()
            interrupted = time.monotonic()
            proc.send_signal(sig)
            stdout, stderr = proc.communicate(timeout=30)
            took = time.monotonic() - interrupted
        finally:
            proc.kill()
        after = _files(sandbox)  # the server's own files are still there
        assert server.errors() == []
    assert proc.returncode == code, stderr
    assert stderr == f"gpunode: {said}\n" and stdout == ""
    assert took < 3.0, took
    assert not out.exists()
    assert after == before, after ^ before
    left = [p for p in sandbox.rglob("*") if p.is_dir() and p.name.startswith(("gpunode-", ".gpunode-"))]
    assert left == []
