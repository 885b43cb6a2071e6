"""The audit subsystem's record of a program that dumped core (ANOM_ABEND, kernel type 1701)
names the stack component whose binary ``exe=`` is, as the kernel's segfault line does; a
CLI whose own driver helper crashed is the CLI's failure, not the driver's."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import top_pair


def _case(*evidence: dict[str, Any], **cluster: Any) -> Case:
    raw = {"id": "x-audit-abend", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "evidence": list(evidence), "expect": {"healthy": False}, "cluster": cluster}
    return msgspec.convert(raw, Case)


def _dmesg(text: str) -> dict[str, Any]:
    return {"kind": "node-cmd", "name": "dmesg.txt", "text": text}


#: https://github.com/borgbase/vorta/issues/455 (the kernel's form, a Python program's crash).
KERNEL_FORM = ("[ 3101.573121] audit: type=1701 audit(1591168599.573:180): auid=1001 uid=1001 gid=1001 ses=1 "
               "subj==unconfined pid=41063 comm=\"vorta\" exe=\"/usr/bin/python3.7\" sig=11 res=1\n")
#: https://github.com/systemd/systemd/issues/8895 (the form auditd and the journal write).
JOURNAL_FORM = ("May 03 11:34:01 alan-laptop audit[3099]: ANOM_ABEND auid=1000 uid=1000 gid=1000 ses=4 "
                "subj=unconfined_u:unconfined_r:unconfined_t:s0-s0:c0.c1023 pid=3099 comm=\"gnome-shell\" "
                "exe=\"/usr/bin/gnome-shell\" sig=5 res=1\n")
#: https://github.com/NVIDIA/nvidia-docker/issues/1456: seccomp's record (type 1326) of ldconfig
#: killed for a denied call, which the runtime's profile decides, not a crash of its binary.
SECCOMP = ("[ 8737.461297] audit: type=1326 audit(1612349644.366:217): auid=4294967295 uid=0 gid=0 "
           "ses=4294967295 pid=16357 comm=\"6\" exe=\"/sbin/ldconfig.real\" sig=31 arch=40000003 syscall=45 "
           "compat=1 ip=0xf7ef7b47 code=0x0\n")
CLI = "/usr/bin/nvidia-container-cli"


def test_a_stack_binary_that_dumped_core_is_its_component_s_failure_in_either_form() -> None:
    for line, exe in ((KERNEL_FORM, "/usr/bin/python3.7"), (JOURNAL_FORM, "/usr/bin/gnome-shell")):
        case = _case(_dmesg(line.replace(exe, CLI)), driver_mode="host")
        assert top_pair(case) == ("container-toolkit", "error_unclassified")


def test_a_program_outside_the_stack_and_a_seccomp_kill_accuse_no_component() -> None:
    for line in (KERNEL_FORM, JOURNAL_FORM, SECCOMP):
        assert top_pair(_case(_dmesg(line), driver_mode="host")) is None


def test_the_thread_name_does_not_name_the_component() -> None:
    # the CLI names its driver helper's thread "nvc:[driver]"; the program is the CLI's
    line = KERNEL_FORM.replace("vorta", "nvc:[driver]").replace("/usr/bin/python3.7", CLI)
    assert top_pair(_case(_dmesg(line), driver_mode="host")) == ("container-toolkit", "error_unclassified")


#: OE4T/tegra-demo-distro#177's hook error: the CLI's driver helper died before answering.
HOOK = ("Error: failed to create shim: OCI runtime create failed: container_linux.go:380: starting container "
        "process caused: process_linux.go:545: container init caused: Running hook #0:: error running hook: "
        "exit status 1, stdout: , stderr: nvidia-container-cli: initialization error: driver error: "
        "failed to process request: unknown")


def _event() -> dict[str, Any]:
    return {"kind": "event", "object": {"kind": "Pod", "name": "gpu-workload"}, "type": "Warning",
            "reason": "Failed", "message": HOOK}


def test_a_driver_helper_that_crashed_is_the_cli_s_failure_not_the_driver_s() -> None:
    crashed = KERNEL_FORM.replace("/usr/bin/python3.7", CLI)
    assert top_pair(_case(_event(), _dmesg(crashed), driver_mode="host")) == (
        "container-toolkit", "error_unclassified")


def test_without_the_crash_the_helper_s_death_stays_the_driver_s() -> None:
    assert top_pair(_case(_event(), _dmesg(KERNEL_FORM), driver_mode="host"))[0] == "driver"
