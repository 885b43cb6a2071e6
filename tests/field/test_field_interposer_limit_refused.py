"""HAMi-core refusing a per-device limit its plugin handed it (CUDA_DEVICE_MEMORY_LIMIT_<i>,
CUDA_DEVICE_SM_LIMIT: the env the plugin sets in each container, HAMi-core's README) is the
plugin's value refused, at whatever level the library prints it: the plugin's, of the class of
a configuration invalid (a program naming the env setting it could not take, classes.toml).

Source: Project-HAMi/HAMi-core#190 ("[HAMI-core Warn]: invalid device memory limit
CUDA_DEVICE_MEMORY_LIMIT_0=0m", a plugin's 0m for "no limit"; the driver API then saw 0 MiB).
Look-alikes: the library's routine warning in the same failing job, and the same refusal on a
node where no HAMi plugin runs, stay off the plugin."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

from gpunode.kb import load_kb

REFUSED = "[HAMI-core Warn]: invalid device memory limit CUDA_DEVICE_MEMORY_LIMIT_0=0m\n"
ROUTINE = "[HAMI-core Warn(12:140:multiprocess_memory_limit.c:497)]: Kick dead proc 41\n"
TAIL = ("ggml_cuda_init: found 1 CUDA devices (Total VRAM: 0 MiB):\n"
        "[HAMI-core ERROR allocator.c:126]: cuMemoryAllocate failed res=2\n")
PLUGIN = {"kind": "pod-state", "component": "hami-device-plugin", "state": "Running"}


def _pair(case_id: str, log: str, plugin: bool = True) -> tuple[str, str] | None:
    ev: list[dict[str, Any]] = [
        {"kind": "workload", "name": "job-0", "namespace": "default", "container": "job",
         "resources": {"limits": {"nvidia.com/gpu": "1"}}, "state": "Error", "exit_code": 1},
        {"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
         "container": "job", "text": log}]
    return top_pair(synthetic_case(case_id, [PLUGIN, *ev] if plugin else ev))


def test_the_library_refusing_the_plugin_s_limit_is_the_plugin_s_config() -> None:
    assert _pair("x-hami-limit-refused", REFUSED + TAIL) == ("hami-device-plugin", "error_config_invalid")


def test_a_routine_warning_and_a_node_without_the_plugin_stay_off_it() -> None:
    assert (_pair("x-hami-limit-routine", ROUTINE + TAIL) or ("", ""))[0] != "hami-device-plugin"
    no_plugin = _pair("x-hami-limit-no-plugin", REFUSED + TAIL, plugin=False)
    assert (no_plugin or ("", ""))[0] != "hami-device-plugin"


def test_an_env_setting_called_invalid_is_a_config_invalid_and_a_bare_name_is_not() -> None:
    kb = load_kb()
    assert kb.class_of("invalid device memory limit CUDA_DEVICE_MEMORY_LIMIT_0=0m") == "error_config_invalid"
    assert kb.class_of("memory limit reached for CUDA_DEVICE_MEMORY_LIMIT") != "error_config_invalid"
