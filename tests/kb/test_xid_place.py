# ruff: noqa: E501  (real log lines are long)
"""A repeated Xid 13/31 at one engine location of one GPU, from several processes, while the
node's other GPUs log no such Xid, is that GPU; one report, one process, reports spread over
locations or GPUs, or a node with one GPU stay the application's."""

from __future__ import annotations

from gpunode.checks.xid_place import place_of, repeated_place
from gpunode.parse.kernel_log import XidEvent, parse_kernel_log

MMU = "NVRM: Xid (PCI:0000:{pci}:00): 31, pid={pid}, Ch 00000008, intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_{client} faulted @ 0x7fd7_90743000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ"
SM = "NVRM: Xid (PCI:0000:{pci}:00): 13, Graphics SM Warp Exception on (GPC {gpc}, TPC 3, SM 0): Illegal Instruction Encoding"
KILLED = "NVRM: Xid (PCI:0000:{pci}:00): 43, pid={pid}, name=python, channel 0x00000002"


def _events(*lines: str) -> tuple[XidEvent, ...]:
    return parse_kernel_log("\n".join(lines)).xids


def test_xid31_from_three_processes_at_one_client_names_the_gpu() -> None:
    events = _events(
        KILLED.format(pci="3d", pid=1405),
        *(MMU.format(pci="db", pid=pid, client=10) for pid in (13641, 14323, 33275)),
    )
    found = repeated_place(events, 8)
    assert found is not None
    assert (found.pci, found.xid, found.place, found.processes) == ("0000:db:00", 31, "ENGINE GRAPHICS GPCCLIENT_T1_10", 3)


def test_xid13_without_pid_takes_the_process_of_the_xid43_after_it() -> None:
    lines = [line for pid in (101, 202, 303) for line in (SM.format(pci="1b", gpc=10), KILLED.format(pci="1b", pid=pid))]
    found = repeated_place(_events(*lines), 4)
    assert found is not None
    assert (found.xid, found.place) == (13, "GPC 10, TPC 3, SM 0")


def test_look_alikes_stay_the_applications() -> None:
    three = (13641, 14323, 33275)
    # one process, again and again
    assert repeated_place(_events(*(MMU.format(pci="db", pid=7, client=10) for _ in three)), 8) is None
    # three processes, three places
    assert repeated_place(_events(*(MMU.format(pci="db", pid=p, client=c) for p, c in zip(three, (1, 5, 9), strict=True))), 8) is None
    # the same Xid on another GPU of the node too: the job, not the GPU
    spread = [*(MMU.format(pci="db", pid=p, client=10) for p in three), MMU.format(pci="1a", pid=4, client=2)]
    assert repeated_place(_events(*spread), 8) is None
    # a node with one GPU has nothing to hold it against
    assert repeated_place(_events(*(MMU.format(pci="db", pid=p, client=10) for p in three)), 1) is None
    # Xid 13 with no process anywhere (a burst of one exception) is not counted
    assert repeated_place(_events(*(SM.format(pci="70", gpc=1) for _ in three)), 8) is None


def test_place_of_reads_the_gpc_between_engine_and_client() -> None:
    (event,) = _events("NVRM: Xid (PCI:0000:c1:00): 31, pid=2646416, name=python, channel 0x0000001a, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC10 GPCCLIENT_T1_5 faulted @ 0x725f_fb800000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ")
    assert place_of(event) == "ENGINE GRAPHICS GPC10 GPCCLIENT_T1_5"

