"""``--timeout``: one deadline for the whole live run (issue 23, item 3), through the console script.

Each case starts ``.venv/bin/gpunode`` (a child process, killed past KILL_AFTER_S: no case
can hang the suite) against the test API server serving the mini cluster with one part
stalled (it accepts the request and never answers) and no ``--request-timeout``, so the
defaults (15 s a request, 60 s an exec, 60 s a call with its retries) would wait far longer
than the deadline. Whatever was stalled (a list, a node's execs, the operator's pods for
``version``, a list answered 500 and retried, a credential plugin that never answers), the
run ends within ``--timeout`` plus start-up, exits 3 with one ``gpunode:`` line naming what
was not read, prints no traceback and leaves nothing behind (no bundle, nothing in TMPDIR,
HOME or the working directory). A run that ends in time is unchanged by the deadline.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from gpunode.apiserver import Faults, serve_bundle
from gpunode.deadline import BACKSTOP_S, RunTimedOut, run_deadline, whole_run

pytestmark = pytest.mark.slow  # the console script end to end, waiting for real deadlines

MINI = Path(__file__).parent / "fixtures" / "mini"
GPUNODE = Path(sys.executable).parent / "gpunode"
DEADLINE_S = 3.0
#: Start-up (imports on a busy two-core machine) and the exit after the deadline; far below
#: any default timeout the deadline cuts (15 s a request, 60 s an exec or a call).
SLACK_S = 6.0
KILL_AFTER_S = 90


@dataclass(frozen=True)
class Ran:
    code: int
    stdout: str
    stderr: str
    seconds: float


Gpunode = Callable[..., Ran]


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.fixture()
def gpunode(tmp_path: Path) -> Gpunode:
    """The console script with HOME, TMPDIR and the working directory in the test's folder."""
    for sub in ("home", "tmp", "cwd"):
        (tmp_path / sub).mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(tmp_path / "home"), "TMPDIR": str(tmp_path / "tmp"), "COLUMNS": "200",
           "PYTHONFAULTHANDLER": "1"}  # a crash in native code prints its stack: a left bundle says why
    env.pop("KUBECONFIG", None)

    def run(*args: str) -> Ran:
        before = {sub: _files(tmp_path / sub) for sub in ("home", "tmp", "cwd")}
        started = time.monotonic()
        done = subprocess.run([str(GPUNODE), *args], capture_output=True, text=True, env=env,
                              cwd=tmp_path / "cwd", timeout=KILL_AFTER_S, check=False)
        took = time.monotonic() - started
        for sub, files in before.items():
            left = _files(tmp_path / sub) ^ files
            assert not left, f"{sub}: {sorted(left)[:5]}; exit {done.returncode}: {done.stderr[-2000:]}"
        return Ran(done.returncode, done.stdout, done.stderr, took)
    return run


def assert_timed_out(ran: Ran, *words: str) -> str:
    """Exit 3 within the deadline and start-up, one line naming the deadline and ``words``."""
    assert "Traceback" not in ran.stderr, ran.stderr
    assert ran.code == 3, f"exit {ran.code}: {ran.stderr}"
    lines = ran.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpunode: "), ran.stderr
    line = lines[0]
    assert f"--timeout {DEADLINE_S:g} s" in line, line
    assert all(word in line for word in words), line
    assert ran.seconds < DEADLINE_S + SLACK_S, f"{ran.seconds:.1f} s: {line}"
    return line


def _run_stalled(gpunode: Gpunode, faults: Faults, *args: str) -> Ran:
    with serve_bundle(MINI, faults=faults) as server:
        ran = gpunode(*args, "--kubeconfig", str(server.kubeconfig_path), "--timeout", f"{DEADLINE_S:g}s")
        assert server.url in ran.stderr or ran.code != 3, ran.stderr
    return ran


STALLS = [
    # (id, faults, command, words the line names)
    ("list-nodes", Faults(answers=("stall list nodes",)), ("diagnose", "-q", "-o", "json"),
     ("not read: cluster/nodes.json",)),
    ("node-execs", Faults(answers=("stall create pods/exec",)), ("diagnose", "-q", "--all-nodes"),
     ("not read: nodes/gpu-wk-01/ (", "files), nodes/gpu-wk-02/")),
    ("node-execs-stack", Faults(answers=("stall create pods/exec",)), ("stack", "-q", "--all-nodes"),
     ("not read: nodes/gpu-wk-0",)),
    ("list-pods-collect", Faults(answers=("stall list pods",)), ("collect", "-q", "-o", "OUT"),
     ("not read: cluster/pods.json", "nothing written")),
    ("node-execs-validate", Faults(answers=("stall create pods/exec",)), ("validate", "-q"),
     ("not read: nodes/gpu-wk-0",)),
    # retried, never answered: 500 to every list, backoff up to the policy's 60 s
    ("retries", Faults(answers=("500 list *",)), ("diagnose", "-q", "-o", "json"),
     ("cluster/nodes.json", "cluster/pods.json")),
    ("operator-pods-version", Faults(answers=("stall list pods",)), ("version",),
     ("not read: the GPU Operator's pods",)),
    ("list-pods-diff", Faults(answers=("stall list pods",)), ("diff", str(MINI), "-q"),
     ("not read: cluster/pods.json",)),
]


@pytest.mark.parametrize(("faults", "command", "words"), [s[1:] for s in STALLS], ids=[s[0] for s in STALLS])
def test_a_stalled_run_ends_at_its_timeout(faults: Faults, command: tuple[str, ...], words: tuple[str, ...],
                                           gpunode: Gpunode, tmp_path: Path) -> None:
    out = tmp_path / "out" / "bundle"
    args = [str(out) if a == "OUT" else a for a in command]
    ran = _run_stalled(gpunode, faults, *args)
    line = assert_timed_out(ran, *words)
    print(f"{' '.join(command)}: {ran.seconds:.1f} s: {line}")
    assert not out.exists()
    if command[0] == "version":  # as kubectl: the client's line before the server's error
        assert ran.stdout.startswith("Client Version: gpunode"), ran.stdout
    else:
        assert ran.stdout == ""


def test_a_credential_plugin_that_never_answers_ends_at_the_timeout(gpunode: Gpunode, tmp_path: Path) -> None:
    """The plugin's own timeout (30 s by default) is cut to what is left of the run."""
    plugin = tmp_path / "plugin" / "kube-login"
    plugin.parent.mkdir()
    plugin.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(600)\n")
    plugin.chmod(0o755)
    with serve_bundle(MINI) as server:
        config = yaml.safe_load(server.kubeconfig_path.read_text())
        config["users"][0]["user"] = {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1",
                                               "command": str(plugin)}}
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(yaml.safe_dump(config))
        ran = gpunode("diagnose", "-q", "--kubeconfig", str(kubeconfig), "--timeout", f"{DEADLINE_S:g}s")
    assert ran.code == 3 and "Traceback" not in ran.stderr, ran.stderr
    assert len(ran.stderr.splitlines()) == 1 and "credential plugin" in ran.stderr, ran.stderr
    assert str(plugin) in ran.stderr
    assert ran.seconds < DEADLINE_S + SLACK_S, ran.seconds


def test_a_run_within_its_timeout_is_unchanged(gpunode: Gpunode) -> None:
    with serve_bundle(MINI) as server:
        live = ("-q", "--all-nodes", "-o", "json", "--kubeconfig", str(server.kubeconfig_path))
        bounded = gpunode("diagnose", *live, "--timeout", "2m")
        free = gpunode("diagnose", *live)
    assert (bounded.code, bounded.stderr) == (free.code, free.stderr) == (1, ""), bounded.stderr
    assert len(bounded.stdout) > 1000


@pytest.mark.parametrize(("args", "words"), [
    (("diagnose", "--from", str(MINI), "--timeout", "5s"), "--timeout bounds a live run"),
    (("diagnose", "--watch", "--timeout", "5s"), "--timeout bounds one run"),
    (("collect", "-o", "b", "--timeout", "soon"), "--timeout 'soon': expected seconds"),
    (("version", "--timeout", "48h"), "--timeout '48h': longer than"),
    (("diff", str(MINI), str(MINI), "--timeout", "5s"), "NEW is a saved bundle"),
])
def test_a_bad_timeout_is_bad_usage(args: tuple[str, ...], words: str, gpunode: Gpunode) -> None:
    ran = gpunode(*args)
    assert ran.code == 2 and ran.stderr.startswith("gpunode: ") and words in ran.stderr, ran.stderr


def test_the_backstop_ends_what_nothing_else_bounds() -> None:
    """Work the cooperative bounds do not reach (here a plain sleep) is ended by the timer
    BACKSTOP_S after the deadline, as RunTimedOut (exit 3), and the deadline is gone after."""
    started = time.monotonic()
    with pytest.raises(RunTimedOut, match=r"did not end within --timeout 0\.2 s"), whole_run(0.2):
        time.sleep(30)
    took = time.monotonic() - started
    assert 0.2 + BACKSTOP_S - 0.1 < took < 0.2 + BACKSTOP_S + 2, took
    assert run_deadline() is None
