"""A device plugin older than config files (before k8s-device-plugin v0.12.0) given a config
that shares its GPUs: each start of a build that reads a config says so ("Loading
configuration.", "Running with config:") before it registers with the kubelet; a whole start
without either, on a node whose selected config time-slices nvidia.com/gpu, is a plugin that
ignores the config (NVIDIA/k8s-device-plugin#321: GPU Operator before 1.11). A build that read
its config, a node with no sharing config and a log that holds no whole start say nothing.

Sources, each log beside its address."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

from gpunode.checks.plugin_config_unread import start_without_config

#: https://github.com/NVIDIA/k8s-device-plugin/issues/321 (the plugin's whole log, as pasted)
OLD_START = """2022/07/11 21:42:10 Loading NVML
2022/07/11 21:42:10 Starting FS watcher.
2022/07/11 21:42:10 Starting OS watcher.
2022/07/11 21:42:10 Retreiving plugins.
2022/07/11 21:42:10 No MIG devices found. Falling back to mig.strategy=&{}
2022/07/11 21:42:10 Starting GRPC server for 'nvidia.com/gpu'
2022/07/11 21:42:10 Starting to serve 'nvidia.com/gpu' on /var/lib/kubelet/device-plugins/nvidia-gpu.sock
2022/07/11 21:42:10 Registered device plugin for 'nvidia.com/gpu' with Kubelet
"""
#: Look-alike: a build that reads its config (its start as the v0.12+ plugin logs it).
NEW_START = """I0711 21:42:10.000001       1 main.go:178] Starting FS watcher.
I0711 21:42:10.000002       1 main.go:185] Starting OS watcher.
I0711 21:42:10.000003       1 main.go:200] Starting Plugins.
I0711 21:42:10.000004       1 main.go:257] Loading configuration.
I0711 21:42:10.000005       1 main.go:265] Updating config with default resource matching patterns.
I0711 21:42:10.000006       1 main.go:276]
Running with config:
{
  "version": "v1"
}
I0711 21:42:10.000007       1 main.go:279] Retrieving plugins.
I0711 21:42:10.000008       1 server.go:176] Starting GRPC server for 'nvidia.com/gpu'
I0711 21:42:10.000009       1 server.go:125] Registered device plugin for 'nvidia.com/gpu' with Kubelet
"""
#: Look-alike: the old log cut by a tail after its start (no "Starting FS watcher.").
TAIL = "".join(OLD_START.splitlines(keepends=True)[5:])
TIME_SLICING = """version: v1
sharing:
  timeSlicing:
    renameByDefault: true
    resources:
    - name: nvidia.com/gpu
      replicas: 4
"""


def _evidence(log: str, config: bool = True) -> list[dict[str, Any]]:
    evidence: list[dict[str, Any]] = [
        {"kind": "log", "component": "device-plugin", "container": "nvidia-device-plugin", "text": log}]
    if config:
        evidence += [
            {"kind": "cluster-object", "resource": "configmaps", "object": {
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "time-slicing-config", "namespace": "gpu-operator"},
                "data": {"quadro-p2000": TIME_SLICING}}},
            {"kind": "node-labels", "labels": {"nvidia.com/device-plugin.config": "quadro-p2000"}}]
    return evidence


def _case(log: str, config: bool = True, healthy: bool = True) -> Any:
    return synthetic_case("x-plugin-config-unread", _evidence(log, config), healthy=healthy,
                          cluster={"gpu_node": {"gpu": "Quadro P2000", "gpus": 1}})


def test_the_start_of_a_build_that_reads_no_config_is_found() -> None:
    found = start_without_config(OLD_START.splitlines())
    assert found is not None and found.line_no == 8
    assert start_without_config(NEW_START.splitlines()) is None
    assert start_without_config(TAIL.splitlines()) is None


def test_a_plugin_that_ignores_its_sharing_config_is_too_old() -> None:
    assert top_pair(_case(OLD_START, healthy=False)) == ("device-plugin", "error_version_mismatch")


def test_a_plugin_that_read_its_config_is_not_read_so() -> None:
    top = top_pair(_case(NEW_START))
    assert top is None or top[1] != "error_version_mismatch", top


def test_an_old_plugin_with_no_sharing_config_is_not_read_so() -> None:
    top = top_pair(_case(OLD_START, config=False))
    assert top is None or top[1] != "error_version_mismatch", top


def test_a_log_cut_after_the_start_says_nothing() -> None:
    top = top_pair(_case(TAIL))
    assert top is None or top[1] != "error_version_mismatch", top
