"""Why a GPU node got no pod of a stack DaemonSet (gpunode.checks.placement): its
nodeSelector or required node affinity wants a label that NFD, GFD or the GPU Operator
should have set. Then that labeller is the root cause, even when the NFD pod that failed
runs on another node, and the components kept away are blocked by it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from gpunode.bundle.kube import DaemonSet, TemplateSpec
from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.catalog import load_catalog
from gpunode.checks.placement import awaited, selects, setter, unmet
from gpunode.diagnose import diagnose
from gpunode.model import NodeReport, Report
from gpunode.sim import build_bundle, load_scenario

#: The required node affinity of NVIDIA's device plugin Helm chart (deployments/helm/
#: nvidia-device-plugin/values.yaml): NFD's NVIDIA PCI label, NFD's Tegra CPU vendor, or a
#: gpu.present forced by hand.
CHART_AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {
                            "key": "feature.node.kubernetes.io/pci-10de.present",
                            "operator": "In",
                            "values": ["true"],
                        }
                    ]
                },
                {
                    "matchExpressions": [
                        {
                            "key": "feature.node.kubernetes.io/cpu-model.vendor_id",
                            "operator": "In",
                            "values": ["NVIDIA"],
                        }
                    ]
                },
                {
                    "matchExpressions": [
                        {"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}
                    ]
                },
            ]
        }
    }
}


def _template(**spec: Any) -> TemplateSpec:
    return msgspec.convert(spec, TemplateSpec)


@pytest.mark.parametrize(
    ("labels", "selected"),
    [
        ({"feature.node.kubernetes.io/pci-10de.present": "true"}, True),
        ({"feature.node.kubernetes.io/cpu-model.vendor_id": "NVIDIA"}, True),  # Tegra
        ({"nvidia.com/gpu.present": "true"}, True),
        ({"nvidia.com/gpu.present": "false"}, False),
        ({}, False),
    ],
)
def test_the_chart_affinity_is_read_as_the_scheduler_reads_it(labels: dict[str, str], selected: bool) -> None:
    template = _template(affinity=CHART_AFFINITY)
    assert selects(template, labels) is selected
    assert bool(unmet(template, labels)) is not selected


def test_operators_of_a_selector_term() -> None:
    term = {
        "matchExpressions": [
            {"key": "a", "operator": "NotIn", "values": ["x"]},
            {"key": "b", "operator": "DoesNotExist"},
            {"key": "c", "operator": "Gt", "values": ["3"]},
            {"key": "d", "operator": "Exists"},
        ]
    }
    template = _template(
        affinity={
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
        }
    )
    assert selects(template, {"c": "4", "d": ""})
    assert [u.key for u in unmet(template, {"a": "x", "b": "1", "c": "3"})] == ["a", "b", "c", "d"]


def test_who_sets_a_label() -> None:
    catalog = load_catalog()
    nfd = {"feature.node.kubernetes.io/pci-10de.present": "true"}
    assert setter(catalog, "feature.node.kubernetes.io/pci-10de.present", {}) == "nfd"
    assert setter(catalog, "nvidia.com/gpu.product", {}) == "gfd"
    assert setter(catalog, "nvidia.com/gpu.deploy.device-plugin", nfd) == "gpu-operator"
    # the operator labels only nodes where NFD saw an NVIDIA PCI device
    assert setter(catalog, "nvidia.com/gpu.deploy.device-plugin", {}) == "nfd"
    assert setter(catalog, "accelerator", {}) is None


def test_a_label_set_to_another_value_is_a_choice_not_a_wait() -> None:
    ds = msgspec.convert(
        {
            "metadata": {"name": "nvidia-device-plugin-daemonset", "namespace": "gpu-operator"},
            "spec": {"template": {"spec": {"nodeSelector": {"nvidia.com/gpu.deploy.device-plugin": "true"}}}},
        },
        DaemonSet,
    )
    labels = {"feature.node.kubernetes.io/pci-10de.present": "true"}
    found = awaited(load_catalog(), [ds], labels)
    assert found is not None and found.setter == "gpu-operator"
    assert awaited(load_catalog(), [ds], {**labels, "nvidia.com/gpu.deploy.device-plugin": "false"}) is None


# --- a cluster where NFD never labelled one GPU node --------------------------------------------

#: Operand and network pods that select NFD-derived labels: none was placed on the node.
_SELECTED = ("gpu-feature-discovery-", "nvidia-", "mofed-", "rdma-shared-dp-")


def _items(root: Path, resource: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = json.loads((root / f"cluster/{resource}.json").read_text())["items"]
    return items


def _write(root: Path, resource: str, items: list[dict[str, Any]]) -> None:
    path = root / f"cluster/{resource}.json"
    data = json.loads(path.read_text())
    data["items"] = items
    path.write_text(json.dumps(data))


def _unlabelled(tmp_path: Path, *, standalone_plugin: bool = False) -> Path:
    """falcon-ai with gpu-wk-02 never labelled by NFD (nfd-master wrote nothing for it): no
    feature or nvidia.com labels, no GPU capacity, none of the DaemonSets that select
    those labels placed a pod there; its NFD worker runs. A p5 instance type says GPU."""
    root = build_bundle(load_scenario("falcon-ai"), tmp_path / "bundle")
    nodes = _items(root, "nodes")
    for node in nodes:
        if node["metadata"]["name"] == "gpu-wk-02":
            labels = node["metadata"]["labels"]
            node["metadata"]["labels"] = {
                k: v
                for k, v in labels.items()
                if not k.startswith(("feature.node.kubernetes.io/", "nvidia.com/"))
            }
            node["metadata"]["labels"]["node.kubernetes.io/instance-type"] = "p5.48xlarge"
            for field in ("capacity", "allocatable"):
                node["status"][field] = {
                    k: v
                    for k, v in node["status"][field].items()
                    if not k.startswith(("nvidia.com/", "rdma/"))
                }
    _write(root, "nodes", nodes)
    pods = [
        p
        for p in _items(root, "pods")
        if not (p["spec"].get("nodeName") == "gpu-wk-02" and p["metadata"]["name"].startswith(_SELECTED))
    ]
    _write(root, "pods", pods)
    if standalone_plugin:  # NVIDIA's Helm chart instead of the operator's operand
        sets = _items(root, "daemonsets")
        for ds in sets:
            if ds["metadata"]["name"] == "nvidia-device-plugin-daemonset":
                spec = ds["spec"]["template"]["spec"]
                spec.pop("nodeSelector", None)
                spec["affinity"] = CHART_AFFINITY
        _write(root, "daemonsets", sets)
    for sub in ("cmd", "metrics"):
        for path in sorted((root / "nodes/gpu-wk-02" / sub).glob("*")):
            path.unlink()
    return root


def _node(report: Report, name: str) -> NodeReport:
    return next(n for n in report.nodes if n.name == name)


@pytest.mark.parametrize("standalone_plugin", [False, True])
def test_nfd_that_never_labelled_a_gpu_node_is_its_root_cause(
    tmp_path: Path, standalone_plugin: bool
) -> None:
    report = diagnose(
        load_bundle(_unlabelled(tmp_path, standalone_plugin=standalone_plugin)), read_node_observations
    )
    node = _node(report, "gpu-wk-02")
    assert [(rc.component, rc.cause) for rc in node.root_causes] == [("nfd", "node_labels_missing")]
    rc = node.root_causes[0]
    assert any("nvidia-device-plugin-daemonset selects" in ev.excerpt for ev in rc.evidence)
    comps = {c.component: c for c in node.components}
    plugin = comps["device-plugin"]
    assert (plugin.status.value, plugin.cause, plugin.blocked_by) == (
        "failed",
        "selector_label_missing",
        ("nfd",),
    )
    assert comps["gfd"].blocked_by == ("nfd",)
    assert not _node(report, "gpu-wk-01").root_causes  # the labelled node is untouched


def test_nfd_master_failing_on_another_node_names_the_cause(tmp_path: Path) -> None:
    """nfd-master (on a control plane) crash-loops on an RBAC refusal: its own line is the
    cause of the GPU node's missing labels, and the operands there are blocked by NFD."""
    root = _unlabelled(tmp_path)
    pods = _items(root, "pods")
    master = next(p for p in pods if "node-feature-discovery-master" in p["metadata"]["name"])
    container = master["spec"]["containers"][0]["name"]
    master["status"]["containerStatuses"] = [
        {
            "name": container,
            "ready": False,
            "restartCount": 14,
            "image": master["spec"]["containers"][0]["image"],
            "imageID": "",
            "started": False,
            "state": {
                "waiting": {
                    "reason": "CrashLoopBackOff",
                    "message": "back-off 5m0s restarting failed container",
                }
            },
            "lastState": {
                "terminated": {"reason": "Error", "exitCode": 1, "finishedAt": "2025-05-20T09:10:00Z"}
            },
        }
    ]
    _write(root, "pods", pods)
    ns, name = master["metadata"]["namespace"], master["metadata"]["name"]
    log = root / "logs" / ns / name / f"{container}.previous.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(
        'E0520 09:09:58.123456       1 main.go:74] "error while running" err="failed to get node '
        '\\"gpu-wk-02\\": nodes \\"gpu-wk-02\\" is forbidden: User \\"system:serviceaccount:'
        'gpu-operator:node-feature-discovery\\" cannot get resource \\"nodes\\" in API group \\"\\" '
        'at the cluster scope"\n'
    )
    report = diagnose(load_bundle(root), read_node_observations)
    assert report.has_failures
    node = _node(report, "gpu-wk-02")
    comps = {c.component: c for c in node.components}
    assert "nfd" in comps["device-plugin"].blocked_by
    assert not any(rc.component == "device-plugin" for rc in node.root_causes)


def test_an_absent_feature_label_on_a_labelled_node_is_a_feature_it_lacks() -> None:
    """NFD labelled the node (CPU features) but no Mellanox NIC: the MOFED DaemonSet's
    pci-15b3 selector waits for nothing; a missing NVIDIA PCI label on a GPU node does."""
    catalog = load_catalog()
    labelled = {"feature.node.kubernetes.io/cpu-cpuid.AVX2": "true"}
    assert setter(catalog, "feature.node.kubernetes.io/pci-15b3.present", labelled) is None
    assert setter(catalog, "feature.node.kubernetes.io/pci-10de.present", labelled) == "nfd"
    assert setter(catalog, "feature.node.kubernetes.io/pci-15b3.present", {}) == "nfd"


def test_a_gpu_node_without_the_nics_or_mig_some_daemonsets_select_stays_healthy(tmp_path: Path) -> None:
    """No Mellanox NIC (no pci-15b3 label: MOFED and the RDMA plugin select none), and GPUs
    that are not MIG-capable (the operator sets no gpu.deploy.mig-manager): healthy."""
    root = build_bundle(load_scenario("falcon-ai"), tmp_path / "bundle")
    nodes = _items(root, "nodes")
    for node in nodes:
        if node["metadata"]["name"] == "gpu-wk-02":
            labels = node["metadata"]["labels"]
            for key in (
                "feature.node.kubernetes.io/pci-15b3.present",
                "nvidia.com/gpu.deploy.mig-manager",
                "nvidia.com/mig.capable",
            ):
                labels.pop(key, None)
            for field in ("capacity", "allocatable"):
                node["status"][field] = {
                    k: v for k, v in node["status"][field].items() if not k.startswith("rdma/")
                }
    _write(root, "nodes", nodes)
    gone = ("mofed-", "rdma-shared-dp-", "nvidia-mig-manager-")
    _write(
        root,
        "pods",
        [
            p
            for p in _items(root, "pods")
            if not (p["spec"].get("nodeName") == "gpu-wk-02" and p["metadata"]["name"].startswith(gone))
        ],
    )
    report = diagnose(load_bundle(root), read_node_observations)
    node = _node(report, "gpu-wk-02")
    assert not node.root_causes, [(rc.component, rc.cause) for rc in node.root_causes]
    assert not any(c.cause == "selector_label_missing" for c in node.components)


def test_the_mig_manager_s_state_label_is_owed_only_on_a_mig_capable_node() -> None:
    """The operator labels gpu.deploy.mig-manager only where GFD labelled a MIG-capable GPU
    (its hasMIGCapableGPU): elsewhere the label's absence is its choice
    (NVIDIA/gpu-operator#2610 is a node where it was owed and never came)."""
    catalog = load_catalog()
    nfd = {"feature.node.kubernetes.io/pci-10de.present": "true"}
    key = "nvidia.com/gpu.deploy.mig-manager"
    assert setter(catalog, key, nfd) is None
    assert setter(catalog, key, {**nfd, "nvidia.com/mig.capable": "false"}) is None
    assert setter(catalog, key, {**nfd, "nvidia.com/mig.capable": "true"}) == "gpu-operator"
    assert setter(catalog, key, {"nvidia.com/mig.capable": "true"}) == "nfd"


def test_a_mig_capable_node_the_operator_never_labelled_for_its_mig_manager_is_the_operator_s(
        tmp_path: Path) -> None:
    root = build_bundle(load_scenario("falcon-ai"), tmp_path / "bundle")
    nodes = _items(root, "nodes")
    for node in nodes:
        if node["metadata"]["name"] == "gpu-wk-02":
            node["metadata"]["labels"]["nvidia.com/mig.capable"] = "true"
            node["metadata"]["labels"].pop("nvidia.com/gpu.deploy.mig-manager", None)
    _write(root, "nodes", nodes)
    gone = "nvidia-mig-manager-"
    _write(root, "pods", [p for p in _items(root, "pods") if not (
        p["spec"].get("nodeName") == "gpu-wk-02" and p["metadata"]["name"].startswith(gone))])
    report = diagnose(load_bundle(root), read_node_observations)
    causes = [(rc.component, rc.cause) for rc in report.cluster.root_causes]
    assert ("gpu-operator", "node_labels_missing") in causes
