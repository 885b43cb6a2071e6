"""A GPU job's error that names HAMi-core, the vGPU interposer a vGPU device plugin mounts
into the containers it serves (/usr/local/vgpu/libvgpu.so), is the failure of the plugin
that put it there: HAMi's device plugin or Volcano's vGPU device plugin, whichever runs on
the node (both ship the library, so the words alone do not say which). The loader's line is
Project-HAMi/HAMi#20's (an image whose glibc does not export the private _dl_sym the library
used); with both plugins or neither on the node, the line names no component."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import top_pair

_LOADER = ("nvidia-smi: symbol lookup error: /usr/local/vgpu/libvgpu.so: undefined symbol: _dl_sym, "
           "version GLIBC_PRIVATE\n")
_JOB = {"kind": "log", "object": {"kind": "Pod", "name": "gpu-pod", "namespace": "default"}, "text": _LOADER}


def _plugin(component: str) -> dict[str, Any]:
    return {"kind": "pod-state", "component": component, "state": "Running"}


def _top(*evidence: dict[str, Any]) -> tuple[str, str] | None:
    raw = {"id": "x-vgpu", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "cluster": {"driver_mode": "host"}, "evidence": list(evidence), "expect": {"healthy": True}}
    case = msgspec.convert(raw, Case)
    return top_pair(case)


def test_the_interposer_names_hami_s_plugin_where_it_runs() -> None:
    assert _top(_plugin("hami-device-plugin"), _JOB) == ("hami-device-plugin", "error_version_mismatch")


def test_the_interposer_names_volcano_s_plugin_where_it_runs() -> None:
    # the bare case's node advertises no volcano.sh resource: a state, ranked below the line
    found = _top(_plugin("volcano-device-plugin"), _JOB)
    assert found is not None and found[0] == "volcano-device-plugin"


def test_both_plugins_on_the_node_name_neither() -> None:
    found = _top(_plugin("hami-device-plugin"), _plugin("volcano-device-plugin"), _JOB)
    assert found is None or found[1] != "error_version_mismatch"


def test_no_vgpu_plugin_on_the_node_names_none() -> None:
    assert _top(_JOB) is None


def test_another_library_s_symbol_error_names_no_vgpu_plugin() -> None:
    other = {**_JOB, "text": "python: symbol lookup error: /opt/conda/lib/libtorch_cpu.so: undefined symbol: "
                             "iJIT_NotifyEvent\n"}
    assert _top(_plugin("hami-device-plugin"), other) is None
