"""libnvidia-container's device-rule failure pasted wrapped over lines (a fix note's event, "failed
to add device rules:" ending one line and "unable to create new device filters program: load
program: invalid argument: last insn is not an exit or jmp" the next: the kernel refusing the
eBPF device filter the CLI built, NVIDIA/libnvidia-container#176) is the same device-cgroup
failure as the one-line form (NVIDIA/nvidia-container-toolkit#117). Look-alike: the same wrap
before the kernel's refusal to list the cgroup's programs (bpf_prog_query: operation not
permitted) stays a permission refusal."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

LOAD = ("nvidia-container-cli: mount error: failed to add device rules:\n"
        "unable to create new device filters program: load program: invalid argument:\n"
        "last insn is not an exit or jmp\n")
QUERY = ("nvidia-container-cli: mount error: failed to add device rules:\n"
         "unable to find any existing device filters attached to the cgroup:\n"
         "bpf_prog_query(BPF_CGROUP_DEVICE) failed: operation not permitted: unknown\n")


def _plugin(message: str) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "event", "component": "device-plugin", "type": "Warning", "reason": "Failed",
         "message": message},
        {"kind": "pod-state", "component": "device-plugin", "state": "CrashLoopBackOff"},
    ]
    return synthetic_case("x-device-rules", evidence, healthy=False,
                          cluster={"driver_mode": "host", "device_plugin": "static", "components": []})


def test_a_wrapped_device_filter_refusal_is_the_device_cgroup_failure() -> None:
    assert top_pair(_plugin(LOAD)) == ("container-toolkit", "container_cli_cgroup_error")


def test_a_wrapped_program_query_refusal_stays_a_permission_refusal() -> None:
    assert top_pair(_plugin(QUERY)) == ("container-toolkit", "error_permission_denied")
