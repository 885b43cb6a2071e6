"""A GPU job whose last line is HAMi-core's own start, still running, on a 570-or-later driver
(checks/interposer_hang.py): the HAMi-core the vGPU plugin ships predates the driver and hangs
there (Project-HAMi/HAMi-core#59, Project-HAMi/HAMi#1010, volcano-vgpu-device-plugin#57). The
same start followed by the job's own output, on an older driver, or in a container that ended,
is a start like any other."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import diagnose_case, top_root_cause

from gpunode.checks.interposer_hang import crash_in_library, start_hang

#: HAMi#1010 and volcano-vgpu-device-plugin#57: the library's start, the last line printed.
START = "[HAMI-core Msg(672:140535013861184:libvgpu.c:837)]: Initializing....."
#: HAMi-core#59 at debug level: the NVML init hijack, the last line printed.
HIJACK = "[HAMI-core Debug(317:140472547116864:hook.c:429)]: Hijacking nvmlInitWithFlags"


def _case(text: str, driver: str, *, state: str = "Running", plugin: str = "hami-device-plugin") -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "pod-state", "component": plugin, "state": "Running"},
        {"kind": "workload", "name": "vgpu-job", "namespace": "default", "state": state},
        {"kind": "log", "object": {"kind": "Pod", "name": "vgpu-job", "namespace": "default"}, "text": text}]
    raw = {"id": "x-interposer-hang", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "cluster": {"driver_mode": "host", "gpu_node": {"driver_version": driver}},
           "evidence": evidence, "expect": {"healthy": True}}
    return msgspec.convert(raw, Case)


def _top(case: Case) -> tuple[str, str] | None:
    top = top_root_cause(diagnose_case(case), case.node)
    return (top.component, top.cause) if top else None


def test_a_job_stopped_at_hami_core_s_start_on_570_is_the_plugin_s_release() -> None:
    assert _top(_case(START + "\n", "570.86.15")) == ("hami-device-plugin", "error_version_mismatch")
    hijack = "[HAMI-core Debug(317:140472547116864:hook.c:437)]: Hijacking nvmlInit_v2\n" + HIJACK + "\n"
    assert _top(_case(hijack, "575.57.08")) == ("hami-device-plugin", "error_version_mismatch")


def test_the_start_followed_by_output_or_on_an_older_driver_says_nothing() -> None:
    assert _top(_case(START + "\nvectorAdd: Test PASSED\n", "570.86.15")) is None
    assert _top(_case(START + "\n", "550.127.05")) is None


def test_only_the_library_s_start_as_the_last_line_counts() -> None:
    assert start_hang((START, "")) == 0
    assert start_hang((HIJACK,)) == 0
    assert start_hang((START, "Done")) is None
    refused = "[HAMI-core ERROR (pid:7 thread=1 allocator.c:115)]: cuMemoryAllocate failed res=2"
    assert start_hang((refused,)) is None
    assert start_hang(("Initializing.....",)) is None


#: 4paradigm/k8s-vgpu-scheduler#14: nvidia-smi in a pod given two vGPUs, the library's own lines,
#: then the shell's report of the crash.
CRASH = ("[4pdvGPU Msg(29:140241530709824:libvgpu.c:813)]: Initializing...\n"
         "[4pdvGPU Msg(29:140241530709824:context.c:120)]: vdevices_pci=0000:84:00.0\n"
         "Segmentation fault (core dumped)\n")


def test_a_segfault_right_after_the_library_s_own_lines_is_the_plugin_s() -> None:
    assert _top(_case(CRASH, "535.183.01")) == ("hami-device-plugin", "error_unclassified")
    assert _top(_case(CRASH, "535.183.01", plugin="volcano-device-plugin")) == (
        "volcano-device-plugin", "error_unclassified")


def test_a_segfault_after_the_program_s_own_output_is_not_the_library_s() -> None:
    lines = tuple(CRASH.splitlines())
    assert crash_in_library(lines) == 2
    after_program = (*lines[:2], "loading model weights", lines[2])
    assert crash_in_library(after_program) is None
    assert crash_in_library(("Segmentation fault",)) is None
    assert crash_in_library((lines[0], "Segmentation fault in module foo")) is None


def _restart_case(restarts: int) -> Case:
    raw = msgspec.to_builtins(_case("Segmentation fault\n", "535.183.01"))
    raw["evidence"] = [{"kind": "pod-state", "component": "hami-device-plugin", "state": "Running",
                        "restarts": restarts}, *raw["evidence"][1:]]
    return msgspec.convert(raw, Case)


def test_a_bare_segfault_after_the_plugin_restarted_under_the_job_is_the_plugin_s() -> None:
    # Project-HAMi/HAMi#753 (#727): the plugin's restart swaps the libvgpu.so the job has mapped
    assert _top(_restart_case(1)) == ("hami-device-plugin", "error_unclassified")


def test_a_bare_segfault_with_the_plugin_never_restarted_is_not_the_plugin_s() -> None:
    top = _top(_restart_case(0))
    assert top is None or top[0] != "hami-device-plugin"
