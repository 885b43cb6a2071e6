"""A native backtrace in a GPU job's own log whose crash site, the first frame above the C
library's signal trampoline, lies in HAMi-core's libvgpu.so (the interposer HAMi's device
plugin preloads into the containers it serves) is the plugin's code failing, as the kernel's
segfault line for it already is; a crash site in libcuda, libtorch or the job's own code stays
the job's, and so does libvgpu.so deeper in the chain than the site. Lines from public
reports, each address beside it."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

#: https://github.com/Project-HAMi/HAMi-core/issues/234 (Isaac Sim's OptiX denoiser in a vGPU
#: container; Omniverse Kit's breakpad crash reporter)
BREAKPAD = ("Thread backtrace:\n"
            "000: libc.so.6!__sigaction+0x50\n"
            "001: libvgpu.so!cuMemGetInfo_v2+0xd2\n"
            "002: libnvoptix.so.1!rtGetSymbolTable+0x14646d\n"
            "003: librtx.optixdenoising.plugin.so!carbOnPluginPreStartup+0x3d9f\n")
#: https://github.com/Project-HAMi/HAMi-core/pull/182 (the same crash in a fork's design notes
#: on Vulkan vGPU for Isaac Sim: the hook's source line after the frame)
BREAKPAD_SOURCE = ("000: libc.so.6!__sigaction\n"
                   "001: libvgpu.so!cuMemGetInfo_v2+0x52c (memory.c:513)\n"
                   "002: libnvoptix.so.1!rtGetSymbolTable\n")
#: Look-alike from the same notes: the crash site in the Vulkan loader, no stack library named
VULKAN = ("001: libvulkan.so.1!+0x22bc8\n"
          "002: libcarb.graphics-vulkan.plugin.so!std::vector<char const*>::_M_emplace_aux<char const*&>\n")


def _vgpu_job(text: str, *, plugin: bool = True) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "job-0", "namespace": "default", "container": "job",
         "resources": {"limits": {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "5120"}},
         "state": "CrashLoopBackOff", "restarts": 3, "exit_code": 139},
        {"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
         "container": "job", "text": text}]
    if plugin:
        evidence.insert(0, {"kind": "pod-state", "component": "hami-device-plugin", "state": "Running"})
    return synthetic_case("x-interposer-crash", evidence)


def test_a_crash_site_in_libvgpu_is_the_plugins() -> None:
    for text in (BREAKPAD, BREAKPAD_SOURCE):
        top = top_pair(_vgpu_job(text))
        assert top is not None and top[0] == "hami-device-plugin"


def test_other_frame_forms_naming_libvgpu_are_read_alike() -> None:
    # glibc's backtrace_symbols and gdb's frame forms of the same crash site
    glibc = ("/lib/x86_64-linux-gnu/libc.so.6(+0x42520) [0x7f5e8c642520]\n"
             "/usr/local/vgpu/libvgpu.so(cuMemGetInfo_v2+0x4f2) [0x7f5e8a1b2f32]\n")
    gdb = ("#0  0x00007f5e8a1b2f32 in cuMemGetInfo_v2 () from /usr/local/vgpu/libvgpu.so\n"
           "#1  0x00007f5e8b000010 in rtGetSymbolTable () from /usr/lib/libnvoptix.so.1\n")
    for text in (glibc, gdb):
        top = top_pair(_vgpu_job(text))
        assert top is not None and top[0] == "hami-device-plugin"


def test_a_crash_site_in_libcuda_or_the_framework_stays_the_jobs() -> None:
    libcuda = ("000: libc.so.6!__sigaction+0x50\n"
               "001: libcuda.so.1!cuMemGetInfo_v2+0x12\n"
               "002: libvgpu.so!cuMemGetInfo_v2+0xd2\n")
    libtorch = ("#0  0x00007f01 in c10::cuda::getDevice () from /opt/torch/lib/libc10_cuda.so\n"
                "#1  0x00007f02 in cuMemGetInfo_v2 () from /usr/local/vgpu/libvgpu.so\n")
    for text in (libcuda, libtorch, VULKAN):
        assert top_pair(_vgpu_job(text)) is None


def test_without_the_plugin_on_the_node_the_frame_names_no_owner() -> None:
    assert top_pair(_vgpu_job(BREAKPAD, plugin=False)) is None
