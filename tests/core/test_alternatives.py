"""Other ways to hand out GPUs are judged by their own rules: a node running HAMi's,
Volcano's or GKE's plugin, or the DRA driver's ``gpus`` container, is not told NVIDIA's
device plugin is missing, and a node running none of them still is; each one's own
failure (nothing advertised, no ResourceSlice, a claim that cannot be prepared, a
ComputeDomain daemon not ready, a crashing controller) is its own root cause.

Bundles are the healthy simulated Falcon AI cluster with NVIDIA's device plugin taken off
and the other plugin's pods put on gpu-wk-01, shaped as their charts make them (names,
labels, containers, images: tests/fixtures/real/SOURCES.md and the catalog's comments).
"""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gpunode.cli import build_report
from gpunode.model import NodeReport, Report, Status
from gpunode.sim import build_bundle, load_scenario

NODE = "gpu-wk-01"
REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
PLUGIN_DS = "nvidia-device-plugin-daemonset"
BAD = (Status.FAILED, Status.DEGRADED)


@pytest.fixture(scope="module")
def falcon(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_bundle(load_scenario("falcon-ai"), tmp_path_factory.mktemp("falcon") / "bundle")


def _list(root: Path, name: str) -> dict[str, Any]:
    path = root / "cluster" / f"{name}.json"
    if not path.exists():
        return {"apiVersion": "v1", "kind": "List", "items": []}
    doc: dict[str, Any] = json.loads(path.read_text())
    return doc


def _save(root: Path, name: str, doc: dict[str, Any]) -> None:
    (root / "cluster" / f"{name}.json").write_text(json.dumps(doc))


def _edit(root: Path, name: str, change: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> None:
    doc = _list(root, name)
    doc["items"] = change(doc["items"])
    _save(root, name, doc)


def _without_nvidia_plugin(root: Path) -> None:
    """NVIDIA's device plugin is not deployed: no DaemonSet, no pods, not in the policy."""
    _edit(root, "pods", lambda items: [p for p in items if not p["metadata"]["name"].startswith(PLUGIN_DS)])
    _edit(root, "daemonsets", lambda items: [d for d in items if d["metadata"]["name"] != PLUGIN_DS])


def _plugin_pod(root: Path) -> dict[str, Any]:
    pods = _list(root, "pods")["items"]
    return next(p for p in pods
                if p["metadata"]["name"].startswith(PLUGIN_DS) and p["spec"]["nodeName"] == NODE)


def _pod_like(template: dict[str, Any], name: str, owner: str, *, labels: dict[str, str], namespace: str,
              containers: list[tuple[str, str]], owner_kind: str = "DaemonSet") -> dict[str, Any]:
    """A running, ready pod of ``owner`` on NODE with these containers (name, image)."""
    pod = copy.deepcopy(template)
    meta = pod["metadata"]
    meta.update(name=name, namespace=namespace, labels=labels, generateName=f"{owner}-")
    meta["ownerReferences"][0].update(kind=owner_kind, name=owner)
    first, status = pod["spec"]["containers"][0], pod["status"]["containerStatuses"][0]
    pod["spec"]["containers"] = [{**first, "name": n, "image": i} for n, i in containers]
    pod["spec"].pop("initContainers", None)
    pod["spec"].pop("runtimeClassName", None)
    pod["status"]["initContainerStatuses"] = []
    pod["status"]["containerStatuses"] = [{**status, "name": n, "image": i} for n, i in containers]
    return pod


def _add_pods(root: Path, *pods: dict[str, Any]) -> None:
    _edit(root, "pods", lambda items: [*items, *pods])


def _set_allocatable(root: Path, resources: dict[str, str | None]) -> None:
    def change(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for node in items:
            if node["metadata"]["name"] == NODE:
                for key, value in resources.items():
                    for field in ("allocatable", "capacity"):
                        if value is None:
                            node["status"][field].pop(key, None)
                        else:
                            node["status"][field][key] = value
        return items
    _edit(root, "nodes", change)


def _report(root: Path) -> Report:
    return build_report(root, None)


def _node(report: Report) -> NodeReport:
    return next(n for n in report.nodes if n.name == NODE)


def _status(node: NodeReport, component: str) -> tuple[Status, str]:
    found = next(c for c in node.components if c.component == component)
    return found.status, found.summary


def _roots(node: NodeReport) -> list[tuple[str, str]]:
    return [(r.component, r.cause) for r in node.root_causes]


@pytest.fixture
def bundle(falcon: Path, tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "b"
    shutil.copytree(falcon, root)
    yield root


# ---------------------------------------------------------------- replaced, or still missing


def test_without_any_plugin_the_nvidia_device_plugin_is_missing(bundle: Path) -> None:
    _without_nvidia_plugin(bundle)
    node = _node(_report(bundle))
    status, _ = _status(node, "device-plugin")
    assert status in BAD
    assert "device-plugin" in [c for c, _ in _roots(node)]


def _hami(template: dict[str, Any]) -> dict[str, Any]:
    # charts/hami/templates/device-plugin/daemonsetnvidia.yaml, release "hami"
    labels = {"app.kubernetes.io/component": "hami-device-plugin", "app.kubernetes.io/name": "hami",
              "app.kubernetes.io/instance": "hami", "hami.io/webhook": "ignore"}
    image = "docker.io/projecthami/hami:v2.6.1"
    return _pod_like(template, "hami-device-plugin-x7k2p", "hami-device-plugin", labels=labels,
                     namespace="kube-system", containers=[("device-plugin", image), ("vgpu-monitor", image)])


def test_a_node_running_hami_is_not_told_its_device_plugin_is_missing(bundle: Path) -> None:
    template = _plugin_pod(bundle)
    _without_nvidia_plugin(bundle)
    _add_pods(bundle, _hami(template))
    _set_allocatable(bundle, {"nvidia.com/gpu": "80"})  # 10 shares of each of the 8 GPUs
    report = _report(bundle)
    node = _node(report)
    status, summary = _status(node, "device-plugin")
    assert status == Status.NOT_DEPLOYED and "replaced by hami-device-plugin" in summary, summary
    status, summary = _status(node, "hami-device-plugin")
    assert status == Status.OK and summary.startswith("advertises nvidia.com/gpu=80"), summary
    assert node.status not in BAD, _roots(node)
    other = next(n for n in report.nodes if n.name != NODE)
    assert _status(other, "device-plugin")[0] in BAD  # the node without HAMi lacks a plugin


def test_hami_advertising_nothing_is_its_own_root_cause(bundle: Path) -> None:
    template = _plugin_pod(bundle)
    _without_nvidia_plugin(bundle)
    _add_pods(bundle, _hami(template))
    _set_allocatable(bundle, {"nvidia.com/gpu": "0"})
    node = _node(_report(bundle))
    assert ("hami-device-plugin", "hami_no_resources") in _roots(node)
    assert _status(node, "device-plugin")[0] == Status.NOT_DEPLOYED


def _hami_log(root: Path, text: str) -> None:
    path = root / "logs" / "kube-system" / "hami-device-plugin-x7k2p" / "device-plugin.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_hami_whose_log_ends_in_its_forks_failure_serves_nothing(bundle: Path) -> None:
    # Project-HAMi/HAMi#2860: HAMi 2.10 on GKE COS with devicePlugin.nvidiaDriverRoot unset; the
    # device-plugin container's NVML discovery ends in NVIDIA's plugin's own line (as in
    # NVIDIA/k8s-device-plugin#170), while the node still shows the shares it had before.
    template = _plugin_pod(bundle)
    _without_nvidia_plugin(bundle)
    _add_pods(bundle, _hami(template))
    _set_allocatable(bundle, {"nvidia.com/gpu": "80"})
    _hami_log(bundle, "Incompatible strategy detected auto\n")
    node = _node(_report(bundle))
    assert _roots(node)[0] == ("hami-device-plugin", "hami_no_resources"), _roots(node)


def test_hami_whose_log_ends_in_registration_stays_healthy(bundle: Path) -> None:
    # the same plugin that found its GPUs and registered with the kubelet: an earlier
    # error is not its last word, and the node advertises its shares
    template = _plugin_pod(bundle)
    _without_nvidia_plugin(bundle)
    _add_pods(bundle, _hami(template))
    _set_allocatable(bundle, {"nvidia.com/gpu": "80"})
    _hami_log(bundle, "Incompatible strategy detected auto\n"
                      "I0506 17:45:50.100000       1 server.go:175] Registered device plugin for "
                      "'nvidia.com/gpu' with Kubelet\n")
    node = _node(_report(bundle))
    status, summary = _status(node, "hami-device-plugin")
    assert status == Status.OK and summary.startswith("advertises nvidia.com/gpu=80"), summary
    assert node.status not in BAD, _roots(node)


def test_volcano_plugin_replaces_and_is_judged_by_its_resources(bundle: Path) -> None:
    template = _plugin_pod(bundle)
    _without_nvidia_plugin(bundle)
    # volcano-sh/devices volcano-device-plugin.yml
    pod = _pod_like(template, "volcano-device-plugin-4hbcz", "volcano-device-plugin",
                    labels={"name": "volcano-device-plugin"}, namespace="kube-system",
                    containers=[("volcano-device-plugin", "volcanosh/volcano-device-plugin:latest")])
    _add_pods(bundle, pod)
    _set_allocatable(bundle, {"nvidia.com/gpu": None, "volcano.sh/gpu-memory": "655360",
                              "volcano.sh/gpu-number": "8"})
    node = _node(_report(bundle))
    assert _status(node, "volcano-device-plugin")[0] == Status.OK
    assert "replaced by volcano-device-plugin" in _status(node, "device-plugin")[1]
    assert node.status not in BAD, _roots(node)
    _set_allocatable(bundle, {"volcano.sh/gpu-memory": "0", "volcano.sh/gpu-number": "0"})
    assert ("volcano-device-plugin", "volcano_no_resources") in _roots(_node(_report(bundle)))


#: Project-HAMi/HAMi#1429: the default scheduler's refusal of a pod asking HAMi's vGPU
#: memory and cores, which no node advertises (only HAMi's scheduler extender counts them).
_UNCOUNTED = ("0/2 nodes are available: 1 Insufficient nvidia.com/gpucores, 1 Insufficient "
              "nvidia.com/gpumem, 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }. "
              "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
              "1 Preemption is not helpful for scheduling..")


def _hami_cluster_with_pending_pod(root: Path, scheduler: str, said: str = _UNCOUNTED) -> Report:
    """HAMi's device plugin on NODE and its scheduler (Deployment) on another node; a pod asking
    nvidia.com/gpu, gpumem and gpucores waits, placed by ``scheduler``, which said ``said``."""
    template = _plugin_pod(root)
    _without_nvidia_plugin(root)
    scheduler_pod = _pod_like(template, "hami-scheduler-6d9f7c8b5-q2xkw", "hami-scheduler-6d9f7c8b5",
                              labels={"app.kubernetes.io/component": "hami-scheduler"},
                              namespace="kube-system",
                              containers=[("kube-scheduler", "registry.k8s.io/kube-scheduler:v1.29.4"),
                                          ("vgpu-scheduler-extender", "docker.io/projecthami/hami:v2.6.1")],
                              owner_kind="ReplicaSet")
    scheduler_pod["spec"]["nodeName"] = "mgmt-01"
    _add_pods(root, _hami(template), scheduler_pod)
    _set_allocatable(root, {"nvidia.com/gpu": "80"})
    limits = {"nvidia.com/gpu": "2", "nvidia.com/gpumem": "3000", "nvidia.com/gpucores": "30"}
    pending = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gpu-pod", "namespace": "default"},
               "spec": {"schedulerName": scheduler, "containers": [{
                   "name": "gpu-test", "image": "nvidia/cuda:11.0.3-base", "resources": {"limits": limits}}]},
               "status": {"phase": "Pending", "conditions": [
                   {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": said}]}}
    _add_pods(root, pending)
    collected = json.loads((root / "manifest.json").read_text())["collected_at"]
    _edit(root, "events", lambda items: [*items, {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "gpu-pod.18a", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "gpu-pod"},
        "reason": "FailedScheduling", "message": said, "type": "Warning", "count": 11,
        "source": {"component": scheduler}, "lastTimestamp": collected}])
    return _report(root)


def test_pod_asking_extender_counted_resources_left_to_the_default_scheduler_blames_the_extender(
        bundle: Path) -> None:
    report = _hami_cluster_with_pending_pod(bundle, "default-scheduler")
    roots = [(r.component, r.cause) for r in report.cluster.root_causes]
    assert ("hami-scheduler", "error_resource_exhausted") in roots, roots


def test_the_same_refusal_by_the_extenders_own_scheduler_is_contention(bundle: Path) -> None:
    # look-alike: HAMi's scheduler placed the pod and found no GPU with room: a full cluster
    report = _hami_cluster_with_pending_pod(bundle, "hami-scheduler")
    assert not any(r.component == "hami-scheduler" for r in report.cluster.root_causes)


def test_a_refusal_for_a_resource_the_node_advertises_is_not_the_extenders(bundle: Path) -> None:
    # look-alike: the default scheduler counted the plugin's own resource short (all shares held)
    said = "0/2 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/2 nodes are available."
    report = _hami_cluster_with_pending_pod(bundle, "default-scheduler", said)
    assert not any(r.component == "hami-scheduler" for r in report.cluster.root_causes)


#: Project-HAMi/HAMi#1839: HAMi's scheduler, after a passing health failure, kept the node's
#: handshake annotation at Deleted_ and refused every later GPU pod there as "node unregistered"
#: while HAMi's device plugin ran and the node advertised its GPUs.
_UNREGISTERED = ("0/1 nodes are available: 1 node unregistered. no new claims to deallocate, preemption: "
                 "0/1 nodes are available: 1 No preemption victims found for incoming pod.")


def test_a_served_node_the_extender_calls_unregistered_is_the_extenders_failure(bundle: Path) -> None:
    report = _hami_cluster_with_pending_pod(bundle, "hami-scheduler", _UNREGISTERED)
    roots = [(r.component, r.cause) for r in report.cluster.root_causes]
    assert ("hami-scheduler", "error_unclassified") in roots, roots


def test_unregistered_where_no_node_advertises_the_plugins_resources_is_not_the_extenders(
        bundle: Path) -> None:
    # look-alike: the plugin has registered nothing (none of its resources allocatable): its own
    # checks answer, not the scheduler's registry
    _hami_cluster_with_pending_pod(bundle, "hami-scheduler", _UNREGISTERED)
    _set_allocatable(bundle, {"nvidia.com/gpu": "0"})
    report = _report(bundle)
    assert not any(r.component == "hami-scheduler" for r in report.cluster.root_causes)


def test_the_words_under_another_scheduler_are_not_read_as_the_extenders(bundle: Path) -> None:
    # look-alike: a pod placed by the default scheduler, which HAMi's filter never judged
    report = _hami_cluster_with_pending_pod(bundle, "default-scheduler", _UNREGISTERED)
    assert not any(r.component == "hami-scheduler" for r in report.cluster.root_causes)


def _volcano(root: Path) -> None:
    template = _plugin_pod(root)
    _without_nvidia_plugin(root)
    # volcano-vgpu-device-plugin.yml (Project-HAMi/volcano-vgpu-device-plugin)
    _add_pods(root, _pod_like(template, "volcano-device-plugin-j4zbb", "volcano-device-plugin",
                              labels={"name": "volcano-device-plugin"}, namespace="kube-system",
                              containers=[("volcano-device-plugin",
                                           "docker.io/projecthami/volcano-vgpu-device-plugin:v1.9.0")]))


def test_vgpu_plugin_with_one_resource_at_zero_beside_its_siblings_is_exhausted(bundle: Path) -> None:
    # Project-HAMi/volcano-vgpu-device-plugin#18: eight A100s, 10 splits each; the plugin's
    # one-device-per-MB list of GPU memory is too large to register, the count and cores are not
    _volcano(bundle)
    _set_allocatable(bundle, {"nvidia.com/gpu": None, "volcano.sh/vgpu-memory": "0",
                              "volcano.sh/vgpu-number": "80", "volcano.sh/vgpu-cores": "800"})
    node = _node(_report(bundle))
    root = next(r for r in node.root_causes if r.component == "volcano-device-plugin")
    assert root.cause == "error_resource_exhausted", _roots(node)
    assert root.evidence[0].excerpt == "volcano.sh/vgpu-memory: 0"


def test_resource_left_at_zero_from_the_plugins_other_mode_is_not_a_failure(bundle: Path) -> None:
    # look-alike: a node switched from the GPU-share mode (volcano.sh/gpu-memory,
    # gpu-number) to vGPU; the kubelet keeps the old resources at 0, the vGPU ones count
    _volcano(bundle)
    _set_allocatable(bundle, {"nvidia.com/gpu": None, "volcano.sh/gpu-memory": "0",
                              "volcano.sh/gpu-number": "0", "volcano.sh/vgpu-memory": "81920",
                              "volcano.sh/vgpu-number": "80"})
    node = _node(_report(bundle))
    assert _status(node, "volcano-device-plugin")[0] == Status.OK
    assert node.status not in BAD, _roots(node)


def _crashing_volcano(root: Path, previous: str) -> None:
    """Volcano's plugin (volcano-sh/devices volcano-device-plugin.yml) crash-looping on NODE
    with ``previous`` as its last run's log; the node advertises none of volcano.sh/*."""
    template = _plugin_pod(root)
    _without_nvidia_plugin(root)
    pod = _pod_like(template, "volcano-device-plugin-8pbh5", "volcano-device-plugin",
                    labels={"name": "volcano-device-plugin"}, namespace="kube-system",
                    containers=[("volcano-device-plugin", "volcanosh/volcano-device-plugin:latest")])
    status = pod["status"]["containerStatuses"][0]
    status.update(ready=False, restartCount=5, state={"waiting": {
        "reason": "CrashLoopBackOff",
        "message": "back-off 2m40s restarting failed container=volcano-device-plugin"}},
        lastState={"terminated": {"exitCode": 255, "reason": "Error",
                                  "startedAt": "2026-12-06T05:10:02Z", "finishedAt": "2026-12-06T05:10:02Z"}})
    _add_pods(root, pod)
    _set_allocatable(root, {"nvidia.com/gpu": None})
    folder = root / "logs" / "kube-system" / "volcano-device-plugin-8pbh5"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "volcano-device-plugin.previous.log").write_text(previous)


#: volcano-sh/volcano#3160: the plugin (a fork of NVIDIA's) without NVML in its container.
_NVML_MISSING = (
    "I1030 05:12:02.805254       1 main.go:77] Loading NVML\n"
    "I1030 05:12:02.805419       1 main.go:79] Failed to initialize NVML: could not load NVML library.\n"
    "I1030 05:12:02.805428       1 main.go:80] If this is a GPU node, did you set the docker default "
    "runtime to `nvidia`?\n"
    "I1030 05:12:02.805431       1 main.go:81] You can check the prerequisites at: "
    "https://github.com/NVIDIA/k8s-device-plugin#prerequisites\n"
    "F1030 05:12:02.805498       1 main.go:44] failed to initialize NVML\n")


def test_crash_looping_fork_ending_on_its_parents_nvml_failure_names_that_line(bundle: Path) -> None:
    # issue 20: "advertises nothing" is a state, never the whole answer while the plugin's own
    # log says why; its last run ended on NVML not loading, the device class of that line
    _crashing_volcano(bundle, _NVML_MISSING)
    node = _node(_report(bundle))
    assert _roots(node)[0] == ("volcano-device-plugin", "error_device"), _roots(node)


def test_crash_looping_fork_ending_on_another_error_keeps_that_errors_class(bundle: Path) -> None:
    # look-alike: an NVML failure long before, then a run that ends on an error of its own
    # (the kubelet's socket): the closing lines name no failure of NVIDIA's plugin
    _crashing_volcano(bundle, _NVML_MISSING.replace("F1030", "I1030") + "".join(
        f"I1030 05:12:0{i}.000000       1 server.go:9] Starting to serve on /var/lib/kubelet/"
        "device-plugins/volcano.sock\n" for i in range(3, 6)) + (
        "F1030 05:12:06.000000       1 main.go:44] failed to register with kubelet: rpc error: "
        "code = Unavailable desc = connection error: dial unix /var/lib/kubelet/device-plugins/"
        "kubelet.sock: connect: connection refused\n"))
    roots = _roots(_node(_report(bundle)))
    assert roots[0][0] == "volcano-device-plugin" and roots[0][1] != "volcano_no_resources", roots


def test_gke_plugin_replaces_the_nvidia_device_plugin(bundle: Path) -> None:
    template = _plugin_pod(bundle)
    _without_nvidia_plugin(bundle)
    # container-engine-accelerators cmd/nvidia_gpu/device-plugin.yaml, as GKE names its DaemonSets
    image = ("gcr.io/gke-release/nvidia-gpu-device-plugin"
             "@sha256:d6cb575b0d8a436066a0d3a783bbaf84697e0d5a68857edfe5fd5d1183133c7d")
    pod = _pod_like(template, "nvidia-gpu-device-plugin-small-cos-9xq2w",
                    "nvidia-gpu-device-plugin-small-cos",
                    labels={"k8s-app": "nvidia-gpu-device-plugin"}, namespace="kube-system",
                    containers=[("nvidia-gpu-device-plugin", image)])
    _add_pods(bundle, pod)
    node = _node(_report(bundle))
    status, summary = _status(node, "gke-device-plugin")
    assert status == Status.OK and summary.startswith("advertises nvidia.com/gpu=8"), summary
    assert _status(node, "device-plugin")[0] == Status.NOT_DEPLOYED


# ---------------------------------------------------------------- the DRA driver

DRA_IMAGE = "nvcr.io/nvidia/k8s-dra-driver-gpu:v25.12.0"
DRA_NS = "nvidia-dra-driver-gpu"


def _dra(template: dict[str, Any], containers: tuple[str, ...] = ("compute-domains", "gpus"),
         ) -> dict[str, Any]:
    # deployments/helm/nvidia-dra-driver-gpu/templates/kubeletplugin.yaml, chart defaults
    labels = {"app.kubernetes.io/name": "nvidia-dra-driver-gpu",
              "app.kubernetes.io/instance": "nvidia-dra-driver-gpu",
              "nvidia-dra-driver-gpu-component": "kubelet-plugin"}
    return _pod_like(template, "nvidia-dra-driver-gpu-kubelet-plugin-qbfsj",
                     "nvidia-dra-driver-gpu-kubelet-plugin", labels=labels, namespace=DRA_NS,
                     containers=[(c, DRA_IMAGE) for c in containers])


def _slices(driver: str = "gpu.nvidia.com", devices: int = 8) -> dict[str, Any]:
    """A ResourceSlice of the node, in the shape of tests/fixtures/real/dra/ (resource.k8s.io/v1)."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": f"{NODE}-{driver}-jfrc8"},
            "spec": {"driver": driver, "nodeName": NODE, "pool": {"generation": 1, "name": NODE,
                                                                  "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}", "attributes": {"type": {"string": "gpu"}}}
                                 for i in range(devices)]}}


def test_dra_gpus_container_replaces_the_device_plugin_and_publishes_slices(bundle: Path) -> None:
    template = _plugin_pod(bundle)
    _without_nvidia_plugin(bundle)
    _add_pods(bundle, _dra(template))
    _set_allocatable(bundle, {"nvidia.com/gpu": None})
    _save(bundle, "resourceslices", {"apiVersion": "v1", "kind": "List",
                                     "items": [_slices(), _slices("compute-domain.nvidia.com", 2)]})
    node = _node(_report(bundle))
    assert "replaced by dra-kubelet-plugin" in _status(node, "device-plugin")[1]
    status, summary = _status(node, "dra-kubelet-plugin")
    assert status == Status.OK, summary
    assert node.status not in BAD, _roots(node)


def test_dra_without_resourceslices_for_the_node_is_its_own_root_cause(bundle: Path) -> None:
    template = _plugin_pod(bundle)
    _without_nvidia_plugin(bundle)
    _add_pods(bundle, _dra(template, ("gpus",)))
    _save(bundle, "resourceslices", {"apiVersion": "v1", "kind": "List", "items": []})
    node = _node(_report(bundle))
    assert ("dra-kubelet-plugin", "dra_no_resourceslices") in _roots(node)


def test_dra_slices_not_collected_are_unknown_not_failed(bundle: Path) -> None:
    template = _plugin_pod(bundle)
    _without_nvidia_plugin(bundle)
    _add_pods(bundle, _dra(template, ("gpus",)))
    node = _node(_report(bundle))  # no cluster/resourceslices.json: an older collector
    assert _status(node, "dra-kubelet-plugin")[0] not in BAD


def test_compute_domains_alone_do_not_replace_the_device_plugin(bundle: Path) -> None:
    """The DRA driver deployed for ComputeDomains only (resources.gpus.enabled=false)
    allocates no GPU: a node without NVIDIA's device plugin still lacks one."""
    template = _plugin_pod(bundle)
    _without_nvidia_plugin(bundle)
    _add_pods(bundle, _dra(template, ("compute-domains",)))
    node = _node(_report(bundle))
    assert _status(node, "device-plugin")[0] in BAD


def test_failed_prepare_of_a_claim_blames_the_dra_driver(bundle: Path) -> None:
    template = _plugin_pod(bundle)
    _without_nvidia_plugin(bundle)
    _add_pods(bundle, _dra(template, ("gpus",)))
    _save(bundle, "resourceslices", {"apiVersion": "v1", "kind": "List", "items": [_slices()]})
    workload = _pod_like(template, "dra-gpu-example-798fccd4d-sfl2p", "dra-gpu-example-798fccd4d",
                         labels={"app": "x"}, namespace="gpu-test1", containers=[("ctr", "ubuntu:22.04")],
                         owner_kind="ReplicaSet")
    workload["spec"]["resourceClaims"] = [{"name": "single-gpu", "resourceClaimTemplateName": "gpu-claim"}]
    workload["status"].update(phase="Pending", conditions=[])
    workload["status"]["containerStatuses"] = [{"name": "ctr", "image": "ubuntu:22.04", "ready": False,
                                                "restartCount": 0,
                                                "state": {"waiting": {"reason": "ContainerCreating"}}}]
    _add_pods(bundle, workload)
    message = ("Failed to prepare dynamic resources: NodePrepareResources failed for claim "
               "gpu-test1/dra-gpu-example-798fccd4d-sfl2p-single-gpu-d2jzk: "
               "error preparing devices for claim "
               "3d7f: prepare devices failed: error applying GPU config: unknown GPU sharing strategy")
    event = {"apiVersion": "v1", "kind": "Event", "type": "Warning",
             "reason": "FailedPrepareDynamicResources",
             "message": message, "count": 4, "metadata": {"name": "dra.1", "namespace": "gpu-test1"},
             "involvedObject": {"kind": "Pod", "name": workload["metadata"]["name"],
                                "namespace": "gpu-test1"},
             "lastTimestamp": "2025-05-12T15:00:00Z", "firstTimestamp": "2025-05-12T14:50:00Z"}
    _edit(bundle, "events", lambda items: [*items, event])
    report = _report(bundle)
    assert ("dra-kubelet-plugin", "dra_prepare_failed") in _roots(_node(report))
    assert [w.name for w in report.gpu_workloads] == [workload["metadata"]["name"]]


def test_compute_domain_not_ready_on_the_node(bundle: Path) -> None:
    template = _plugin_pod(bundle)
    daemon = _pod_like(template, "imex-domain-5tn8v-b2xkq", "imex-domain-5tn8v",
                       labels={"resource.nvidia.com/computeDomain": "0b5c1a1e-2d7f-4a39-9f0e-7c0e2f9d4c11"},
                       namespace=DRA_NS, containers=[("compute-domain-daemon", DRA_IMAGE)])
    _add_pods(bundle, _dra(template, ("compute-domains",)), daemon)
    domain = {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomain",
              "metadata": {"name": "imex-domain", "namespace": "default"},
              "spec": {"numNodes": 2, "channel": {"resourceClaimTemplate": {"name": "imex-channel-0"}}},
              "status": {"status": "NotReady", "nodes": [
                  {"name": NODE, "cliqueID": "9277d399-0674-44a9-b64e-d85bb19ce2b0.32766",
                   "ipAddress": "10.1.3.2",
                   "status": "NotReady"}]}}
    _save(bundle, "computedomains", {"apiVersion": "v1", "kind": "List", "items": [domain]})
    assert ("compute-domain-daemon", "compute_domain_not_ready") in _roots(_node(_report(bundle)))


def test_crashing_dra_controller_is_a_cluster_root_cause(bundle: Path) -> None:
    template = _plugin_pod(bundle)
    controller = _pod_like(template, "nvidia-dra-driver-gpu-controller-76864c66cb-dz9hc",
                           "nvidia-dra-driver-gpu-controller-76864c66cb",
                           labels={"nvidia-dra-driver-gpu-component": "controller"}, namespace=DRA_NS,
                           containers=[("compute-domain", DRA_IMAGE)], owner_kind="ReplicaSet")
    status = controller["status"]["containerStatuses"][0]
    status.update(ready=False, restartCount=14,
                  state={"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s"}},
                  lastState={"terminated": {"exitCode": 1, "reason": "Error",
                                            "finishedAt": "2025-05-12T15:00:00Z"}})
    _add_pods(bundle, controller)
    report = _report(bundle)
    assert "dra-controller" in [r.component for r in report.cluster.root_causes]


def test_resourceslices_and_compute_domains_are_collected_live(bundle: Path, tmp_path: Path) -> None:
    """collect lists resource.k8s.io's ResourceSlices (the version the server serves) and the
    DRA driver's ComputeDomains, keeping what the checks read: the live report is the offline one."""
    from gpunode.apiserver import serve_bundle
    from gpunode.collect import collect_bundle

    template = _plugin_pod(bundle)
    _without_nvidia_plugin(bundle)
    _add_pods(bundle, _dra(template, ("gpus",)))
    _save(bundle, "resourceslices", {"apiVersion": "v1", "kind": "List", "items": [_slices(devices=0)]})
    with serve_bundle(bundle) as server:
        result = collect_bundle(tmp_path / "live", kubeconfig=server.kubeconfig_path, quiet=True)
    collected = json.loads((result.path / "cluster" / "resourceslices.json").read_text())["items"]
    assert [s["spec"]["nodeName"] for s in collected] == [NODE]
    assert "attributes" not in json.dumps(collected)  # not read, not collected
    assert ("dra-kubelet-plugin", "dra_no_resourceslices") in _roots(_node(_report(result.path)))
