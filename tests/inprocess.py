"""The command line run in this test process, answered as ``subprocess.run`` answers.

A fresh interpreter per command costs 0.2 to 1 s of CPU (imports, the knowledge base's
patterns compiled again); most CLI tests check what a command prints and the code it exits
with, which ``gpunode.cli.main`` gives here as well: stdout and stderr are pipes, not a
terminal, stdin is what the test hands in (else empty), and the code is ``main``'s
``sys.exit``. Tests of the process itself (signals, time-outs, the console script, a
terminal, memory of a child) keep a real subprocess.
"""

from __future__ import annotations

import gc
import io
import logging
import os
import subprocess
import sys
from collections.abc import Mapping

from gpunode.cli import main


def _text(data: bytes) -> str:
    """Decoded as ``subprocess.run(text=True)`` decodes: UTF-8, universal newlines."""
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def as_a_fresh_process() -> None:
    """What an earlier report command in this process froze (``bundle.load.gc_paused``) goes
    back to the collector's oldest generation, without the full collection the next command
    would begin with: in a test process that pass scans the whole session's objects (about
    50 ms each time). A command starts in a fresh process, where nothing is frozen."""
    from gpunode.bundle import load

    if load._FROZEN[0]:
        gc.unfreeze()
        load._FROZEN[0] = False


def run_cli(*args: str, stdin: str | bytes | None = None,
            env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``gpunode ARGS`` in this process: its exit code, stdout and stderr as text.

    ``env`` replaces the environment for the call, as ``subprocess.run(env=...)`` does; the
    ``gpunode`` logger (``-v 6`` adds a handler on the call's stderr) is put back after it."""
    done = run_cli_bytes(*args, stdin=stdin, env=env)
    return subprocess.CompletedProcess(done.args, done.returncode, _text(done.stdout), _text(done.stderr))


def run_cli_bytes(*args: str, stdin: str | bytes | None = None,
                  env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """``run_cli``, its stdout and stderr the bytes written, as ``subprocess.run`` without
    ``text=True`` gives them (no newline translation: a stray carriage return stays)."""
    as_a_fresh_process()
    out, err = io.BytesIO(), io.BytesIO()
    logger = logging.getLogger("gpunode")
    saved_log = list(logger.handlers), logger.level
    raw = stdin.encode() if isinstance(stdin, str) else (stdin or b"")
    saved = sys.stdin, sys.stdout, sys.stderr, sys.argv
    saved_env = dict(os.environ) if env is not None else None
    sys.stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    sys.argv = ["gpunode", *args]
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    code = 0
    try:
        main()
    except SystemExit as exc:
        if isinstance(exc.code, str):  # as the interpreter does: the message on stderr, exit 1
            print(exc.code, file=sys.stderr)
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        written = out.getvalue(), err.getvalue()  # before the wrappers go (closing them)
        sys.stdin, sys.stdout, sys.stderr, sys.argv = saved
        logger.handlers[:] = saved_log[0]
        logger.setLevel(saved_log[1])
        if saved_env is not None:
            os.environ.clear()
            os.environ.update(saved_env)
    return subprocess.CompletedProcess(["gpunode", *args], code, written[0], written[1])
