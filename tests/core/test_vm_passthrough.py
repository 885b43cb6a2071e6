"""VM-passthrough nodes (GPU Operator sandbox workloads) are judged by their own rules:
their GPUs go whole to KubeVirt or Kata VMs through vfio-pci, so no driver container,
container toolkit or NVIDIA device plugin runs there by design. What is judged is what
does the job instead: the vfio-manager that binds the GPUs to vfio-pci (its validator
marker vfio-pci-ready) and the sandbox device plugin that advertises them as
nvidia.com/<DEVICE> resources. Names and labels are the operator's own manifests:
assets/state-vfio-manager/0500_daemonset.yaml (DaemonSet nvidia-vfio-manager, container
nvidia-vfio-manager, node selector nvidia.com/gpu.deploy.vfio-manager=true) and
assets/state-sandbox-device-plugin/0500_daemonset.yaml (nvidia-sandbox-device-plugin-
daemonset, container nvidia-sandbox-device-plugin-ctr, image kubevirt-gpu-device-plugin,
init containers waiting for validations/workload-type and vfio-pci-ready)."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from gpunode.cli import build_report
from gpunode.model import NodeReport, Status
from gpunode.sim import build_bundle, load_scenario

NODE = "gpu-wk-01"
NS = "gpu-operator"
# what the operator runs on a container-workload node and never on a VM one
CONTAINER_OPERANDS = (
    "nvidia-container-toolkit-daemonset", "nvidia-device-plugin-daemonset", "nvidia-driver-daemonset",
    "nvidia-dcgm-exporter", "gpu-feature-discovery", "nvidia-mig-manager", "nvidia-operator-validator",
    "cluster-policy",
)
# the resource KubeVirt's device plugin names after the PCI device (pci.ids name, '_' for spaces)
VM_RESOURCE = "nvidia.com/GH100_H100_SXM5_80GB"


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_bundle(load_scenario("falcon-ai"), tmp_path_factory.mktemp("falcon") / "bundle")


def _load(root: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / "cluster" / f"{name}.json").read_text())
    return data


def _save(root: Path, name: str, data: dict[str, Any]) -> None:
    (root / "cluster" / f"{name}.json").write_text(json.dumps(data))


def _vm_node(node: dict[str, Any], workload: str) -> None:
    """The operator's labels on a VM node: the workload config and the sandbox operands'
    state labels, no container operand's and no GFD label (GFD never runs there)."""
    labels = node["metadata"]["labels"]
    for key in [k for k in labels if k.startswith("nvidia.com/") and k != "nvidia.com/gpu.present"]:
        del labels[key]
    labels.update({
        "nvidia.com/gpu.workload.config": workload,
        "nvidia.com/gpu.deploy.vfio-manager": "true",
        "nvidia.com/gpu.deploy.sandbox-device-plugin": "true",
        "nvidia.com/gpu.deploy.sandbox-validator": "true",
        "feature.node.kubernetes.io/pci-10de.present": "true",
    })
    for field in ("capacity", "allocatable"):
        resources = node["status"][field]
        resources.pop("nvidia.com/gpu", None)
        resources[VM_RESOURCE] = "8"


def _operand(template: dict[str, Any], ds: str, container: str, image: str,
             label: tuple[str, str]) -> dict[str, Any]:
    """A running pod of a sandbox operand (no runtimeClassName: no NVIDIA runtime here)."""
    pod = copy.deepcopy(template)
    pod["spec"].pop("runtimeClassName", None)
    meta = pod["metadata"]
    meta["name"] = f"{ds}-vm01x"
    meta["labels"] = {label[0]: label[1]}
    meta["ownerReferences"][0]["name"] = ds
    pod["spec"]["containers"] = [{"name": container, "image": image}]
    pod["spec"]["initContainers"] = []
    started = {"running": {"startedAt": "2025-05-12T14:21:00Z"}}
    pod["status"]["containerStatuses"] = [
        {"name": container, "image": image, "ready": True, "restartCount": 0, "state": started}
    ]
    pod["status"]["initContainerStatuses"] = []
    return pod


VFIO_MANAGER = ("nvidia-vfio-manager", "nvidia-vfio-manager", "nvcr.io/nvidia/cuda:12.8.1-base-ubi9",
                ("name", "nvidia-vfio-manager"))
SANDBOX_PLUGIN = ("nvidia-sandbox-device-plugin-daemonset", "nvidia-sandbox-device-plugin-ctr",
                  "nvcr.io/nvidia/kubevirt-gpu-device-plugin:v1.3.1",
                  ("app", "nvidia-sandbox-device-plugin-daemonset"))


def vm_passthrough(healthy: Path, dest: Path, workload: str = "vm-passthrough",
                   policy_sandbox: bool = True) -> Path:
    """The healthy cluster with NODE turned into a VM-passthrough node."""
    shutil.copytree(healthy, dest)
    nodes = _load(dest, "nodes")
    _vm_node(next(n for n in nodes["items"] if n["metadata"]["name"] == NODE), workload)
    _save(dest, "nodes", nodes)
    pods = _load(dest, "pods")
    template = next(p for p in pods["items"] if p["metadata"]["name"].startswith(CONTAINER_OPERANDS[1]))
    pods["items"] = [p for p in pods["items"] if not _container_gpu_pod_here(p)]
    for ds, container, image, label in (VFIO_MANAGER, SANDBOX_PLUGIN):
        pod = _operand(template, ds, container, image, label)
        pod["spec"]["nodeName"] = NODE
        pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
            "nodeSelectorTerms"][0]["matchFields"][0]["values"] = [NODE]
        pods["items"].append(pod)
    _save(dest, "pods", pods)
    _sandbox_daemonsets(dest)
    if policy_sandbox:
        policies = _load(dest, "clusterpolicies")
        policies["items"][0]["spec"]["sandboxWorkloads"] = {"enabled": True, "defaultWorkload": "container"}
        _save(dest, "clusterpolicies", policies)
    _vm_node_files(dest / "nodes" / NODE, workload)
    return dest


def _container_gpu_pod_here(pod: dict[str, Any]) -> bool:
    """A container operand or a GPU workload (namespace ml) on NODE: none runs on a VM node."""
    meta = pod["metadata"]
    if pod["spec"].get("nodeName") != NODE:
        return False
    return meta["namespace"] == "ml" or (
        meta["namespace"] == NS and meta["ownerReferences"][0]["name"] in CONTAINER_OPERANDS
    )


def _sandbox_daemonsets(dest: Path) -> None:
    sets = _load(dest, "daemonsets")
    template = next(d for d in sets["items"] if d["metadata"]["name"] == "nvidia-device-plugin-daemonset")
    for ds, container, image, label in (VFIO_MANAGER, SANDBOX_PLUGIN):
        made = copy.deepcopy(template)
        made["metadata"]["name"] = ds
        made["metadata"]["labels"] = {"app": ds}
        made["spec"]["selector"] = {"matchLabels": {label[0]: label[1]}}
        spec = made["spec"]["template"]
        spec["metadata"]["labels"] = {label[0]: label[1]}
        spec["spec"]["containers"] = [{"name": container, "image": image}]
        state = ds.removeprefix("nvidia-").removesuffix("-daemonset")
        spec["spec"]["nodeSelector"] = {f"nvidia.com/gpu.deploy.{state}": "true"}
        made["status"] = {"desiredNumberScheduled": 1, "currentNumberScheduled": 1, "numberReady": 1,
                          "numberAvailable": 1, "numberMisscheduled": 0}
        sets["items"].append(made)
    _save(dest, "daemonsets", sets)


def _vm_node_files(node_dir: Path, workload: str) -> None:
    """No NVIDIA driver on the host (the GPUs are vfio-pci's), the validator's sandbox markers."""
    for rel in ("cmd/nvidia-smi.txt", "cmd/nvidia-smi-q.xml", "files/proc/driver/nvidia/version",
                "files/etc/containerd/conf.d/99-nvidia.toml"):
        (node_dir / rel).unlink(missing_ok=True)
    validations = node_dir / "files" / "run" / "nvidia" / "validations"
    shutil.rmtree(validations, ignore_errors=True)
    validations.mkdir(parents=True)
    (validations / "workload-type").write_text(workload)
    ready = "vfio-pci-ready" if workload == "vm-passthrough" else "vgpu-devices-ready"
    (validations / ready).write_text("")
    metrics = node_dir / "metrics" / "dcgm-exporter.prom"
    metrics.unlink(missing_ok=True)


def _report(root: Path) -> NodeReport:
    return next(n for n in build_report(root, [NODE]).nodes if n.name == NODE)


def _bad(report: NodeReport) -> list[tuple[str, str, str]]:
    return [(c.component, c.status.value, c.summary) for c in report.components
            if c.status in (Status.FAILED, Status.DEGRADED)]


def test_vm_passthrough_node_without_container_stack_is_healthy(healthy: Path, tmp_path: Path) -> None:
    report = _report(vm_passthrough(healthy, tmp_path / "b"))
    assert [(rc.component, rc.cause) for rc in report.root_causes] == []
    assert _bad(report) == []


def _crash_looping(root: Path, name_prefix: str) -> None:
    """The operand's container keeps failing (vfio-manage bind exits with an error)."""
    pods = _load(root, "pods")
    pod = next(p for p in pods["items"] if p["metadata"]["name"].startswith(name_prefix))
    status = pod["status"]["containerStatuses"][0]
    status.update(ready=False, restartCount=14, state={"waiting": {
        "reason": "CrashLoopBackOff",
        "message": "back-off 5m0s restarting failed container=nvidia-vfio-manager"}},
        lastState={"terminated": {"reason": "Error", "exitCode": 1, "finishedAt": "2025-05-12T15:01:00Z"}})
    pod["status"]["conditions"] = [{"type": "Ready", "status": "False", "reason": "ContainersNotReady"}]
    _save(root, "pods", pods)


def test_vm_passthrough_node_judges_the_sandbox_operands(healthy: Path, tmp_path: Path) -> None:
    report = _report(vm_passthrough(healthy, tmp_path / "b"))
    status = {c.component: (c.status, c.summary) for c in report.components}
    assert status["vfio-manager"][0] == Status.OK and "vfio-pci" in status["vfio-manager"][1]
    plugin = status["sandbox-device-plugin"]
    assert plugin[0] == Status.OK and VM_RESOURCE in plugin[1]
    for component in ("driver", "container-toolkit", "device-plugin", "gfd", "dcgm-exporter", "validator"):
        assert status[component][0] == Status.NOT_DEPLOYED, (component, status[component])


def test_vm_label_alone_without_a_cluster_policy(healthy: Path, tmp_path: Path) -> None:
    """No ClusterPolicy in the source: the operator's workload label alone says VM node."""
    root = vm_passthrough(healthy, tmp_path / "b")
    (root / "cluster" / "clusterpolicies.json").write_text(json.dumps({"items": []}))
    report = _report(root)
    assert [(rc.component, rc.cause) for rc in report.root_causes] == []
    assert _bad(report) == []


def test_crash_looping_vfio_manager_fails_the_node_on_it(healthy: Path, tmp_path: Path) -> None:
    root = vm_passthrough(healthy, tmp_path / "b")
    _crash_looping(root, "nvidia-vfio-manager")
    report = _report(root)
    assert report.status == Status.FAILED
    assert [rc.component for rc in report.root_causes] == ["vfio-manager"]
    status = {c.component: c.status for c in report.components}
    assert status["vfio-manager"] == Status.FAILED
    for component in ("driver", "container-toolkit", "device-plugin"):
        assert status[component] == Status.NOT_DEPLOYED, component


def test_sandbox_plugin_advertising_nothing(healthy: Path, tmp_path: Path) -> None:
    root = vm_passthrough(healthy, tmp_path / "b")
    nodes = _load(root, "nodes")
    node = next(n for n in nodes["items"] if n["metadata"]["name"] == NODE)
    node["status"]["allocatable"][VM_RESOURCE] = "0"
    _save(root, "nodes", nodes)
    causes = [(rc.component, rc.cause) for rc in _report(root).root_causes]
    assert causes == [("sandbox-device-plugin", "sandbox_plugin_no_resources")]


def test_container_node_beside_sandbox_daemonsets_stays_healthy(healthy: Path, tmp_path: Path) -> None:
    """The other GPU node runs container workloads: the sandbox DaemonSets skip it."""
    root = vm_passthrough(healthy, tmp_path / "b")
    other = next(n for n in build_report(root, ["gpu-wk-02"]).nodes if n.name == "gpu-wk-02")
    assert other.root_causes == () or list(other.root_causes) == []
    assert _bad(other) == []
