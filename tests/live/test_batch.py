"""Batched node commands: the framed sh script, as real sh runs it and as the test server answers."""

from __future__ import annotations

import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

from rich.progress import Progress

from gpunode.collect import batch
from gpunode.collect.kube import ExecOutput
from gpunode.collect.live import _Run, _run_all, _run_execs
from gpunode.collect.plan import ExecTarget
from gpunode.collect.writer import BundleWriter


def _sh(text: str, cwd: Path) -> tuple[bytes, bytes, int]:
    done = subprocess.run(["sh", "-c", text], capture_output=True, cwd=cwd, check=False)
    return done.stdout, done.stderr, done.returncode


def test_real_sh_output_unframes_into_each_commands_result(tmp_path: Path) -> None:
    (tmp_path / "no-newline").write_bytes(b"last line without newline")
    (tmp_path / "binary").write_bytes(bytes(range(256)) + b"\n--fake end 0 0\n")
    commands = [["cat", "no-newline"], ["cat", "missing file"], ["cat", "binary"],
                ["sh", "-c", "echo out; echo err >&2; exit 3"], ["printf", ""]]
    token = batch.new_token()
    out, err, _ = _sh(batch.script(commands, token), tmp_path)
    results = batch.unframe(out, err, token, len(commands))
    assert [r.exit_code if r else None for r in results] == [0, 1, 0, 3, 0]
    assert [r.stdout if r else None for r in results] == [
        b"last line without newline", b"", (tmp_path / "binary").read_bytes(), b"out\n", b""]
    assert results[1] is not None and b"missing file" in results[1].stderr
    assert results[3] is not None and results[3].stderr == b"err\n"


def test_the_framing_the_server_writes_is_what_sh_prints(tmp_path: Path) -> None:
    commands = [["printf", "a\\nb"], ["sh", "-c", "echo x >&2; exit 2"]]
    token = batch.new_token()
    text = batch.script(commands, token)
    assert batch.parse_script(text) == (token, commands)
    out, err, _ = _sh(text, tmp_path)
    assert batch.frame([batch.Framed(b"a\nb", b"", 0), batch.Framed(b"", b"x\n", 2)],
                       token) == (out, err)


def test_other_scripts_are_not_batches() -> None:
    assert batch.parse_script("nvidia-smi -q -x\n") is None
    text = batch.script([["lsmod"]], batch.new_token())
    assert batch.parse_script(text.replace("begin 0", "begin 1")) is None
    assert batch.parse_script(text + "rm -rf /\n") is None


def test_a_batch_cut_short_leaves_the_rest_unanswered() -> None:
    token = batch.new_token()
    out, err = batch.frame([batch.Framed(b"x", b"", 0)], token)
    results = batch.unframe(out, err, token, 3)
    assert results == [batch.Framed(b"x", b"", 0), None, None]


def test_jobs_in_flight_stay_within_the_limit() -> None:
    lock, now, peak = threading.Lock(), [0], [0]

    def job(follow: int) -> list[partial[None]] | None:
        with lock:
            now[0] += 1
            peak[0] = max(peak[0], now[0])
        time.sleep(0.002)
        with lock:
            now[0] -= 1
        return [partial(job, 0)] * follow or None  # type: ignore[list-item]

    with ThreadPoolExecutor(16) as pool, Progress(disable=True) as progress:
        task = progress.add_task("t", total=0)
        _run_all(pool, [partial(job, 1) for _ in range(60)], progress, task, 4)  # type: ignore[list-item]
        assert progress.tasks[0].completed == 120
    assert peak[0] == 4


class _NoShell:
    """An API whose container has no ``sh``: exec of it fails as the runtime reports it."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def exec(self, namespace: str, pod: str, container: str, argv: list[str], *,
             hold: bool = False) -> ExecOutput:
        self.calls.append(argv)
        if argv[0] == "sh":
            return ExecOutput(b"", b'exec: "sh": executable file not found in $PATH', -1)
        return ExecOutput(f"out of {argv[0]}\n".encode(), b"", 0 if argv[0] != "false" else 1)


def test_without_a_shell_each_command_runs_in_its_own_exec(tmp_path: Path) -> None:
    api = _NoShell()
    run = _Run(api, BundleWriter(tmp_path / "b"))  # type: ignore[arg-type]
    where = ("n1", "gpu-operator", "driver-abc", "nvidia-driver-ctr")
    targets = [ExecTarget(*where, ("nvidia-smi",), "nodes/n1/cmd/nvidia-smi.txt"),
               ExecTarget(*where, ("false",), "nodes/n1/cmd/false.txt")]
    _run_execs(run, targets)
    assert [argv[0] for argv in api.calls] == ["sh", "nvidia-smi", "false"]
    assert (run.writer.root / "nodes/n1/cmd/nvidia-smi.txt").read_bytes() == b"out of nvidia-smi\n"
    assert not (run.writer.root / "nodes/n1/cmd/false.txt").exists()
    assert [n for n in run.notes if n.startswith("exec false")]  # its failure is noted
