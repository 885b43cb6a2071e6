"""Runtime, kubelet, toolkit, validator markers and RDMA, judged from the probe's host facts."""

from __future__ import annotations

from pathlib import Path

from probe_check_helpers import (
    Facts,
    component,
    excerpts,
    host_files,
    judge,
    node_object,
    recorded,
    recorded_raw,
    root_cause,
    root_causes,
    runtime_file,
    status,
)

from gpunode.checks.probe import configs_in_use
from gpunode.model import Status
from gpunode.probe import load_probe_json

POD_COMPONENTS = ("device-plugin", "gfd", "dcgm-exporter", "sriov-device-plugin", "mig-manager")
HOST_COMPONENTS = ("kernel", "gpu-hardware", "container-runtime", "kubelet")


def _kubernetes_node(tmp_path: Path, facts: Facts, files: dict[str, str], *running: str) -> dict[str, str]:
    """Give the recorded host runtime configs/CDI specs from real files, and running daemons."""
    host, raw = host_files(tmp_path, files)
    for key in ("runtime_configs", "cdi_specs"):
        facts["host"][key] = host[key]
    for name in running:
        facts["host"]["processes"][name] = True
    facts["host"]["kubelet_registration_socket"] = "kubelet" in running or "k3s-agent" in running
    return {**recorded_raw(), **raw}


# containerd's stock config on a node the toolkit never patched (runc only)
UNPATCHED_CONTAINERD = """version = 2
root = "/var/lib/containerd"
state = "/run/containerd"

[grpc]
  address = "/run/containerd/containerd.sock"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10"

  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    snapshotter = "overlayfs"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = true
"""
CONTAINERD_DROPIN = {
    "etc/containerd/config.toml": runtime_file("containerd-dropin/config.toml"),
    "etc/containerd/conf.d/10-registry.toml": runtime_file("containerd-dropin/conf.d/10-registry.toml"),
    "etc/containerd/conf.d/99-nvidia.toml": runtime_file("containerd-dropin/conf.d/99-nvidia.toml"),
    "var/run/cdi/nvidia.yaml": runtime_file("cdi/nvidia.yaml"),
}


def test_recorded_h200_without_kubernetes_has_no_false_root_cause(tmp_path: Path) -> None:
    report = judge(tmp_path, recorded())
    assert root_causes(report) == []
    assert report.status == Status.OK
    for cid in ("container-runtime", "kubelet", "container-toolkit", "validator", "ofed", *POD_COMPONENTS):
        assert status(report, cid) == Status.NOT_DEPLOYED, cid
    assert component(report, "kubelet").summary == "no kubelet on this host"
    assert component(report, "device-plugin").summary == "no kubelet on this host: nothing runs as a pod"


def test_kubernetes_node_with_patched_containerd(tmp_path: Path) -> None:
    facts = recorded()
    raw = _kubernetes_node(tmp_path, facts, CONTAINERD_DROPIN, "kubelet", "containerd")
    report = judge(tmp_path, facts, raw=raw)
    assert root_causes(report) == []
    assert status(report, "container-runtime") == Status.OK
    assert component(report, "kubelet").summary == "kubelet running"
    toolkit = component(report, "container-toolkit")
    assert toolkit.status == Status.OK
    assert "nvidia runtime in /etc/containerd/config.toml" in toolkit.summary
    assert "CDI specs: nvidia.com/gpu" in toolkit.summary
    for cid in POD_COMPONENTS:  # a kubelet runs: pods are possible, the probe cannot see them
        assert status(report, cid) != Status.NOT_DEPLOYED, cid


def test_unpatched_containerd_under_a_kubelet(tmp_path: Path) -> None:
    facts = recorded()
    files = {"etc/containerd/config.toml": UNPATCHED_CONTAINERD}
    raw = _kubernetes_node(tmp_path, facts, files, "kubelet", "containerd")
    report = judge(tmp_path, facts, raw=raw)
    assert root_causes(report) == [("container-toolkit", "containerd_not_patched")]
    assert "/etc/containerd/config.toml: runtimes runc; none runs nvidia-container-runtime" in excerpts(
        root_cause(report, "container-toolkit")
    )


def test_kubelet_without_a_running_containerd_is_runtime_down(tmp_path: Path) -> None:
    facts = recorded()
    raw = _kubernetes_node(tmp_path, facts, CONTAINERD_DROPIN, "kubelet")
    report = judge(tmp_path, facts, raw=raw)
    assert root_causes(report) == [("container-runtime", "container_runtime_down")]
    assert "kubelet runs, no containerd/crio process" in excerpts(root_cause(report, "container-runtime"))


def test_k3s_judges_its_own_config_not_a_leftover(tmp_path: Path) -> None:
    facts = recorded()
    files = {
        "etc/containerd/config.toml": UNPATCHED_CONTAINERD,
        "var/lib/rancher/k3s/agent/etc/containerd/config.toml": runtime_file("k3s/config.toml"),
    }
    _kubernetes_node(tmp_path, facts, files, "k3s-agent", "containerd")
    used = configs_in_use(load_probe_json(_json(facts)))
    assert [c.path for c in used] == ["/var/lib/rancher/k3s/agent/etc/containerd/config.toml"]
    raw = {
        **recorded_raw(),
        "files/var/lib/rancher/k3s/agent/etc/containerd/config.toml": files[
            "var/lib/rancher/k3s/agent/etc/containerd/config.toml"
        ],
    }
    report = judge(tmp_path, facts, raw=raw)
    assert status(report, "container-toolkit") == Status.OK
    assert status(report, "kubelet") == Status.OK


def test_crio_without_nvidia_runtime_is_unknown_when_hooks_were_not_read(tmp_path: Path) -> None:
    """Facts without oci_hook_dirs (a probe older than the hook reader): the hook setup
    is not judged (tests/real/test_real_crio_hooks.py judges it from real hook files)."""
    facts = recorded()
    files = {"etc/crio/crio.conf": runtime_file("crio/crio.conf")}
    raw = _kubernetes_node(tmp_path, facts, files, "kubelet", "crio")
    report = judge(tmp_path, facts, raw=raw)
    assert status(report, "container-toolkit") == Status.UNKNOWN
    assert "OCI hooks not read" in component(report, "container-toolkit").summary
    files["etc/crio/crio.conf.d/99-nvidia.toml"] = runtime_file("crio/crio.conf.d/99-nvidia.toml")
    raw = _kubernetes_node(tmp_path / "patched", facts, files, "kubelet", "crio")
    assert status(judge(tmp_path / "patched", facts, raw=raw), "container-toolkit") == Status.OK


def test_broken_cdi_spec_degrades_the_toolkit(tmp_path: Path) -> None:
    facts = recorded()
    files = {**CONTAINERD_DROPIN, "etc/cdi/nvidia.yaml": runtime_file("cdi/nvidia.yaml")[:700]}
    raw = _kubernetes_node(tmp_path, facts, files, "kubelet", "containerd")
    report = judge(tmp_path, facts, raw=raw)
    assert root_causes(report) == [("container-toolkit", "cdi_spec_invalid")]
    assert "/etc/cdi/nvidia.yaml" in excerpts(root_cause(report, "container-toolkit"))


def test_a_node_the_cluster_knows_is_never_not_deployed(tmp_path: Path) -> None:
    """The agent in a pod without hostPID sees no processes; the Node object speaks instead."""
    facts = recorded()
    facts["host_root"] = "/host"
    report = judge(tmp_path, facts, node=node_object())
    assert status(report, "kubelet") == Status.OK
    assert status(report, "container-runtime") == Status.OK
    assert status(report, "container-toolkit") != Status.NOT_DEPLOYED
    assert root_causes(report) == []


def test_processes_out_of_sight_do_not_prove_absence(tmp_path: Path) -> None:
    facts = recorded()
    facts["host_root"] = "/host"  # a pod without hostPID: every process reads false
    report = judge(tmp_path, facts)
    assert status(report, "kubelet") == Status.UNKNOWN
    assert status(report, "container-runtime") == Status.UNKNOWN
    assert status(report, "device-plugin") == Status.UNKNOWN


def _markers(facts: Facts, older: bool | None) -> None:
    loaded = facts["host"]["driver_loaded_at"]
    facts["host"]["validations"] = [
        {
            "name": name,
            "mtime": loaded + (-600 if older else 40),
            "size": size,
            "older_than_driver_load": older,
        }
        for name, size in ((".driver-ctr-ready", 71), ("driver-ready", 151), ("toolkit-ready", 0))
    ]
    facts["host"]["processes"]["kubelet"] = True


def test_validation_markers_older_than_the_driver_load_are_stale(tmp_path: Path) -> None:
    facts = recorded()
    _markers(facts, older=True)
    report = judge(tmp_path, facts)
    assert root_causes(report) == [("validator", "validation_markers_stale")]
    rc = root_cause(report, "validator")
    assert rc.status == Status.DEGRADED
    assert "older than the driver load at 2026-11-30T" in excerpts(rc)


def test_fresh_validation_markers_are_ok(tmp_path: Path) -> None:
    facts = recorded()
    _markers(facts, older=False)
    report = judge(tmp_path, facts)
    assert status(report, "validator") == Status.OK
    assert (
        component(report, "validator").summary == "validated: .driver-ctr-ready, driver-ready, toolkit-ready"
    )


def _rdma(tmp_path: Path, facts: Facts, states: list[tuple[str, str]]) -> None:
    files = {}
    for n, (state, phys) in enumerate(states):
        base = f"sys/class/infiniband/mlx5_{n}/ports/1"
        files |= {
            f"{base}/state": f"{state}\n",
            f"{base}/phys_state": f"{phys}\n",
            f"{base}/link_layer": "Ethernet\n",
            f"{base}/rate": "400 Gb/sec (4X NDR)\n",
        }
    host, _ = host_files(tmp_path, files)
    facts["host"]["rdma_ports"] = host["rdma_ports"]
    facts["host"]["modules"] |= {
        m: {"name": m, "size": 2_600_000, "refcount": None, "used_by": [], "state": "Live"}
        for m in ("mlx5_core", "mlx5_ib", "ib_core")
    }


def test_all_rdma_ports_active(tmp_path: Path) -> None:
    facts = recorded()
    _rdma(tmp_path, facts, [("4: ACTIVE", "5: LinkUp")] * 8)
    report = judge(tmp_path, facts)
    assert component(report, "ofed").summary == "8/8 RDMA ports active (Ethernet)"
    assert root_causes(report) == []


def test_a_down_rdma_port_degrades_and_a_disabled_one_is_ignored(tmp_path: Path) -> None:
    facts = recorded()
    states = [("4: ACTIVE", "5: LinkUp")] * 6 + [("1: DOWN", "2: Polling"), ("1: DOWN", "3: Disabled")]
    _rdma(tmp_path, facts, states)
    report = judge(tmp_path, facts)
    assert root_causes(report) == [("rdma-links", "ib_port_polling")]
    rc = root_cause(report, "rdma-links")
    assert rc.status == Status.DEGRADED
    assert excerpts(rc) == "mlx5_6/1 DOWN (Polling 400 Gb/s)"


def test_a_down_port_without_a_telling_physical_state_is_rdma_port_down(tmp_path: Path) -> None:
    facts = recorded()
    _rdma(tmp_path, facts, [("4: ACTIVE", "5: LinkUp"), ("1: DOWN", "1: Sleep")])
    report = judge(tmp_path, facts)
    assert root_causes(report) == [("rdma-links", "rdma_port_down")]
    assert component(report, "ofed").status == Status.OK


def test_host_components_are_all_judged_by_the_probe_alone(tmp_path: Path) -> None:
    report = judge(tmp_path, recorded())
    for cid in HOST_COMPONENTS:
        assert not component(report, cid).summary.startswith("not observed"), cid
        assert not [m for m in report.missing_data if cid in m.components], cid


def _json(facts: Facts) -> str:
    import json

    return json.dumps(facts)


K3S_DIR = "var/lib/rancher/k3s/agent/etc/containerd/"
#: k3s's base template copied into config.toml.tmpl (tests/fixtures/real/containerd, SOURCES.md)
K3S_TEMPLATE = (
    Path(__file__).parents[1] / "fixtures" / "real" / "containerd" / "k3s-config.toml.tmpl"
).read_text()


def test_k3s_judges_the_rendered_config_not_the_template_beside_it(tmp_path: Path) -> None:
    """k3s renders config.toml from config.toml.tmpl, adding the runtimes it found: the
    template's missing literal NVIDIA runtime is no finding when the rendered file was read."""
    facts = recorded()
    files = {
        K3S_DIR + "config.toml": runtime_file("k3s/config.toml"),
        K3S_DIR + "config.toml.tmpl": K3S_TEMPLATE,
    }
    _kubernetes_node(tmp_path, facts, files, "k3s-agent", "containerd")
    used = configs_in_use(load_probe_json(_json(facts)))
    assert [c.path for c in used] == ["/" + K3S_DIR + "config.toml"]


def test_a_k3s_template_alone_without_an_nvidia_runtime_is_unknown(tmp_path: Path) -> None:
    facts = recorded()
    files = {K3S_DIR + "config.toml.tmpl": K3S_TEMPLATE}
    raw = _kubernetes_node(tmp_path, facts, files, "k3s-agent", "containerd")
    report = judge(tmp_path, facts, raw=raw)
    assert ("container-toolkit", "containerd_not_patched") not in root_causes(report)
    assert status(report, "container-toolkit") in (Status.UNKNOWN, Status.OK)
