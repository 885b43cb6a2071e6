"""An event message that relays a program's log (several lines with their own klog headers, as
a hook's stderr carries nvidia-container-cli's debug lines before its error) is read line by
line, each at its own level (checks.decisive ``_event_lines``): the CLI's info lines ahead of
its error ("I0913 ... nvc.c:376] initializing library context ...", then "nvidia-container-cli:
initialization error: ...") no longer make the whole message an info line, so the error reads
as it does alone. A message the runtime merely wrapped stays one message.

Sources: the CLI's debug output as NVIDIA/nvidia-docker#1675 and #1203 and
NVIDIA/nvidia-container-toolkit#154 paste it (`nvidia-container-cli -k -d /dev/tty info`),
NVIDIA/libnvidia-container#3 (the same lines before "cuda error: unknown error"). Look-alike: a
relayed log of info and warning lines only ("W0913 ... nvc.c:273] failed to set inheritable
capabilities", #1675) says no failure."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

#: NVIDIA/nvidia-docker#1675's debug lines (trimmed) and the CLI's error after them.
DEBUG = """I0913 11:52:12.170416 4764 nvc.c:376] initializing library context (version=1.10.0, build=395fd41)
I0913 11:52:12.170431 4764 nvc.c:350] using root /
I0913 11:52:12.170433 4764 nvc.c:351] using ldcache /etc/ld.so.cache
W0913 11:52:12.222671 4765 nvc.c:273] failed to set inheritable capabilities
W0913 11:52:12.222689 4765 nvc.c:274] skipping kernel modules load due to failure
I0913 11:52:12.222926 4766 rpc.c:71] starting driver rpc service
"""
ERRORS = ("nvidia-container-cli: initialization error: driver rpc error: failed to process request",
          "nvidia-container-cli: initialization error: cuda error: unknown error",
          "nvidia-container-cli: initialization error: nvml error: driver not loaded")


def _failed(message: str) -> list[dict[str, Any]]:
    return [{"kind": "workload", "name": "gpu-test", "namespace": "default", "container": "cuda",
             "state": "RunContainerError"},
            {"kind": "event", "object": {"kind": "Pod", "name": "gpu-test", "namespace": "default"},
             "type": "Warning", "reason": "Failed", "message": message}]


def _pair(case_id: str, message: str) -> tuple[str, str] | None:
    return top_pair(synthetic_case(case_id, _failed(message), healthy=False,
                                   cluster={"driver_mode": "host", "gpu_node": {"gpus": 1}}))


def test_the_cli_s_error_after_its_debug_lines_reads_as_it_does_alone() -> None:
    for i, error in enumerate(ERRORS):
        alone = _pair(f"x-relayed-alone-{i}", error + "\n")
        assert alone is not None, error
        assert _pair(f"x-relayed-log-{i}", DEBUG + error + "\n") == alone, error


def test_a_relayed_log_of_info_and_warning_lines_says_no_failure() -> None:
    assert _pair("x-relayed-quiet", DEBUG) is None
