"""Several node commands in one exec: a small ``sh`` script whose output is framed.

Each exec costs a WebSocket session (a fresh TLS connection and, on a real
cluster, a kubelet and runtime round trip), so the commands a node needs in one
pod run as one ``sh -c`` script. Every command's stdout and stderr are framed by
lines carrying a random token and the command's index; its exit status follows
its stdout. The script has a fixed line layout, so the test API server can read
it back (``parse_script``) and answer it from a bundle exactly as ``sh`` would.
"""

from __future__ import annotations

import re
import secrets
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from gpunode.relazy import lazy_compile

_BEGIN = lazy_compile(r"^printf '%s\\n' '--(?P<token>[0-9a-f]{16}) begin (?P<key>\d+)'; "
                      r"printf '%s\\n' '--(?P=token) begin (?P=key)' >&2$")


@dataclass(frozen=True)
class Framed:
    """One command's share of a batch: what it printed and how it exited."""

    stdout: bytes
    stderr: bytes
    exit_code: int


def new_token() -> str:
    return secrets.token_hex(8)


def script(commands: Sequence[Sequence[str]], token: str) -> str:
    """The ``sh -c`` text running ``commands`` in turn, three lines per command."""
    lines = []
    for key, argv in enumerate(commands):
        mark = f"--{token} begin {key}"
        lines.append(f"printf '%s\\n' '{mark}'; printf '%s\\n' '{mark}' >&2")
        lines.append(shlex.join(argv))
        lines.append(f"rc=$?; printf '\\n%s %d\\n' '--{token} end {key}' \"$rc\"; "
                     f"printf '\\n%s\\n' '--{token} end {key}' >&2")
    return "\n".join(lines) + "\n"


def parse_script(text: str) -> tuple[str, list[list[str]]] | None:
    """The token and commands of a ``script`` text, or None if it is not one."""
    lines = text.rstrip("\n").split("\n")
    if not lines or len(lines) % 3:
        return None
    token, commands = "", list[list[str]]()
    for start in range(0, len(lines), 3):
        match = _BEGIN.match(lines[start])
        if match is None or int(match["key"]) != len(commands) or (
                token and match["token"] != token):
            return None
        token = match["token"]
        try:
            commands.append(shlex.split(lines[start + 1]))
        except ValueError:
            return None
    return token, commands


def frame(outputs: Sequence[Framed], token: str) -> tuple[bytes, bytes]:
    """stdout and stderr of the script for these per-command results (what sh prints)."""
    out, err = bytearray(), bytearray()
    for key, result in enumerate(outputs):
        mark = f"--{token} begin {key}\n".encode()
        out += mark + result.stdout + f"\n--{token} end {key} {result.exit_code}\n".encode()
        err += mark + result.stderr + f"\n--{token} end {key}\n".encode()
    return bytes(out), bytes(err)


def unframe(stdout: bytes, stderr: bytes, token: str, count: int) -> list[Framed | None]:
    """Each command's result, None where the script never reached it (or sh is missing)."""
    tok = re.escape(token.encode())
    outs = {int(m[1]): (m[2], int(m[3])) for m in re.finditer(
        rb"--" + tok + rb" begin (\d+)\n(.*?)\n--" + tok + rb" end \1 (-?\d+)\n", stdout,
        re.DOTALL)}
    errs = {int(m[1]): m[2] for m in re.finditer(
        rb"--" + tok + rb" begin (\d+)\n(.*?)\n--" + tok + rb" end \1\n", stderr, re.DOTALL)}
    results: list[Framed | None] = []
    for key in range(count):
        if key in outs:
            data, code = outs[key]
            results.append(Framed(data, errs.get(key, b""), code))
        else:
            results.append(None)
    return results
