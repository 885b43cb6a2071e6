"""The kubelet's cgroup driver and the container runtime's differ (checks/cgroup_driver.py):
both read explicitly from their own configs, a mismatch is error_config_invalid of the
component whose config differs; the NVIDIA default handler the toolkit wrote without the
setting the node's runc has (or in a fresh config holding only it) is the toolkit's. A
missing kubelet config, and a kubelet that takes the driver from a containerd 2 runtime,
decide nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from case import synthetic_case
from scoreboard import top_pair

from gpunode.parse.cgroup_driver import kubelet_cgroup_driver, kubelet_config_kept

#: kubeadm's KubeletConfiguration (kubernetes/kubernetes#96366: "/var/lib/kubelet/config.yaml
#: has `cgroupDriver: systemd` set").
_KUBELET_SYSTEMD = ("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                    "cgroupDriver: systemd\n")
#: kubernetes/kubernetes#95488: the kubelet's config on a cgroupfs node ('cgroupDriver: "cgroupfs"').
_KUBELET_CGROUPFS = ('apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n'
                     'cgroupDriver: "cgroupfs"\n')


_RUNTIME = ("container-runtime", "error_config_invalid")
_TOOLKIT = ("container-toolkit", "error_config_invalid")


def _containerd(options: str, runtime: str = "runc", extra: str = "") -> str:
    """A version 2 containerd config whose default handler ``runtime`` has ``options``."""
    return (f'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n'
            f'  default_runtime_name = "{runtime}"\n'
            f'[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.{runtime}]\n'
            f'  runtime_type = "io.containerd.runc.v2"\n'
            f'[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.{runtime}.options]\n{options}{extra}')


#: containerd/containerd#7276: nodes moved from Docker to containerd without
#: 'SystemdCgroup = true' under runtimes.runc.options; every pod of them restarted.
_RUNC_WITHOUT_SYSTEMD = _containerd("")
#: kubernetes/kubernetes#117293: kube-system pods in a restart loop after a kubeadm install,
#: SystemdCgroup not set in /etc/containerd/config.toml (set to false by 'containerd config default').
_RUNC_SYSTEMD_FALSE = _containerd("  SystemdCgroup = false\n")
_RUNC_SYSTEMD_TRUE = _containerd("  SystemdCgroup = true\n")
_NVIDIA = '  BinaryName = "/usr/bin/nvidia-container-runtime"\n'
#: the NVIDIA handler as default beside the node's own runc, which has SystemdCgroup = true.
_RUNC_TABLE = ('[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n'
               '  runtime_type = "io.containerd.runc.v2"\n'
               '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]\n')


def _files(kubelet: str | None, containerd: str) -> list[dict[str, Any]]:
    ev: list[dict[str, Any]] = [
        {"kind": "node-file", "path": "etc/containerd/config.toml", "text": containerd}]
    if kubelet is not None:
        ev.append({"kind": "node-file", "path": "var/lib/kubelet/config.yaml", "text": kubelet})
    return ev


def _top(evidence: list[dict[str, Any]], **cluster: Any) -> tuple[str, str] | None:
    return top_pair(synthetic_case("x-cgroup-driver", evidence, healthy=False,
                                   cluster={"driver_mode": "host", **cluster}))


def test_kubelet_systemd_runc_without_systemd_cgroup_is_the_runtime_s_config() -> None:
    assert _top(_files(_KUBELET_SYSTEMD, _RUNC_WITHOUT_SYSTEMD)) == _RUNTIME
    assert _top(_files(_KUBELET_SYSTEMD, _RUNC_SYSTEMD_FALSE)) == _RUNTIME


def test_the_reverse_kubelet_cgroupfs_runc_systemd_is_a_mismatch_too() -> None:
    # containerd/containerd#4857's shape: runc expects "slice:prefix:name", the kubelet gives /kubepods/...
    assert _top(_files(_KUBELET_CGROUPFS, _RUNC_SYSTEMD_TRUE)) == _RUNTIME


def test_the_toolkit_s_nvidia_default_without_the_setting_runc_has_is_the_toolkit_s() -> None:
    config = _containerd(_NVIDIA, "nvidia", "\n" + _RUNC_TABLE + "  SystemdCgroup = true\n")
    assert _top(_files(_KUBELET_SYSTEMD, config)) == _TOOLKIT
    # NVIDIA/nvidia-docker#1788: a fresh config holding only the NVIDIA handler
    assert _top(_files(_KUBELET_SYSTEMD, _containerd(_NVIDIA, "nvidia"))) == _TOOLKIT


def test_the_toolkit_copying_a_runc_that_already_differs_leaves_it_to_the_runtime() -> None:
    config = _containerd(_NVIDIA, "nvidia", "\n" + _RUNC_TABLE)
    assert _top(_files(_KUBELET_SYSTEMD, config)) == _RUNTIME


def test_docker_s_native_cgroupdriver_against_the_kubelet_s() -> None:
    # kubernetes/kubeadm#1394: daemon.json's exec-opts native.cgroupdriver=systemd
    daemon = '{"exec-opts": ["native.cgroupdriver=systemd"], "storage-driver": "overlay2"}'
    ev = [{"kind": "node-file", "path": "etc/docker/daemon.json", "text": daemon},
          {"kind": "node-file", "path": "var/lib/kubelet/config.yaml", "text": _KUBELET_CGROUPFS}]
    assert top_pair(synthetic_case("x-cgroup-docker", ev, platform="docker", healthy=False,
                                   cluster={"driver_mode": "host"})) == _RUNTIME


def _nvidia_and_runc(setting: str) -> str:
    """The toolkit's NVIDIA default beside runc, both with ``setting`` (or both without)."""
    return _containerd(_NVIDIA + setting, "nvidia", "\n" + _RUNC_TABLE + setting)


def test_look_alikes_stay_healthy() -> None:
    # both systemd (kubernetes/kubernetes#96366's kubelet config with a systemd runtime)
    assert _top(_files(_KUBELET_SYSTEMD, _nvidia_and_runc("  SystemdCgroup = true\n"))) is None
    # both cgroupfs, a cgroup v1 host (kubernetes/kubernetes#95488: cgroupDriver "cgroupfs",
    # the runtime on cgroupfs)
    assert _top(_files(_KUBELET_CGROUPFS, _nvidia_and_runc(""))) is None
    assert _top(_files(_KUBELET_CGROUPFS, _nvidia_and_runc("  SystemdCgroup = false\n"))) is None
    # no kubelet config, or one that does not set the driver: unknown, never a mismatch
    assert _top(_files(None, _nvidia_and_runc(""))) is None
    assert _top(_files("kind: KubeletConfiguration\n", _nvidia_and_runc(""))) is None


def test_a_kubelet_of_1_31_on_containerd_2_takes_the_runtime_s_driver() -> None:
    ev = [*_files(_KUBELET_SYSTEMD, _nvidia_and_runc("")),
          {"kind": "node-info",
           "fields": {"kubeletVersion": "v1.32.1", "containerRuntimeVersion": "containerd://2.0.2"}}]
    assert _top(ev) is None


def test_the_collector_keeps_only_the_driver_line() -> None:
    text = ("apiVersion: kubelet.config.k8s.io/v1beta1\nauthentication:\n  x509:\n"
            "    clientCAFile: /etc/kubernetes/pki/ca.crt\ncgroupDriver: systemd\n"
            "staticPodPath: /etc/kubernetes/manifests\n")
    assert kubelet_config_kept(text) == "cgroupDriver: systemd\n"
    assert kubelet_config_kept("kind: KubeletConfiguration\n") == ""
    assert kubelet_cgroup_driver("  cgroupDriver: systemd\n") is None  # nested: not the top-level key


def test_explain_over_the_two_files_names_the_mismatch(tmp_path: Path) -> None:
    """``gpunode explain`` given the kubelet's config and containerd's reads them as diagnose does."""
    from gpunode.commands.explain import explain_sources

    kubelet = tmp_path / "var/lib/kubelet/config.yaml"
    containerd = tmp_path / "etc/containerd/config.toml"
    for path, text in ((kubelet, _KUBELET_SYSTEMD), (containerd, _containerd(_NVIDIA, "nvidia"))):
        path.parent.mkdir(parents=True)
        path.write_text(text)
    explanation, _ = explain_sources([str(containerd), str(kubelet)], None)
    assert "error_config_invalid" in {m.cause.code for m in explanation.matches}
    containerd.write_text(_nvidia_and_runc("  SystemdCgroup = true\n"))
    explanation, _ = explain_sources([str(containerd), str(kubelet)], None)
    assert "error_config_invalid" not in {m.cause.code for m in explanation.matches}
