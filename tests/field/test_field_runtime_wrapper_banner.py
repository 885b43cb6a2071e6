"""CRI-O that cannot decode its OCI runtime's answer because the GPU Operator's runtime wrapper
printed its banner to stdout: the toolkit installs nvidia-container-runtime as a shell wrapper
that, while no nvidia module is loaded, echoes "nvidia driver modules are not yet loaded,
invoking runc directly" and execs runc; on stdout the banner precedes the JSON of the OCI `state`
operation, and CRI-O logs 'failed to decode container status for <id>: ... bigger context
...|nvidia driver modules are not yet loaded, invoking /|...' (NVIDIA/nvidia-container-toolkit
commit 61f9bde moved the banner to stderr). The toolkit's layer, not the runtime's own
configuration. The banner alone (the first line of a container started while the driver was
still loading) is no error, and a decode failure on other bytes stays the runtime's."""

from __future__ import annotations

from case import Case, synthetic_case
from scoreboard import top_pair

_ID = "16779f4cd2414a164aae56856b491f86fe0c6b803a3b4474ada2cc0864c8e028"
#: The commit's quote of CRI-O's warning.
CRIO = (f'level=warning msg="Error updating the container status \\"{_ID}\\": failed to decode container '
        f'status for {_ID}: skipThreeBytes: expect ull, error found in #2 byte of ...|nvidia drive|..., '
        'bigger context ...|nvidia driver modules are not yet loaded, invoking /|..." '
        'id=a4b48041-edc4-48c2-8d75-4ad03cb3d8e1 name=/runtime.v1.RuntimeService/CreateContainer')
#: Look-alike: the same decode failure on bytes that are not the wrapper's.
OTHER_BYTES = CRIO.replace("nvidia driver modules are not yet loaded, invoking /", "time=\\\"2025-01-0")


def _crio(journal: str) -> Case:
    evidence: list[dict[str, object]] = [
        {"kind": "node-cmd", "name": "journal-runtime.txt", "text": journal + "\n"},
        {"kind": "pod-state", "component": "device-plugin", "container": "toolkit-validation", "init": True,
         "state": "Init:RunContainerError"}]
    return synthetic_case("x-wrapper-banner", evidence, healthy=False, platform="crio",
                          cluster={"runtime": "crio"})


def test_a_decode_failure_on_the_wrappers_banner_is_the_toolkits() -> None:
    top = top_pair(_crio(CRIO))
    assert top is not None and top[0] == "container-toolkit"


def test_a_decode_failure_on_other_bytes_is_not_the_toolkits() -> None:
    top = top_pair(_crio(OTHER_BYTES))
    assert top is None or top[0] != "container-toolkit"


def test_the_banner_at_the_head_of_a_running_containers_log_is_healthy() -> None:
    text = ("nvidia driver modules are not yet loaded, invoking runc directly\n"
            "DRIVER_ARCH is x86_64\nCreating directory NVIDIA-Linux-x86_64-550.90.07\n")
    log = {"kind": "log", "component": "driver", "container": "nvidia-driver-ctr", "text": text}
    case = synthetic_case("x-banner-log", [log])
    assert top_pair(case) is None
