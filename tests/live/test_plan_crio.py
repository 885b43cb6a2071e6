"""CRI-O nodes: the collector reads the toolkit's drop-in directory and the OCI hook
directories through the toolkit pod (collect.plan.crio_targets), at their host paths."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from gpunode.collect.plan import containerd_targets
from gpunode.collect.slim import Pod


def _toolkit_pod(hooks_host: str, mounts: bool = True) -> Pod:
    """The GPU Operator's toolkit pod as its DaemonSet renders it for CRI-O (RUNTIME=crio,
    the crio-config volume at /runtime/config-dir/, the crio-hooks volume)."""
    container: dict[str, Any] = {
        "name": "nvidia-container-toolkit-ctr",
        "image": "nvcr.io/nvidia/k8s/container-toolkit:v1.17.8-ubuntu20.04",
        "env": [
            {"name": "RUNTIME", "value": "crio"},
            {"name": "RUNTIME_CONFIG", "value": "/runtime/config-dir/99-nvidia.conf"},
            {"name": "CRIO_CONFIG", "value": "/runtime/config-dir/99-nvidia.conf"},
        ],
        "securityContext": {"privileged": True},
    }
    if mounts:
        container["volumeMounts"] = [
            {"name": "toolkit-install-dir", "mountPath": "/usr/local/nvidia"},
            {"name": "crio-hooks", "mountPath": "/usr/share/containers/oci/hooks.d"},
            {"name": "crio-config", "mountPath": "/runtime/config-dir/"},
        ]
    pod = {
        "metadata": {"name": "nvidia-container-toolkit-daemonset-7xq2d", "namespace": "gpu-operator",
                     "labels": {"app": "nvidia-container-toolkit-daemonset"}},
        "spec": {
            "nodeName": "gpu-wk-01",
            "containers": [container],
            "volumes": [
                {"name": "toolkit-install-dir", "hostPath": {"path": "/usr/local/nvidia", "type": ""}},
                {"name": "crio-hooks", "hostPath": {"path": hooks_host, "type": ""}},
                {"name": "crio-config", "hostPath": {"path": "/etc/crio/crio.conf.d",
                                                     "type": "DirectoryOrCreate"}},
            ],
        },
        "status": {"phase": "Running", "containerStatuses": [
            {"name": "nvidia-container-toolkit-ctr", "ready": True, "restartCount": 0,
             "state": {"running": {"startedAt": "2026-12-05T10:00:00Z"}}}]},
    }
    return msgspec.json.decode(json.dumps(pod), type=Pod)


def test_crio_drop_ins_and_hook_files_are_read_at_their_host_paths() -> None:
    pod = _toolkit_pod("/usr/share/containers/oci/hooks.d")
    targets = containerd_targets("gpu-wk-01", {"container-toolkit": [pod]})
    assert {t.argv: t.bundle_path for t in targets} == {
        ("tar", "-C", "/runtime/config-dir", "-cf", "-", "."): "nodes/gpu-wk-01/files/etc/crio/crio.conf.d",
        ("tar", "-C", "/usr/share/containers/oci/hooks.d", "-cf", "-", "."):
            "nodes/gpu-wk-01/files/usr/share/containers/oci/hooks.d",
    }
    assert all(t.unpack_tar and t.container == "nvidia-container-toolkit-ctr" for t in targets)


def test_openshifts_hook_directory_lands_where_crio_reads_it() -> None:
    pod = _toolkit_pod("/run/containers/oci/hooks.d")
    paths = {t.bundle_path for t in containerd_targets("gpu-wk-01", {"container-toolkit": [pod]})}
    assert "nodes/gpu-wk-01/files/run/containers/oci/hooks.d" in paths
    assert not any(p.endswith("containerd/config.toml") for p in paths)  # never a containerd file


def test_a_pod_spec_without_mounts_names_no_directory_to_read() -> None:
    pod = _toolkit_pod("/usr/share/containers/oci/hooks.d", mounts=False)
    assert containerd_targets("gpu-wk-01", {"container-toolkit": [pod]}) == []
