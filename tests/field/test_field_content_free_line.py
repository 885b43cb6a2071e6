"""A decisive line that says nothing by itself is read with the line of the same run before it.

dcgm-exporter ends on "Encountered a failure." right after "Attempting to connect to remote
hostengine at ..." (NVIDIA/dcgm-exporter#536): the attempt is what failed, so the pair reads as
"Failed to connect to remote hostengine at ...", the exporter's catalogued cause, and both lines
are quoted, the attempt first. Where nothing before the line carries a class (an info line
that only says the program started, NVIDIA/dcgm-exporter#612; an error code with no words,
NVIDIA/dcgm-exporter#443), or the line before stands in another burst of time, the line stays
unclassified. An error line before it that has a class is already chosen over it (the
page of https://github.com/imroc/kubernetes-guide on dcgm-exporter, "Error: Failed to
initialize NVML" before "Encountered a failure."). A retry that succeeded leaves the exporter
healthy: the reading changes no severity, only the cause of a component already failed."""

from __future__ import annotations

from typing import Any

import pytest
from case import synthetic_case
from scoreboard import top_pair

from gpunode.decisive import decisive_line
from gpunode.explain import explain_lines
from gpunode.kb import load_kb

# NVIDIA/dcgm-exporter#536 (slog's text form; the stack trace cut after its first frame)
_DCGM_536 = [
    'time=2025-08-20T09:06:38.822Z level=INFO msg="Starting dcgm-exporter" Version=4.2.3-4.1.3',
    'time=2025-08-20T09:06:38.830Z level=INFO msg="Attempting to connect to remote hostengine at '
    'nvidia-dcgm:5555"',
    'time=2025-08-20T09:06:46.058Z level=ERROR msg="Encountered a failure." '
    'stacktrace="goroutine 1 [running]:\\nruntime/debug.Stack()\\n"',
]
# NVIDIA/dcgm-exporter#612: nothing but the start before the exit
_DCGM_612 = [
    'time=2026-01-13T14:23:40.195Z level=DEBUG msg="Debug output is enabled"',
    'time=2026-01-13T14:23:40.195Z level=INFO msg="Starting dcgm-exporter" Version=4.4.1-4.6.0',
    "exit status 1",
]
# NVIDIA/dcgm-exporter#443: an error code with no words before the failure
_DCGM_443 = [
    "INFO[0000] Starting dcgm-exporter",
    "DEBU[0000] Command line: /usr/bin/dcgm-exporter",
    "CacheManager Init Failed. Error: -17",
    "ERRO[0000] Encountered a failure.",
]
# https://github.com/imroc/kubernetes-guide (dcgm-exporter on a node without a GPU)
_IMROC = [
    'time="2024-04-26T09:16:13Z" level=info msg="Starting dcgm-exporter"',
    "Error: Failed to initialize NVML",
    'time="2024-04-26T09:16:13Z" level=error msg="Encountered a failure." '
    'stacktrace="goroutine 1 [running]:\\n"',
]
# the attempt two minutes before the failure: another run
_OTHER_BURST = [
    'time=2025-08-20T09:04:38.830Z level=INFO msg="Attempting to connect to remote hostengine at '
    'nvidia-dcgm:5555"',
    'time=2025-08-20T09:06:46.058Z level=ERROR msg="Encountered a failure."',
]


def test_the_attempt_before_a_content_free_failure_is_what_failed() -> None:
    kb = load_kb()
    found = decisive_line(_DCGM_536, kb.class_of)
    assert found is not None and found.line_no == 3 and found.context_no == 2
    assert found.message == "Failed to connect to remote hostengine at nvidia-dcgm:5555"
    assert kb.class_of(found.message) == "error_unreachable"


@pytest.mark.parametrize("lines", [_DCGM_612, _DCGM_443, _OTHER_BURST])
def test_nothing_before_it_with_a_class_leaves_it_unclassified(lines: list[str]) -> None:
    kb = load_kb()
    found = decisive_line(lines, kb.class_of)
    assert found is not None and found.line == lines[-1].strip() and not found.context
    assert kb.class_of(found.message) is None


def test_an_error_line_with_a_class_before_it_is_still_chosen() -> None:
    kb = load_kb()
    found = decisive_line(_IMROC, kb.class_of)
    assert found is not None and found.line == "Error: Failed to initialize NVML" and not found.context


def test_explain_reads_and_quotes_both_lines() -> None:
    explained = explain_lines(_DCGM_536)
    assert explained.decisive_class == "dcgm_hostengine_unreachable"
    top = explained.matches[0]
    assert top.cause.code == "dcgm_hostengine_unreachable"
    assert [q.line_no for q in top.quotes] == [2, 3]


def _exporter(text: list[str], state: str, previous: bool) -> list[dict[str, Any]]:
    return [
        {"kind": "log", "component": "dcgm-exporter", "container": "nvidia-dcgm-exporter",
         "previous": previous, "text": "\n".join(text) + "\n"},
        {"kind": "pod-state", "component": "dcgm-exporter", "state": state},
    ]


def test_a_crash_looping_exporter_is_named_by_the_pair() -> None:
    case = synthetic_case("x-content-free", _exporter(_DCGM_536, "CrashLoopBackOff", True), healthy=False)
    assert top_pair(case) == ("dcgm-exporter", "dcgm_hostengine_unreachable")


def test_a_retry_that_succeeded_stays_healthy() -> None:
    retried = [*_DCGM_536,
               'time=2025-08-20T09:06:56.101Z level=INFO msg="Attempting to connect to remote hostengine at '
               'nvidia-dcgm:5555"',
               'time=2025-08-20T09:06:56.240Z level=INFO msg="DCGM successfully initialized!"',
               'time=2025-08-20T09:06:57.002Z level=INFO msg="Starting webserver"']
    assert top_pair(synthetic_case("x-content-free-retried", _exporter(retried, "Running", False))) is None
