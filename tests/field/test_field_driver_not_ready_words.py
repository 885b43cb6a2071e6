"""A node whose lsmod lists no nvidia module, and whose own lines say why: a GPU operand's word
that the GPU driver is not ready or installed (CCE AI Suite's nvidia-gpu-device-plugin, "gpu
driver wasn't ready. will re-check in 5s"), or a provisioning script's in the node's journal that
it goes on without installing the driver (kops's nvidia-device-plugin hook, "Exiting without
installing GPU drivers"): the driver is not loaded, below the plugin that advertises nothing.
Look-alikes stay silent: the same words on a node whose driver is loaded, a script's traced
command line alone, an operand saying the driver is ready."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.explain import explain_lines

PLUGIN = ('I0527 11:29:06.521964 3336959 nvidia_gpu.go:262] "gpu driver wasn\'t ready. will re-check in %s" '
          '5s="(MISSING)"')
READY = 'I0527 11:29:06.521964 3336959 nvidia_gpu.go:262] "gpu driver is ready, registering devices"'
HOOK = "Feb 27 00:01:08 ip-10-0-0-1 bash[2410]:   Exiting without installing GPU drivers"
TRACE = "Feb 27 00:01:08 ip-10-0-0-1 bash[2410]: +++ echo '  Exiting without installing GPU drivers'"
NOT_LOADED = ("driver", "driver_not_loaded")


def _case(evidence: dict[str, Any], *, loaded: bool) -> Case:
    return synthetic_case("x-driver-not-ready-words", [evidence], healthy=False,
                          cluster={"driver_mode": "host", "components": [], "device_plugin": "static",
                                   "gpu_node": {"gpus": 1, "driver_loaded": loaded}})


def _plugin(line: str, *, loaded: bool) -> Case:
    return _case({"kind": "log", "component": "device-plugin", "text": f"{line}\n"}, loaded=loaded)


def _journal(line: str, *, loaded: bool) -> Case:
    return _case({"kind": "node-cmd", "name": "journal-runtime.txt", "text": f"{line}\n"}, loaded=loaded)


def test_a_plugin_saying_the_gpu_driver_is_not_ready_on_a_node_without_the_module() -> None:
    assert top_pair(_plugin(PLUGIN, loaded=False)) == NOT_LOADED


def test_a_script_going_on_without_installing_the_driver_on_a_node_without_the_module() -> None:
    assert top_pair(_journal(HOOK, loaded=False)) == NOT_LOADED


def test_the_same_words_on_a_node_whose_driver_is_loaded_are_not_read() -> None:
    assert top_pair(_plugin(PLUGIN, loaded=True)) != NOT_LOADED
    assert top_pair(_journal(HOOK, loaded=True)) != NOT_LOADED


def test_a_traced_command_or_a_ready_driver_is_not_read() -> None:
    assert top_pair(_plugin(READY, loaded=False)) != NOT_LOADED
    assert top_pair(_journal(TRACE, loaded=False)) != NOT_LOADED


def test_explain_reads_the_words_alone() -> None:
    for line in (PLUGIN, HOOK):
        assert [m.cause.code for m in explain_lines([line]).matches][:1] == ["driver_not_loaded"]
    for line in (READY, "Installing GPU drivers", "GPU driver is ready"):
        assert "driver_not_loaded" not in [m.cause.code for m in explain_lines([line]).matches]
