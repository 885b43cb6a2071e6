"""Kernel log parsing: Xid lines in every timestamp style, fallen-off-bus, NVRM errors."""

from __future__ import annotations

import io
import random

import pytest
from node_fixtures import read_fixture

from gpunode.parse.kernel_log import iter_xid_events, parse_kernel_log

HGX_DMESG = read_fixture("h100-hgx", "dmesg.txt")


def test_hgx_xids_in_order_with_fields() -> None:
    log = parse_kernel_log(HGX_DMESG)
    assert [(e.pci, e.xid) for e in log.xids] == [
        ("0000:2a:00", 63),
        ("0000:5d:00", 48),
        ("0000:5d:00", 154),
        ("0000:ab:00", 119),
        ("0000:db:00", 79),
        ("0000:db:00", 154),
    ]
    dbe = log.xids[1]
    assert (dbe.pid, dbe.process) == ("91237", "python3")
    assert dbe.message.startswith("Ch 00000076, An uncorrectable double bit error")
    assert HGX_DMESG.splitlines()[dbe.line_no - 1] == dbe.line


def test_unknown_pid_and_missing_pid_are_none() -> None:
    log = parse_kernel_log(HGX_DMESG)
    fallen = next(e for e in log.xids if e.xid == 79)
    assert (fallen.pid, fallen.process) == (None, None)
    assert fallen.message == "GPU has fallen off the bus."
    recovery = log.xids[-1]
    assert (recovery.pid, recovery.process) == (None, None)
    assert recovery.message.endswith("to 0x2 (Node Reboot Required)")


def test_gsp_timeout_process_name_with_brackets() -> None:
    line = (
        "[ 9.1] NVRM: Xid (PCI:0000:17:00): 119, pid=1234, name=nvc:[driver], Timeout after "
        "6s of waiting for RPC response from GPU0 GSP! Expected function 76 (GSP_RM_CONTROL)."
    )
    (event,) = iter_xid_events([line])
    assert (event.xid, event.pid, event.process) == (119, "1234", "nvc:[driver]")


def test_driver_load_uuid_map_and_fallen_off_bus() -> None:
    log = parse_kernel_log(HGX_DMESG)
    assert log.driver_loaded == "570.133.20"
    assert log.pci_to_uuid["0000:db:00"] == "GPU-c3a7e9f2-10d4-4b6a-9f85-7e2d1b0a6c34"
    assert len(log.pci_to_uuid) == 4
    fallen_lines = [line for _, line in log.fallen_off_bus]
    assert any("GPU 0000:db:00.0: GPU has fallen off the bus." in x for x in fallen_lines)
    assert any("installed in this system has fallen off the bus" in x for x in fallen_lines)
    assert all("Xid" not in line for line in fallen_lines)


def test_open_module_load_line_from_recorded_h200() -> None:
    log = parse_kernel_log(read_fixture("h200-vm", "dmesg-nvidia.txt"))
    assert log.driver_loaded == "580.159.04"
    assert log.xids == () and log.nvrm_errors == () and log.fallen_off_bus == ()


def test_failure_signatures_are_collected() -> None:
    text = read_fixture("h100-hgx", "dmesg-failures.txt")
    errors = [line for _, line in parse_kernel_log(text).nvrm_errors]
    assert any("Loading of unsigned module is rejected" in x for x in errors)
    assert any("NVRM: API mismatch" in x for x in errors)
    assert any("is not supported by the" in x for x in errors)
    assert any("RmInitAdapter failed" in x for x in errors)
    assert any("rm_init_adapter failed" in x for x in errors)
    # an unsigned module that loaded (taint notice) is not an error
    assert not any("module verification failed" in x for x in errors)


XID_TEXT = (
    "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
)


@pytest.mark.parametrize(
    "line",
    [
        f"[  812.338190] {XID_TEXT}",
        f"[Mon Nov 30 17:57:47 2026] {XID_TEXT}",
        f"Nov 30 17:57:47 gpu-wk-01 kernel: {XID_TEXT}",
        f"2026-11-30T17:57:47.338190+00:00 gpu-wk-01 kernel: {XID_TEXT}",
        f"3,1842,812338190,-;{XID_TEXT}",
        f"kern  :warn  : [  812.338190] {XID_TEXT}",
    ],
)
def test_every_timestamp_style(line: str) -> None:
    (event,) = parse_kernel_log(line + "\n").xids
    assert (event.pci, event.xid, event.message) == (
        "0000:3b:00",
        79,
        "GPU has fallen off the bus.",
    )


def test_pci_with_function_and_nvlink5_format() -> None:
    lines = [
        "kernel: NVRM: Xid (PCI:0008:01:00.0): 149, NETIR_LINK_EVT  Fatal   XC0 i0 Link 09 (0x1)",
        " SUBSYSTEM=pci",  # /dev/kmsg continuation record
    ]
    (event,) = iter_xid_events(lines)
    assert (event.pci, event.xid, event.pid) == ("0008:01:00.0", 149, None)
    assert event.message.startswith("NETIR_LINK_EVT")


def test_iter_xid_events_streams_lazily() -> None:
    consumed: list[str] = []

    def lines() -> io.StringIO:
        return io.StringIO(HGX_DMESG)

    stream = iter_xid_events(line for line in lines() if not consumed.append(line))
    first = next(stream)
    assert first.xid == 63
    assert len(consumed) < len(HGX_DMESG.splitlines())  # stopped at the first event


def test_garbage_yields_nothing() -> None:
    log = parse_kernel_log("\x00\x01 random bytes\nNVRM: Xid (PCI:zz): x\n")
    assert log.xids == () and log.driver_loaded is None and log.pci_to_uuid == {}


LINES = [
    "[ 1.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=123, name=python, GPU has fallen off the bus.",
    "[ 2.0] NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.",
    "[ 3.0] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build",
    "[ 3.5] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.54.03  Tue Jun  6 22:20:39 UTC 2023",
    "[ 4.0] NVRM: GPU at PCI:0000:3b:00: GPU-12345678-1234-1234-1234-123456789abc",
    "[ 5.0] NVRM: API mismatch: the client has the version 535",
    "[ 6.0] Lockdown: modprobe: unsigned module loading is restricted",
    "[ 7.0] nvidia: loading out-of-tree module taints kernel.",
    "[ 8.0] NVRM: Persistence mode is deprecated",
    "fallen off the bus without the driver's prefix", "", "\u2028", "\r",
]


def _line_by_line(text: str) -> tuple[object, ...]:
    """What parse_kernel_log finds, searched on every line (no literal prefilter)."""
    from gpunode.parse import kernel_log

    lines = text.splitlines()
    xids = tuple(iter_xid_events(lines))
    skip = {e.line_no for e in xids}
    fallen = tuple((n, line) for n, line in enumerate(lines, 1)
                   if n not in skip and kernel_log._FALLEN in line and "NVRM" in line)
    errors = tuple((n, line) for n, line in enumerate(lines, 1) if n not in skip and (n, line) not in fallen
                   and kernel_log._is_nvrm_error(line))
    return (xids, fallen, errors, kernel_log._last_driver_load(lines), kernel_log._pci_to_uuid(lines))


def test_the_literal_prefilters_change_nothing() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        text = "\n".join(rng.choice(LINES) for _ in range(rng.randint(0, 6)))
        log = parse_kernel_log(text)
        assert (log.xids, log.fallen_off_bus, log.nvrm_errors, log.driver_loaded, log.pci_to_uuid) \
            == _line_by_line(text), text
