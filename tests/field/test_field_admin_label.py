"""A GPU plugin's DaemonSet that selects a label no component sets (HAMi's chart selects
gpu=on, which its install guide has the admin put on each GPU node), on a GPU node where no
plugin serves the GPUs: the unset label is why the node offers none, and NVIDIA's device
plugin, which that plugin replaces, is not missing (Project-HAMi/HAMi#2280: a k3s node never
labelled gpu=on, no device-plugin pod, only CPU and memory allocatable). The look-alike is a
node left out of HAMi on purpose, its GPUs served by NVIDIA's own plugin: nothing to say."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

_UNLABELLED: list[dict[str, Any]] = [
    {"kind": "node-labels", "labels": {"gpu": None}},
    {"kind": "pod-missing", "component": "hami-device-plugin"},
]


def _top(evidence: list[dict[str, Any]], cluster: dict[str, Any]) -> tuple[str, str] | None:
    return top_pair(synthetic_case("x-admin-label", evidence, healthy=False, cluster=cluster))


def test_the_unset_label_is_the_plugin_daemonset_s() -> None:
    cluster = {"driver_mode": "host", "components": []}
    assert _top(_UNLABELLED, cluster) == ("hami-device-plugin", "selector_label_missing")


def test_a_node_served_by_nvidia_s_plugin_is_not_hami_s() -> None:
    cluster = {"driver_mode": "host", "components": [], "device_plugin": "static"}
    found = _top(_UNLABELLED, cluster)
    assert found is None or found[0] != "hami-device-plugin"
