"""HAMi-core, the vGPU interposer a vGPU device plugin injects into the containers it
serves, keeps its accounting in a shared region file (its "shrreg", the cache the plugin
mounts at /tmp/vgpu/ or as CUDA_DEVICE_MEMORY_SHARED_CACHE); its lines about that region
('[HAMI-core ERROR (...multiprocess_memory_limit.c:822)]: Fail to open shrreg
/tmp/cudevshr.cache: errno=21', and 'Fail to init/write/lock shrreg' after it) name the
plugin that set it up, and where that plugin's node shows none of its resources, its
line still outranks that state (a state is never the whole answer while a line says why).
The look-alike is the interposer doing its job: HAMi-core refusing an allocation above the
container's vGPU memory share ('cuMemoryAllocate failed res=2', Project-HAMi/HAMi#585)
names no region and no stack failure."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

_REGION = ("[HAMI-core ERROR (pid:1 thread=140381719942208 multiprocess_memory_limit.c:822)]: "
           "Fail to open shrreg /tmp/cudevshr.cache: errno=21\n"
           "[HAMI-core ERROR (pid:1 thread=140381719942208 multiprocess_memory_limit.c:844)]: "
           "Fail to lock shrreg /tmp/cudevshr.cache: errno=9\n")
_OWN_SHARE = ("[HAMI-core ERROR (pid:7 thread=140360328144640 allocator.c:115)]: "
              "cuMemoryAllocate failed res=2\n")


def _top(plugin: str, resource: str, text: str) -> tuple[str, str] | None:
    evidence: list[dict[str, Any]] = [
        {"kind": "pod-state", "component": plugin, "state": "Running"},
        {"kind": "workload", "name": "vgpu-job", "namespace": "default", "state": "Running",
         "resources": {"limits": {resource: "1"}}},
        {"kind": "log", "object": {"kind": "Pod", "name": "vgpu-job", "namespace": "default"}, "text": text},
    ]
    return top_pair(synthetic_case("x-interposer-region", evidence, healthy=False,
                                   cluster={"driver_mode": "host", "components": []}))


def test_region_line_names_volcano_s_vgpu_plugin_over_its_state() -> None:
    assert _top("volcano-device-plugin", "volcano.sh/vgpu-number", _REGION) == (
        "volcano-device-plugin", "error_file_state")


def test_region_line_names_hami_s_plugin() -> None:
    assert _top("hami-device-plugin", "nvidia.com/gpu", _REGION) == ("hami-device-plugin", "error_file_state")


def test_the_interposer_enforcing_a_share_is_no_region_failure() -> None:
    found = _top("hami-device-plugin", "nvidia.com/gpu", _OWN_SHARE)
    assert found is None or found[1] != "error_file_state"
