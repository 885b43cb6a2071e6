"""runsc writes its debug log where ``--debug-log`` says: a folder (gVisor's debugging guide,
https://gvisor.dev/docs/user_guide/debugging: "--debug-log=/tmp/runsc/", one file per command)
or one file every command appends to (/tmp/runsc.log; gvisor-debug-nostrace.log in
https://gist.github.com/gabriel-v/fbfbe486487ca6c4d3ea20629ccf7575). nvproxy's refusal is
read in any collected file that is, or sits in a folder, named for runsc or gVisor, as in the
probe's var/log/runsc/ (checks.runsc_log). Look-alikes: the booted sandbox's info lines at the
same paths, and the refusal's words in a file named for neither (an application's own log),
say nothing."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

REFUSED = ("W0701 16:17:05.097621  2939814 util.go:64] FATAL ERROR: creating loader: "
           "registering filesystems: registering nvproxy driver: "
           "unsupported Nvidia driver version: 570.211.01")
BOOTED = "I0701 16:17:05.097581  2939814 nvproxy.go:35] NVIDIA driver version: 570.211.01"


def _pod(path: str, text: str, *, healthy: bool) -> Case:
    return synthetic_case("x-runsc-path", [
        {"kind": "workload", "name": "gpu-job", "namespace": "default", "runtimeClassName": "gvisor",
         "state": "ContainerCreating"},
        {"kind": "node-file", "path": path, "text": text + "\n"},
    ], healthy=healthy)


@pytest.mark.parametrize("path", ["tmp/runsc.log", "tmp/runsc/runsc.log.20240701-161705.create",
                                  "var/log/gvisor-debug.log"])
def test_a_refusal_in_runscs_log_wherever_it_was_written(path: str) -> None:
    top = top_pair(_pod(path, BOOTED + "\n" + REFUSED, healthy=False))
    assert top == ("container-runtime", "error_version_mismatch")


@pytest.mark.parametrize(("path", "text"), [("tmp/runsc.log", BOOTED), ("tmp/app/worker.log", REFUSED)])
def test_a_booted_sandbox_or_a_file_not_runscs_says_nothing(path: str, text: str) -> None:
    assert top_pair(_pod(path, text, healthy=True)) is None
