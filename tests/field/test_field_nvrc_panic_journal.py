"""NVRC's panic ("NVRC panic: ...", its panic hook, before it powers the Kata GPU guest off) relayed
in the container runtime's journal while a GPU pod waits: the sandbox runtime's guest died, and
the guest's last error before the panic says why (kata-containers/kata-containers#13432: Fabric
Manager's "failed to open fabric topology file", a file the guest image lacked, read as not
found). Look-alikes: the same journal while every GPU pod runs, NVRC's routine lines, and the
same open failure with its errno after it (the errno's class) say nothing of the kind."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import explained, top_pair

PANIC = ("failed to open fabric topology file\n"
         "[  212.870394] NVRC panic: panicked at src/kmsg.rs:95:13:\n"
         "[  212.870394] timeout waiting for: FM starting NvLink Inband\n")
ROUTINE = ("[    3.855603] NVRC::get_devices[1]: GPUs found: [\"0000:02:00.0\"]\n"
           "[    3.856292] NVRC[1]: cold-plug mode detected, starting GPU setup\n")


def _node(journal: str, state: str) -> Case:
    return synthetic_case("x-nvrc-panic", [
        {"kind": "workload", "name": "cc-job", "namespace": "default",
         "runtimeClassName": "kata-qemu-nvidia-gpu-tdx", "resources": {"limits": {"nvidia.com/pgpu": "1"}},
         "state": state},
        {"kind": "node-cmd", "name": "journal-runtime.txt", "text": journal},
    ], healthy=state == "Running", cluster={"gpu_node": {"gpu": "NVIDIA H200", "gpus": 8}})


def test_an_nvrc_panic_in_the_runtime_journal_is_the_runtimes_guest() -> None:
    assert top_pair(_node(PANIC, "ContainerCreating")) == ("container-runtime", "error_not_found")


def test_a_panic_with_only_its_own_message_quotes_the_message() -> None:
    top = top_pair(_node(PANIC.split("\n", 1)[1], "ContainerCreating"))
    assert top == ("container-runtime", "error_unreachable"), top


@pytest.mark.parametrize(("journal", "state"), [(PANIC, "Running"), (ROUTINE, "ContainerCreating")])
def test_a_running_pod_or_routine_nvrc_lines_blame_no_runtime(journal: str, state: str) -> None:
    top = top_pair(_node(journal, state))
    assert top is None or top[0] != "container-runtime", top


@pytest.mark.parametrize(("line", "cls"), [
    ("failed to open fabric topology file", "error_not_found"),
    ('failed to open textfile data file "/x/b.prom": open /x/b.prom: permission denied',
     "error_permission_denied"),
])
def test_an_open_failure_without_errno_is_not_found(line: str, cls: str) -> None:
    assert explained(line).decisive_class == cls
