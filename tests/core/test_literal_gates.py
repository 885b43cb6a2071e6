"""Literal gates in front of costly patterns answer exactly as the patterns do.

A pattern that needs one of a few literals is not searched on a line (or text) without
them: the kernel log's module-loader, process-crash and peer-memory patterns
(``checks.kernel``), plain nvidia-smi's failure lines (``parse.nvidia_smi``). Every line
of the repository's test data and field cases that a pattern matches must pass its gate.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpunode.checks import crashes, kernel
from gpunode.parse import nvidia_smi

_TESTS = Path(__file__).resolve().parents[1]
_SUFFIXES = {".txt", ".yaml", ".yml", ".log", ".json", ".py"}


def _lines() -> list[str]:
    out: list[str] = []
    for path in sorted(_TESTS.rglob("*")):
        if path.suffix in _SUFFIXES and path.is_file() and path.stat().st_size < 4_000_000:
            out.extend(path.read_text(encoding="utf-8", errors="replace").splitlines())
    return out


@pytest.fixture(scope="module")
def lines() -> list[str]:
    return _lines()


@pytest.mark.parametrize(("pattern", "gate"), [
    (kernel._MODULE_LINE, kernel._MODULE_GATE),
    (crashes._PROCESS_CRASH, kernel._CRASH_GATE),
    (kernel._PEER_MEMORY, kernel._PEER_GATE),
])
def test_kernel_pattern_lines_pass_their_gate(lines: list[str], pattern: re.Pattern[str],
                                              gate: re.Pattern[str]) -> None:
    matched = [line for line in lines if pattern.search(line)]
    assert matched, "the test data holds lines of this pattern"
    assert [line for line in matched if not gate.search(line)] == []


def test_kernel_gate_words_are_in_the_literals() -> None:
    words = (*kernel._MODULE_WORDS, *kernel._CRASH_WORDS, *kernel._PEER_WORDS)
    assert set(words) <= set(kernel._LITERALS)


def test_smi_failure_literals_head_their_patterns() -> None:
    """Each failure pattern is its literal, then anything (or nothing) on the line."""
    pairs = zip(nvidia_smi._FAILURE_PATTERNS, nvidia_smi._FAILURE_LITERALS, strict=True)
    for pattern, literal in pairs:
        assert pattern.pattern.removesuffix(".*") == literal
        assert pattern.fullmatch(literal)  # (no metacharacter in it)


@pytest.mark.parametrize("text", [
    "Failed to initialize NVML: Driver/library version mismatch\n",
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n",
    "No devices were found\n",
    "Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error\n",
    "+-----+\n| NVIDIA-SMI 550.54.15   Driver Version: 550.54.15 |\n",
    "",
])
def test_smi_failure_read_as_before(text: str) -> None:
    joined = re.compile("|".join(f"(?:{p.pattern})" for p in nvidia_smi._FAILURE_PATTERNS))
    found = nvidia_smi.parse_nvidia_smi_failure(text)
    assert (found is not None) == (joined.search(text) is not None)


_ANCHORED_VERSION = re.compile(r"^\s*Driver Version\s*:\s*(\d+)\.", re.MULTILINE)


def _texts() -> list[str]:
    return [path.read_text(encoding="utf-8", errors="replace") for path in sorted(_TESTS.rglob("*"))
            if path.suffix in _SUFFIXES and path.is_file() and path.stat().st_size < 4_000_000]


@pytest.mark.parametrize("extra", [
    "", "    Driver Version                            : 580.65.06\n",
    "| NVIDIA-SMI 550.54.15    Driver Version: 550.54.15    CUDA Version: 12.4 |\n",
    "\n \t\n  Driver Version:\n 535.1\n", "x Driver Version : 1.\n  Driver Version : 2.\n",
])
def test_driver_major_reads_as_the_anchored_pattern(extra: str) -> None:
    """``driver._driver_major`` answers what the multi-line pattern anchored at each line
    start answered, on every test file (the recorded nvidia-smi -q outputs among them)."""
    from gpunode.checks.driver import _driver_major

    for text in [*_texts(), extra, extra + "\n".join(_lines()[:50])]:
        found = _ANCHORED_VERSION.search(text)
        assert _driver_major(text) == (found[1] if found else None)
