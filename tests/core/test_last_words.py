"""A container that ended on words no error marks: the last line it wrote is its last word
where that line falls in a class (issue 20: a state is never the whole answer while a line
below it says why). dcgm-exporter's embedded host engine ends on 'Host engine is running as
non-root' (NVIDIA/dcgm-exporter#402, #407 quote it with and without the wrapping error);
a Go client ends on the TLS verdict it got; the kernel's verdict on a module signature. A
line its program logged at info, a retry, a banner or progress line, or a hint says nothing
of the end, and a crash loop with such a log stays the state it is."""

from __future__ import annotations

import pytest

from gpunode.checks.decisive import Text, decisive_finding
from gpunode.decisive import last_words
from gpunode.kb import load_kb
from gpunode.model import Finding, Status

KB = load_kb()
CRASH = Finding("dcgm-exporter", Status.FAILED, "crash_loop", (), {"container": "nvidia-dcgm-exporter"}, 10)
PREVIOUS = "logs/gpu-operator/nvidia-dcgm-exporter-x/nvidia-dcgm-exporter.previous.log"


@pytest.mark.parametrize(
    ("lines", "cls"),
    [
        # NVIDIA/dcgm-exporter#402: the fragment the reporter quotes, the exporter's last line
        (["host engine is running as non-root"], "error_permission_denied"),
        # a Go client's last line, the TLS verdict alone after a wrapped error was cut
        (["Starting dcgm-exporter", "x509: certificate signed by unknown authority"], "error_unreachable"),
        # the kernel's answer to an unsigned module, echoed alone by an install script
        (["Installing NVIDIA driver kernel modules...", "Key was rejected by service"], "error_module_load"),
        # a hint after the last word does not hide it
        (["Host engine is running as non-root", "Please refer to the documentation"],
         "error_permission_denied"),
    ],
)
def test_last_words_in_a_class(lines: list[str], cls: str) -> None:
    found = last_words(lines, KB.class_of)
    assert found is not None
    assert KB.class_of(found.message) == cls


@pytest.mark.parametrize(
    "lines",
    [
        ['time="2025-06-25T20:09:25Z" level=info msg="Running as non-root user, as configured"'],
        ["INFO: host engine started"],
        ["Uncompressing NVIDIA Accelerated Graphics Driver for Linux-x86_64 550.54.15"],
        ["connection reset by peer, retrying in 5s"],
        ["Starting dcgm-exporter", "Collecting metrics every 30000 ms"],
        [],
    ],
)
def test_quiet_or_unclassified_last_line_is_no_cause(lines: list[str]) -> None:
    assert last_words(lines, KB.class_of) is None


def test_crash_loop_is_explained_by_the_words_it_ended_on() -> None:
    text = Text(PREVIOUS, ["host engine is running as non-root"], "exits")
    found = decisive_finding(KB, "dcgm-exporter", CRASH, [text])
    assert found is not None
    assert found.cause == "error_permission_denied"
    assert found.context["decisive_source"] == f"{PREVIOUS}:1"


def test_an_error_line_elsewhere_comes_first() -> None:
    ended = Text(PREVIOUS, ["host engine is running as non-root"], "exits")
    event = Text("event pod gpu-operator/x reason=Failed count=1",
                 ["Error: failed to open /etc/dcgm-exporter/custom.csv: no such file or directory"],
                 "cannot start", numbered=False)
    found = decisive_finding(KB, "dcgm-exporter", CRASH, [ended, event])
    assert found is not None
    assert found.cause == "error_file_state"


def test_a_running_containers_log_is_no_last_word() -> None:
    text = Text("logs/gpu-operator/x/nvidia-dcgm-exporter.log", ["host engine is running as non-root"],
                "reports")
    assert decisive_finding(KB, "dcgm-exporter", CRASH, [text]) is None
