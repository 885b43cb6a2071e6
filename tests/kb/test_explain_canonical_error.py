"""A canonical error text alone on its line, or ending a Go error chain, is quoted by ``explain``.

Go's context.DeadlineExceeded prints "context deadline exceeded"; the C library's strerror
prints ECONNRESET as "connection reset by peer" and EHOSTUNREACH as "no route to host" (Go's
net errors end in them). None holds an error word, so a pasted line that is only such a text,
or a chain that ends in one, was answered with silence. It is the error its program printed
(class error_unreachable): https://github.com/sacloud/autoscaler/issues/172 ("e2e_test.go:305:
context deadline exceeded"), https://github.com/vudsen/ai-disk-cleaner/issues/18 ("analyze disk:
context deadline exceeded"), https://github.com/xbglowx/vault-kv-search/issues/120 (the text
alone), https://github.com/kubernetes/kubernetes/issues/125264 ("next reader: read tcp ...: read:
connection reset by peer"), https://github.com/neuvector/neuvector/issues/402 (the text alone),
https://github.com/NVIDIA/k8s-device-plugin/issues/72 ("dial tcp ...: getsockopt: no route to
host"). A line its program logged at info level, one that retries, and one in which the words
go on are no failure: severity's rules for levels and retries hold. The reading changes no
severity."""

from __future__ import annotations

import pytest

from gpunode.decisive import severity
from gpunode.explain import explain_lines
from gpunode.kb import load_kb

_STATED = [
    "e2e_test.go:305: context deadline exceeded",
    "analyze disk: context deadline exceeded",
    "context deadline exceeded",
    "next reader: read tcp 10.34.160.50:50460->34.83.180.141:443: read: connection reset by peer",
    "connection reset by peer",
    "getting nvidia-smi: dial tcp 172.28.3.100:10250: getsockopt: no route to host",
    # at warning level the program still reports a failure (roc-lang/roc#1131's CI log)
    "WARN: (exporting outputs) no active session for yocq5xvnvdgri5jdj82sry05v: context deadline exceeded",
]

_QUIET = [
    # the program's own info level
    "I0612 10:00:00.000000       1 leaderelection.go:330] lease renewal: context deadline exceeded",
    # a retry (severity's noise)
    "W0612 10:00:00.000000       1 reflector.go:30] will retry: context deadline exceeded",
    # the words inside a line that goes on
    "grpc_client_handled_total{code=\"DeadlineExceeded\"} 0 # context deadline exceeded counter",
]


@pytest.mark.parametrize("line", _STATED)
def test_a_canonical_error_text_is_the_decisive_line(line: str) -> None:
    found = explain_lines(["starting", line], load_kb())
    assert found.decisive is not None and found.decisive.text == line
    assert found.decisive_class == "error_unreachable"


@pytest.mark.parametrize("line", _STATED[:6])
def test_a_canonical_error_text_changes_no_severity(line: str) -> None:
    assert severity(line) == 0


@pytest.mark.parametrize("line", _QUIET)
def test_an_info_line_a_retry_or_words_that_go_on_stay_quiet(line: str) -> None:
    found = explain_lines([line], load_kb())
    assert found.decisive is None and found.decisive_class is None
