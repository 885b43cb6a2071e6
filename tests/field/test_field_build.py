"""What the builder renders for the field corpus, and the reasoning that needs it: the
Network Operator's SR-IOV plugin and MOFED DaemonSets as the platform's node labels call
for them, evidence that must land in the bundle, causes that explain a lower failure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from builder import build_case
from case import CASES_DIR, Case, CaseError, NodeFileEv, load_case
from scoreboard import diagnose_case, top_root_cause

from gpunode.model import Report


def _items(out: Path, resource: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = json.loads((out / f"cluster/{resource}.json").read_text())["items"]
    return items


def _on_node(pods: list[dict[str, Any]], prefix: str, node: str) -> list[dict[str, Any]]:
    return [
        p for p in pods if p["metadata"]["name"].startswith(prefix) and p["spec"].get("nodeName") == node
    ]


def _case(name: str) -> Case:
    return load_case(CASES_DIR / f"{name}.yaml")


def _component(report: Report, node: str, component: str) -> Any:
    entry = next(n for n in report.nodes if n.name == node)
    return next(c for c in entry.components if c.component == component)


def test_sriov_device_plugin_is_rendered_when_the_evidence_shows_its_pod(tmp_path: Path) -> None:
    case = _case("sriov-network-operator-294-resource-name-dashes")
    out = build_case(case, tmp_path / case.id)
    name = "network-operator-sriov-device-plugin"
    ds = next(d for d in _items(out, "daemonsets") if d["metadata"]["name"] == name)
    assert ds["metadata"]["namespace"] == "network-operator"
    assert ds["spec"]["selector"]["matchLabels"] == {"name": name}
    pods = _on_node(_items(out, "pods"), f"{name}-", case.node)
    assert len(pods) == 1 and pods[0]["spec"]["containers"][0]["name"] == "kube-sriovdp"
    policy = _items(out, "nicclusterpolicies")[0]
    assert "resourceList" in policy["spec"]["sriovDevicePlugin"]["config"]
    top = top_root_cause(diagnose_case(case), case.node)
    assert top is not None
    assert (top.component, top.cause) == ("sriov-device-plugin", "sriov_no_resource_config")


def test_sriov_device_plugin_is_not_deployed_unless_something_shows_it(tmp_path: Path) -> None:
    case = _case("gpu-operator-155-centos-kernel-version")
    out = build_case(case, tmp_path / case.id)
    assert not [d for d in _items(out, "daemonsets") if "sriov" in d["metadata"]["name"]]
    assert "sriovDevicePlugin" not in _items(out, "nicclusterpolicies")[0]["spec"]


def test_mofed_daemonset_follows_the_platforms_os_labels(tmp_path: Path) -> None:
    """OpenShift nodes say rhcos: the Network Operator's DaemonSet is mofed-rhcos<ver>-...,
    selects rhcos nodes, and its pod there carries the reported crash."""
    case = _case("network-operator-830-openshift-mofed-repo-dns")
    out = build_case(case, tmp_path / case.id)
    mofed = [d for d in _items(out, "daemonsets") if d["metadata"]["name"].startswith("mofed-")]
    assert {d["metadata"]["name"].split("-")[1] for d in mofed} == {"rhcos4.15"}
    selectors = [d["spec"]["template"]["spec"]["nodeSelector"] for d in mofed]
    assert {s["feature.node.kubernetes.io/system-os_release.ID"] for s in selectors} == {"rhcos"}
    kernels = {s["feature.node.kubernetes.io/kernel-version.full"] for s in selectors}
    assert "5.14.0-284.40.1.el9_2.x86_64" in kernels  # one DaemonSet per kernel, as the operator does
    (pod,) = _on_node(_items(out, "pods"), "mofed-rhcos", case.node)
    ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    assert "cdn.redhat.com" in (out / f"logs/{ns}/{name}/mofed-container.previous.log").read_text()
    top = top_root_cause(diagnose_case(case), case.node)
    assert top is not None and top.cause == "mofed_repo_unreachable"


def test_evidence_on_a_pod_the_controllers_then_remove_is_a_loud_error(tmp_path: Path) -> None:
    raw = {
        "id": "x-5-lost",
        "source": "https://example.org/x",
        "title": "t",
        "platform": "generic",
        "evidence": [
            {"kind": "node-labels", "labels": {"nvidia.com/gpu.deploy.device-plugin": "false"}},
            {"kind": "pod-state", "component": "device-plugin", "state": "CrashLoopBackOff"},
        ],
        "expect": {"healthy": True},
    }
    with pytest.raises(CaseError, match=r"evidence\[1\].*removed.*does not select gpu-wk-01"):
        build_case(msgspec.convert(raw, Case), tmp_path / "b")


def test_validator_error_in_the_toolkits_init_container_explains_the_toolkit() -> None:
    case = _case("gpu-operator-docs-dev-char-symlink-unknown-pci-id")
    report = diagnose_case(case)
    top = top_root_cause(report, case.node)
    assert top is not None
    assert (top.component, top.cause) == ("validator", "validator_dev_char_symlinks_failed")
    assert _component(report, case.node, "container-toolkit").blocked_by == ("validator",)


def test_the_same_validator_line_in_a_healthy_init_container_accuses_nobody() -> None:
    case = _case("gpu-operator-docs-dev-char-symlink-unknown-pci-id")
    log = next(e for e in case.evidence if type(e).__name__ == "LogEv")
    quiet = msgspec.structs.replace(
        case,
        evidence=(msgspec.structs.replace(log, previous=False),),
        expect=msgspec.convert({"healthy": True}, type(case.expect)),
    )
    assert top_root_cause(diagnose_case(quiet), case.node) is None


def test_a_toolkit_dropin_newer_than_the_root_config_explains_the_runtime_being_down() -> None:
    case = _case("aicr-1688-aks-toolkit-v4-dropin")
    report = diagnose_case(case)
    top = top_root_cause(report, case.node)
    assert top is not None and (top.component, top.cause) == (
        "container-toolkit",
        "containerd_config_version_mismatch",
    )
    assert "drop-in config version 4 higher than root config version 2" in top.evidence[0].excerpt
    assert _component(report, case.node, "container-runtime").blocked_by == ("container-toolkit",)


def test_the_same_files_on_a_node_whose_runtime_runs_are_not_judged() -> None:
    """Other containerd releases load a newer drop-in: without the runtime down, no finding."""
    case = _case("aicr-1688-aks-toolkit-v4-dropin")
    files = tuple(e for e in case.evidence if type(e).__name__ in ("NodeFileEv", "NodeInfoEv"))
    report = diagnose_case(msgspec.structs.replace(case, evidence=files))
    assert _component(report, case.node, "container-toolkit").cause != "containerd_config_version_mismatch"


def test_a_dropin_at_the_root_configs_version_is_fine() -> None:
    case = _case("aicr-1688-aks-toolkit-v4-dropin")
    same = tuple(
        msgspec.structs.replace(e, text="version = 2\n")
        if type(e).__name__ == "NodeFileEv" and e.path.endswith("99-nvidia.toml")
        else e
        for e in case.evidence
    )
    top = top_root_cause(diagnose_case(msgspec.structs.replace(case, evidence=same)), case.node)
    assert top is not None and top.cause != "containerd_config_version_mismatch"


def _with_root_config(case: Case, text: str) -> Case:
    evidence = tuple(
        msgspec.structs.replace(e, text=text)
        if type(e).__name__ == "NodeFileEv" and e.path == "etc/containerd/config.toml"
        else e
        for e in case.evidence
    )
    return msgspec.structs.replace(case, evidence=evidence)


def test_a_toolkit_dropin_the_platforms_containerd_does_not_import_is_the_wrong_path() -> None:
    case = _case("wmx-gke-operator-toolkit-dropin-not-imported")
    top = top_root_cause(diagnose_case(case), case.node)
    assert top is not None
    assert (top.component, top.cause) == ("container-toolkit", "containerd_config_wrong_path")
    assert "99-nvidia.toml" in top.evidence[0].source
    assert "imports no drop-in directory" in top.evidence[0].excerpt


def test_the_same_dropin_imported_by_the_root_config_is_not_the_wrong_path() -> None:
    case = _case("wmx-gke-operator-toolkit-dropin-not-imported")
    imported = _with_root_config(case, 'version = 2\nimports = ["/etc/containerd/conf.d/*.toml"]\n')
    top = top_root_cause(diagnose_case(imported), case.node)
    assert top is not None and top.cause != "containerd_config_wrong_path"


def test_a_stray_dropin_beside_a_patched_root_config_is_not_judged() -> None:
    case = _case("wmx-gke-operator-toolkit-dropin-not-imported")
    patched = _with_root_config(
        case,
        "version = 2\n"
        '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
        'BinaryName = "/usr/local/nvidia/toolkit/nvidia-container-runtime"\n',
    )
    files = tuple(e for e in patched.evidence if type(e).__name__ == "NodeFileEv")
    report = diagnose_case(msgspec.structs.replace(patched, evidence=files))
    assert _component(report, case.node, "container-toolkit").cause != "containerd_config_wrong_path"


_GKE_ROOT = (
    'version = 2\nrequired_plugins = ["io.containerd.grpc.v1.cri"]\n'
    '[plugins."io.containerd.grpc.v1.cri".containerd]\n  default_runtime_name = "runc"\n'
    '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n'
    '  runtime_type = "io.containerd.runc.v2"\n'
)


def test_gkes_own_runc_only_containerd_config_is_healthy_without_our_toolkit() -> None:
    """GKE's device plugin mounts the driver itself: its config.toml has runc only, by design."""
    case = _case("gke-docs-gpus-no-nvidia-runtime-handler")
    root = NodeFileEv(path="etc/containerd/config.toml", text=_GKE_ROOT)
    report = diagnose_case(msgspec.structs.replace(case, evidence=(*case.evidence, root)))
    assert top_root_cause(report, case.node) is None
    assert _component(report, case.node, "container-toolkit").status == "not-deployed"



def _container_built(tmp: Path, name: str, evidence: dict[str, Any], pod: str,
                     container: str) -> dict[str, Any]:
    """The status of ``container`` in ``pod``'s (name prefix) pod after a one-item case is built."""
    raw = {"id": name, "source": "https://example.org/x", "title": "t", "platform": "generic",
           "evidence": [evidence], "expect": {"healthy": True}}
    case = msgspec.convert(raw, Case)
    out = build_case(case, tmp / name)
    found = _on_node(_items(out, "pods"), pod, case.node)[0]
    return next(cs for cs in found["status"]["containerStatuses"] if cs["name"] == container)


def test_a_failed_event_without_a_reported_state_gets_the_kubelets_state(tmp_path: Path) -> None:
    """The kubelet's Failed event comes with the state it leaves: a start the runtime refused
    ends as StartError (exit 128) and crash-loops; a spec it could not generate waits in
    CreateContainerError; an image pull failure is left to the reported state."""
    def built(message: str, name: str) -> dict[str, Any]:
        event = {"kind": "event", "component": "gfd", "reason": "Failed", "message": message}
        return _container_built(tmp_path, name, event, "gpu-feature-discovery-", "gpu-feature-discovery")

    hook = built("failed to create containerd task: error running hook #0: exit status 1", "hook")
    assert hook["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert hook["lastState"]["terminated"]["reason"] == "StartError"
    assert hook["lastState"]["terminated"]["exitCode"] == 128
    spec = built("Error: failed to generate container spec: read-only file system", "spec")
    assert spec["state"]["waiting"]["reason"] == "CreateContainerError"
    pull = built("Failed to pull image \"x\": not found", "pull")
    assert "running" in pull["state"]


def test_a_log_that_ends_in_a_fatal_line_was_left_by_a_container_that_exited(tmp_path: Path) -> None:
    """A process exits after logging at fatal level (or panicking): with no state reported,
    its container crash-loops and the log is the previous one; a log ending in an error
    that is not fatal stays with a running container."""
    def built(text: str, name: str) -> dict[str, Any]:
        log = {"kind": "log", "component": "dcgm-exporter", "text": text}
        return _container_built(tmp_path, name, log, "nvidia-dcgm-exporter-", "nvidia-dcgm-exporter")

    fatal = built('level=info msg="Starting"\nlevel=fatal msg="Error starting nv-hostengine"\n', "fatal")
    assert fatal["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    error = built('level=error msg="could not read config"\nlevel=info msg="Starting"\n', "err")
    assert "running" in error["state"]


def test_a_runtime_the_case_names_keeps_its_version_on_any_platform(tmp_path: Path) -> None:
    raw = {"id": "x-runtime", "source": "https://example.org/x", "title": "t", "platform": "microk8s",
           "cluster": {"runtime": "containerd2"}, "evidence": [], "expect": {"healthy": True}}
    out = build_case(msgspec.convert(raw, Case), tmp_path / "x")
    versions = {n["status"]["nodeInfo"]["containerRuntimeVersion"] for n in _items(out, "nodes")}
    assert all(v.startswith("containerd://2.") for v in versions), versions
    assert top_root_cause(diagnose_case(msgspec.convert(raw, Case)), "gpu-wk-01") is None


def test_a_case_whose_manifests_ask_for_no_runtime_class_gets_pods_without_one(tmp_path: Path) -> None:
    """``cluster.runtime_class: false``: static manifests and charts without
    runtimeClassName (NVIDIA/dcgm-exporter#612's Helm install) leave every pod and DaemonSet
    template without one, which the default-runtime reasoning reads."""
    case = _case("dcgm-exporter-612-nvml-library-not-found")
    assert case.cluster.runtime_class is False
    out = build_case(case, tmp_path / case.id)
    assert not [p["metadata"]["name"] for p in _items(out, "pods") if p["spec"].get("runtimeClassName")]
    assert not [d["metadata"]["name"] for d in _items(out, "daemonsets")
                if d["spec"]["template"]["spec"].get("runtimeClassName")]
    plain = msgspec.structs.replace(case, cluster=msgspec.structs.replace(case.cluster, runtime_class=None))
    again = build_case(plain, tmp_path / "with-class")
    assert any(p["spec"].get("runtimeClassName") == "nvidia" for p in _items(again, "pods"))


def test_a_container_the_runtime_refuses_to_create_has_no_log(tmp_path: Path) -> None:
    """NVIDIA/gpu-operator#133: the runtime hook fails before driver-validation starts, so
    the crash-looping init container wrote nothing; the simulator's log of a healthy run
    (its retries until nvidia-smi answered) is not in the bundle, and the event's line,
    not a retry, names the cause."""
    case = _case("gpu-operator-133-centos8-driver-root-no-ldconfig-real")
    out = build_case(case, tmp_path / case.id)
    pod = next(p for p in _on_node(_items(out, "pods"), "nvidia-operator-validator", case.node))
    folder = out / "logs" / pod["metadata"]["namespace"] / pod["metadata"]["name"]
    assert not list(folder.glob("driver-validation*.log"))
    top = top_root_cause(diagnose_case(case), case.node)
    assert top is not None
    assert (top.component, top.cause) == ("container-toolkit", "toolkit_ldconfig_path_wrong")


def test_a_static_device_plugin_is_k8s_device_plugins_own_daemonset(tmp_path: Path) -> None:
    """``cluster.device_plugin: static``: the plugin as its own manifest deploys it (kube-system,
    name=nvidia-device-plugin-ds, only the nvidia.com/gpu toleration, no gpu.deploy selector);
    the Spot taint it does not tolerate keeps its pod off the node, and without it a pod lands."""
    case = _case("azure-aks-docs-138-spot-gpu-pool-taint-device-plugin-ds-no-toleration")
    assert case.cluster.device_plugin == "static"
    out = build_case(case, tmp_path / case.id)
    name = "nvidia-device-plugin-daemonset"
    ds = next(d for d in _items(out, "daemonsets") if d["metadata"]["name"] == name)
    spec = ds["spec"]["template"]["spec"]
    assert ds["metadata"]["namespace"] == "kube-system"
    assert ds["spec"]["selector"]["matchLabels"] == {"name": "nvidia-device-plugin-ds"}
    assert spec["tolerations"] == [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}]
    assert spec["priorityClassName"] == "system-node-critical" and "nodeSelector" not in spec
    assert not _on_node(_items(out, "pods"), "nvidia-device-plugin-daemonset-", case.node)
    untainted = msgspec.structs.replace(
        case, evidence=tuple(e for e in case.evidence if e.__struct_config__.tag != "node-taints"))
    again = build_case(untainted, tmp_path / "untainted")
    assert len(_on_node(_items(again, "pods"), "nvidia-device-plugin-daemonset-", case.node)) == 1


def test_a_static_device_plugin_beside_the_operators_is_refused(tmp_path: Path) -> None:
    case = _case("azure-aks-docs-138-spot-gpu-pool-taint-device-plugin-ds-no-toleration")
    cluster = msgspec.structs.replace(case.cluster, components=("gpu-operator",))
    both = msgspec.structs.replace(case, cluster=cluster)
    with pytest.raises(CaseError, match="device_plugin"):
        build_case(both, tmp_path / "both")
