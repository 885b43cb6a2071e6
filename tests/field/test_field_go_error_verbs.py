"""Go's "error <doing> X" messages name a failure whatever the verb: the device plugin's
"error checking MPS daemon health" (NVIDIA/k8s-device-plugin#634, its MPS daemon's health check
against a control daemon no one deployed), go-nvlib's "error asserting MIG enabled: ...". A
line that only says what a program is checking is no error."""

from __future__ import annotations

from case import synthetic_case
from scoreboard import top_pair

from gpunode.decisive import severity


def test_more_go_error_verbs_are_error_words() -> None:
    assert severity("error checking MPS daemon health") == 1
    assert severity("error asserting MIG enabled: Not Supported") == 1
    assert severity("error querying device count: Unknown Error") == 1


def test_progress_words_are_not() -> None:
    assert severity("checking MPS daemon health") == 0
    assert severity("skipping error checking for device 0") == 0


def test_running_plugin_that_cannot_check_its_mps_daemon_is_named() -> None:
    case = synthetic_case("x-go-verbs", [
        {"kind": "log", "component": "device-plugin", "container": "nvidia-device-plugin",
         "text": "error checking MPS daemon health\n"}], healthy=False)
    top = top_pair(case)
    assert top is not None and top[0] == "device-plugin"
