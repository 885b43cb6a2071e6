"""A pod sandbox whose CNI plugin the runtime looked for only outside the folder the node's
platform installs its CNI plugins in (GKE: /home/kubernetes/bin) is the toolkit's doing where
the toolkit runs there: the containerd config it rewrote lost the platform's CNI bin_dir
(src/gpunode/checks/named.py, ``_cni_dir_rewritten``). The platform's folder among those
searched, and a platform that keeps containerd's default folder, are not."""

from __future__ import annotations

from case import Case, synthetic_case
from scoreboard import top_pair


def _sandbox_fails(search_path: str, plugin: str, platform: str) -> Case:
    """GPU feature discovery's sandbox failing on the CNI plugin ``plugin`` not found in
    ``search_path``, as the kubelet's FailedCreatePodSandBox event says it (gpu-operator#1577)."""
    message = ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network '
               'for sandbox "23e4d7d1231cfa104f88d77c755f4f9c8d2579a8ad81c7353dc20c791056234e": '
               f'plugin type="{plugin}" failed (add): '
               f'failed to find plugin "{plugin}" in path [{search_path}]')
    return synthetic_case("x-cni-dir", [
        {"kind": "pod-state", "component": "gfd", "state": "Init:0/1"},
        {"kind": "event", "component": "gfd", "type": "Warning", "reason": "FailedCreatePodSandBox",
         "count": 83, "message": message},
    ], platform=platform, healthy=False, cluster={"runtime": "containerd2"})


def test_gke_plugin_looked_for_in_containerds_default_folder_is_the_toolkits() -> None:
    assert top_pair(_sandbox_fails("/opt/cni/bin", "gke", "gke")) == ("container-toolkit", "error_not_found")


def test_plugin_missing_from_the_platforms_own_folder_is_not_the_toolkits() -> None:
    top = top_pair(_sandbox_fails("/home/kubernetes/bin", "gke", "gke"))
    assert top is not None and top[0] != "container-toolkit", top


def test_plugin_missing_where_the_platform_keeps_containerds_default_is_not_the_toolkits() -> None:
    top = top_pair(_sandbox_fails("/opt/cni/bin", "calico", "generic"))
    assert top is not None and top[0] != "container-toolkit", top
