"""Two forms of a driver container's last words that name their layer without an error
level: make's line for an object of the driver's own kernel sources whose compile failed
(the driver does not build for this kernel), and a module driver container ending on the
statement that modules it must replace are loaded (the module class). Lines as public
reports quote them or as the programs write them, with look-alikes that must not move."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import top_pair

from gpunode.kb import load_kb


def _case(*evidence: dict[str, Any], driver_mode: str | None = None) -> Case:
    raw: dict[str, Any] = {"id": "x-build-words", "source": "https://example.org/x", "title": "t",
                           "platform": "generic", "evidence": list(evidence), "expect": {"healthy": True}}
    if driver_mode:
        raw["cluster"] = {"driver_mode": driver_mode}
    return msgspec.convert(raw, Case)


def _driver_build(text: str) -> Case:
    return _case({"kind": "log", "component": "driver", "container": "nvidia-driver-ctr", "previous": True,
                  "text": text},
                 {"kind": "pod-state", "component": "driver", "container": "nvidia-driver-ctr",
                  "state": "CrashLoopBackOff"}, driver_mode="operator")


TEARDOWN = ("make: *** [Makefile:82: modules] Error 2\nStopping NVIDIA persistence daemon...\n"
            "Unloading NVIDIA driver kernel modules...\nUnmounting NVIDIA driver rootfs...\n")


def test_an_object_of_the_driver_sources_that_does_not_compile_is_the_kernel_s_mismatch() -> None:
    # the open modules' tree, kbuild's recipe line with its Makefile and line
    text = ("Compiling NVIDIA driver kernel modules...\n"
            "make[3]: *** [scripts/Makefile.build:243: "
            "/usr/src/nvidia-570.86.15/kernel-open/nvidia/nv.o] Error 1\n"
            "make[2]: *** [Makefile:1945: /usr/src/nvidia-570.86.15/kernel-open] Error 2\n" + TEARDOWN)
    assert top_pair(_driver_build(text)) == ("driver", "driver_kernel_incompatible")
    # make before 4.3 writes the target alone
    old = ("make[2]: *** [/usr/src/nvidia-470.82.01/kernel/nvidia/nv-pat.o] Error 1\n"
           "make[1]: *** [_module_/usr/src/nvidia-470.82.01/kernel] Error 2\n" + TEARDOWN)
    assert top_pair(_driver_build(old)) == ("driver", "driver_kernel_incompatible")


def test_a_compiler_killed_for_memory_is_not_the_kernel_s_mismatch() -> None:
    # microsoft/pai#2040's form: cc1 killed, make's recipe ends with the compiler's exit 4
    text = ("cc: internal compiler error: Killed (program cc1)\n"
            "make[2]: *** [/usr/src/nvidia-384.111/kernel/nvidia-uvm/uvm8_channel_test.o] Error 4\n"
            + TEARDOWN)
    found = top_pair(_driver_build(text))
    assert found is not None and found[0] == "driver" and found[1] != "driver_kernel_incompatible"


def test_kbuild_s_own_steps_are_not_an_object_that_did_not_compile() -> None:
    # NVIDIA/gpu-operator#18's compiler version check stays the compiler's mismatch
    text = ("make[2]: *** [cc_version_check] Error 1\nmake[2]: *** Waiting for unfinished jobs....\n"
            "make[1]: *** [_module_/usr/src/nvidia-418.40.04/kernel] Error 2\n" + TEARDOWN)
    found = top_pair(_driver_build(text))
    assert found is not None and found[1] != "driver_kernel_incompatible"


#: NVIDIA/gdrcopy#254: gdrdrv 2.3 built for Rocky 9.1's kernel, modpost's refusal.
GDRDRV_GPL = ("make[1]: Entering directory '/usr/src/kernels/5.14.0-162.23.1.el9_1.x86_64'\n"
              "  MODPOST /usr/src/gdrdrv-2.3/Module.symvers\n"
              "ERROR: modpost: GPL-incompatible module gdrdrv.ko uses GPL-only symbol 'cc_mkdec'\n"
              "make[2]: *** [scripts/Makefile.modpost:134: /usr/src/gdrdrv-2.3/Module.symvers] Error 1\n")


def test_modpost_refusing_a_gpu_stack_module_the_driver_container_builds_is_the_kernel_s_mismatch() -> None:
    assert top_pair(_driver_build(GDRDRV_GPL)) == ("driver", "driver_kernel_incompatible")


def test_modpost_s_refusal_in_pasted_text_is_read_for_the_gpu_stack_s_modules_only() -> None:
    line = "ERROR: modpost: GPL-incompatible module gdrdrv.ko uses GPL-only symbol 'cc_mkdec'"
    pasted = {c.code for c in load_kb().causes
              for m in c.match if m.source == "text" and m.regex.search(line)}
    assert pasted == {"driver_kernel_incompatible"}
    # look-alike: another vendor's out-of-tree module refused by modpost is not the GPU driver's
    other = "ERROR: modpost: GPL-incompatible module zfs.ko uses GPL-only symbol '__rcu_read_lock'"
    assert not any(m.regex.search(other) for c in load_kb().causes if c.code == "driver_kernel_incompatible"
                   for m in c.match if m.source == "text")


def test_modpost_s_own_progress_line_is_not_a_refusal() -> None:
    # look-alike: the link step that went through, then the container loaded the driver
    text = ("  MODPOST /usr/src/gdrdrv-2.3/Module.symvers\n  LD [M]  /usr/src/gdrdrv-2.3/gdrdrv.ko\n")
    found = top_pair(_driver_build(text))
    assert found is None or found[1] != "driver_kernel_incompatible"


def _mofed(text: str, state: str = "CrashLoopBackOff") -> Case:
    crashed = state == "CrashLoopBackOff"
    return _case({"kind": "pod-state", "component": "ofed", "container": "mofed-container", "state": state,
                  "restarts": 5 if crashed else 0},
                 {"kind": "log", "component": "ofed", "container": "mofed-container", "previous": crashed,
                  "text": text})


def test_modules_still_loaded_as_a_module_container_s_last_words_are_the_module_class() -> None:
    kb = load_kb()
    # the DOCA driver container's whole error (Mellanox/doca-driver-build entrypoint), and the
    # statement alone as a report quotes it
    full = ('storage modules are loaded for current driver,terminating prior driver reload failure due '
            'to UNLOAD_STORAGE_MODULES not set to "true"')
    assert kb.class_of(full) == "error_module_load"
    assert kb.class_of("storage modules are loaded") == "error_module_load"
    assert kb.class_of("Some inbox kernel modules are still loaded.") == "error_module_load"
    assert top_pair(_mofed("storage modules are loaded\n")) == ("ofed", "error_module_load")


def test_modules_that_loaded_in_a_progress_line_are_no_module_failure() -> None:
    kb = load_kb()
    assert kb.class_of("Loaded modules: mlx5_core mlx5_ib ib_core") is None
    assert kb.class_of("modules are loaded, starting the driver") is None
    # a module container that runs, never restarted, and says so stays healthy
    assert top_pair(_mofed("storage modules are loaded\n", state="Running")) is None
