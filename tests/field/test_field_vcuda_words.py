"""The vcuda hijack library's own lines name Tencent's gpu-manager, the GPU-sharing device plugin
that puts it into the pods it serves (components.toml, device-plugin's named_by): its LOGGER
prefixes every line with the source file and line of its build under /tmp/cuda-control, and it
loads the driver's libraries and the pod's /etc/vcuda config that the plugin provides.

Sources: tkestack/vcuda-controller include/hijack.h (LOGGER: "%s:%d " with __FILE__,
__LINE__), src/loader.c ("can't find library %s", FATAL), Dockerfile (built in
/tmp/cuda-control), README (a component of gpu-manager). Look-alikes: the library's
debug lines of a pod that runs, and the same words without its prefix, stay silent or
unattributed to the plugin."""

from __future__ import annotations

from case import gpu_job_case
from scoreboard import top_pair

from gpunode.catalog import load_catalog

FATAL = "/tmp/cuda-control/src/loader.c:856 can't find library libcuda.so."
DEBUG = ("/tmp/cuda-control/src/loader.c:1108 config file: /etc/vcuda/abc/vcuda.config\n"
         "/tmp/cuda-control/src/loader.c:1211 pod uid          : 6f7b1c2e\n"
         "Epoch 1/10 - loss: 0.4312")


def test_vcuda_s_lines_name_the_device_plugin() -> None:
    assert load_catalog().named_in(FATAL) == "device-plugin"
    assert load_catalog().named_in("can't find library libcuda.so.") != "device-plugin"
    assert top_pair(gpu_job_case("x-vcuda-loader", FATAL)) == ("device-plugin", "error_not_found")


def test_vcuda_s_debug_lines_in_a_running_job_are_healthy() -> None:
    assert top_pair(gpu_job_case("x-vcuda-debug", DEBUG)) is None
