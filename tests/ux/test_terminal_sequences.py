"""Every terminal control sequence in collected text is neutralised in every output of every
command: OSC ended by BEL or by ESC \\ (window titles, hyperlinks), DCS, 8-bit C1 controls and
CSI, planted in a driver log line that becomes evidence and in a pod's waiting message. Each
command's output is the bytes its command line's ``main`` writes in this process
(tests/inprocess.py: no newline translation, so a stray carriage return would show); the
console script on a real terminal (a pty) is the last case."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from inprocess import run_cli_bytes

pytestmark = pytest.mark.slow

GPUNODE = str(Path(sys.executable).parent / "gpunode")
LOG = "logs/gpu-operator/nvidia-driver-daemonset-ncdvs/nvidia-driver-ctr.log"
PLANTED = (
    " \x1b]0;OSC-BEL-TITLE\x07"  # OSC ended by BEL: retitles the window
    " \x1b]8;;http://osc-st.example\x1b\\hyper\x1b]8;;\x1b\\"  # OSC 8 hyperlink ended by ESC \
    " \x1bP1$qDCS-PAYLOAD\x1b\\"  # DCS (a request the terminal answers)
    " \x9b2J \x9d0;C1-OSC-TITLE\x9c \x85"  # 8-bit CSI, OSC and ST, NEL
    " \x1b[2J\x1b[31m"  # 7-bit CSI
)
PAYLOADS = (b"OSC-BEL-TITLE", b"osc-st.example", b"DCS-PAYLOAD", b"C1-OSC-TITLE")


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("esc") / "bundle"
    made = run_cli_bytes("sim", "falcon-ai-broken", "-o", str(out))
    assert made.returncode == 0, made.stderr[-500:]
    log = out / LOG
    lines = log.read_text().split("\n")
    lines[21] += PLANTED  # the line quoted as evidence (kernel_headers_missing)
    log.write_text("\n".join(lines))
    pods_file = out / "cluster" / "pods.json"
    pods = json.loads(pods_file.read_text())
    for pod in pods["items"]:
        for status in pod["status"].get("containerStatuses", []):
            waiting = status.get("state", {}).get("waiting")
            if waiting and waiting.get("message"):
                waiting["message"] += PLANTED
    pods_file.write_text(json.dumps(pods))
    return out


def run(*args: str) -> bytes:
    proc = run_cli_bytes(*args, env={**os.environ, "COLUMNS": "100"})
    assert proc.returncode in (0, 1), (args, proc.stderr[-500:])
    return proc.stdout + proc.stderr


def assert_neutral(data: bytes, what: str) -> None:
    text = data.decode()
    controls = [c for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]
    assert not controls, (what, sorted(set(map(hex, map(ord, controls)))))
    assert "\\u001b" not in text and "\\u009" not in text, what  # nor escaped in JSON
    assert not [p for p in PAYLOADS if p in data], (what, [p for p in PAYLOADS if p in data])


@pytest.mark.parametrize("fmt", ["table", "wide", "json", "yaml", "markdown", "html"])
def test_diagnose_outputs_are_neutral(planted: Path, fmt: str) -> None:
    out = run("diagnose", "--from", str(planted), "-o", fmt, "--stack")
    assert b"Could not resolve Linux kernel version" in out  # the planted line is shown
    assert_neutral(out, fmt)


@pytest.mark.parametrize("fmt", ["table", "json", "markdown", "junit", "html"])
def test_validate_outputs_are_neutral(planted: Path, fmt: str) -> None:
    assert_neutral(run("validate", "--from", str(planted), "-o", fmt), f"validate {fmt}")


def test_stack_explain_and_watch_are_neutral(planted: Path) -> None:
    assert_neutral(run("stack", "--from", str(planted), "gpu-wk-02"), "stack")
    for fmt in ("table", "json"):
        assert_neutral(run("explain", "-o", fmt, str(planted / LOG)), f"explain {fmt}")
    assert_neutral(run("diagnose", "--from", str(planted), "--watch", "--count", "2", "--interval", "0",
                       "-o", "json"), "watch")


def test_the_terminal_sees_no_sequence_through_a_pty(planted: Path) -> None:
    """On a terminal rich draws its own colours; none of the planted sequences reach it."""
    if shutil.which("script") is None:
        pytest.skip("script(1) not installed")
    proc = subprocess.run(["script", "-qec", f"{GPUNODE} diagnose --from {planted}", "/dev/null"],
                          capture_output=True, timeout=120, check=False)
    assert b"Could not resolve Linux kernel version" in proc.stdout
    assert not [p for p in PAYLOADS if p in proc.stdout]
    assert b"\x1b]" not in proc.stdout and b"\x1bP" not in proc.stdout and b"\xc2\x9d" not in proc.stdout
