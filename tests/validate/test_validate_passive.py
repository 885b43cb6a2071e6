"""Passive checks on the healthy Falcon AI bundle and on realistic breakages of it.

Each test changes what a real cluster would show (kubectl JSON, node files,
scrapes) and asserts the failing category and check by name.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from vhelpers import Json, edit_items, item, result, validate

from gpunode.validation import ClusterVerdict, Verdict

GPU_NODE, OTHER_GPU_NODE = "gpu-wk-02", "gpu-wk-01"
UNSCHEDULABLE = (
    "0/5 nodes are available: 2 Insufficient nvidia.com/gpu, 3 node(s) had untolerated taint "
    "{node-role.kubernetes.io/control-plane: }. preemption: 0/5 nodes are available: "
    "2 No preemption victims found for incoming pod, 3 Preemption is not helpful for scheduling."
)


def test_healthy_falcon_is_ready_with_every_check_passing(falcon_healthy: Path) -> None:
    report = validate(falcon_healthy)
    assert report.verdict == ClusterVerdict.READY
    assert {c.name for c in report.categories} == {
        "infrastructure",
        "gpu-health",
        "network",
        "storage",
        "scheduling",
        "observability",
    }
    not_passing = {c.id: c.verdict for c in report.checks() if c.verdict != Verdict.PASS}
    # only the live-endpoint probe cannot apply to a simulated bundle
    assert not_passing == {"infra.api-reachable": Verdict.SKIP}
    assert all(cat.score == 1.0 for cat in report.categories)


def test_cordoned_gpu_node_fails_scheduling(falcon: Path) -> None:
    def cordon(nodes: list[Json]) -> None:
        node = item(nodes, GPU_NODE)
        node["spec"]["unschedulable"] = True
        node["spec"]["taints"] = [{"effect": "NoSchedule", "key": "node.kubernetes.io/unschedulable"}]

    edit_items(falcon, "nodes", cordon)
    report = validate(falcon)
    check = result(report, "sched.gpu-nodes-schedulable")
    assert (check.category, check.verdict, check.nodes) == ("scheduling", Verdict.FAIL, (GPU_NODE,))
    assert report.verdict == ClusterVerdict.NOT_READY
    assert (
        result(report, "sched.gpu-taints-tolerated").verdict == Verdict.PASS
    )  # cordon taint is not a GPU taint


def test_pvc_stuck_pending_fails_storage(falcon: Path) -> None:
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "datasets", "namespace": "ml", "creationTimestamp": "2025-05-19T08:00:00Z"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "2Ti"}},
            "storageClassName": "fast-nvme",
        },
        "status": {"phase": "Pending"},
    }
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "datasets.17f0c0e3a1b2c3d4", "namespace": "ml"},
        "involvedObject": {"kind": "PersistentVolumeClaim", "name": "datasets", "namespace": "ml"},
        "reason": "ProvisioningFailed",
        "message": 'storageclass.storage.k8s.io "fast-nvme" not found',
        "type": "Warning",
        "count": 62,
        "source": {"component": "persistentvolume-controller"},
    }
    edit_items(falcon, "persistentvolumeclaims", lambda items: [*items, claim])
    edit_items(falcon, "events", lambda items: [*items, event])
    check = result(validate(falcon), "storage.pvc-bound")
    assert (check.category, check.verdict) == ("storage", Verdict.FAIL)
    assert "fast-nvme" in check.evidence[0].excerpt and "ml/datasets" in check.summary


def test_pending_claim_waiting_for_its_first_consumer_is_not_stuck(falcon: Path) -> None:
    def late_binding(classes: list[Json]) -> None:
        classes[0]["volumeBindingMode"] = "WaitForFirstConsumer"

    claim = {
        "metadata": {"name": "scratch", "namespace": "ml"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Ti"}}},
        "status": {"phase": "Pending"},
    }
    edit_items(falcon, "storageclasses", late_binding)
    edit_items(falcon, "persistentvolumeclaims", lambda items: [*items, claim])
    assert result(validate(falcon), "storage.pvc-bound").verdict == Verdict.PASS


def test_no_default_storage_class_fails(falcon: Path) -> None:
    def undefault(classes: list[Json]) -> None:
        for sc in classes:
            sc["metadata"]["annotations"].pop("storageclass.kubernetes.io/is-default-class", None)

    edit_items(falcon, "storageclasses", undefault)
    check = result(validate(falcon), "storage.default-class")
    assert (check.category, check.verdict) == ("storage", Verdict.FAIL)
    assert check.fix.startswith("kubectl annotate storageclass")


def test_single_control_plane_node_warns(falcon: Path) -> None:
    edit_items(
        falcon,
        "nodes",
        lambda nodes: [n for n in nodes if n["metadata"]["name"] not in ("mgmt-02", "mgmt-03")],
    )
    report = validate(falcon)
    check = result(report, "infra.control-plane-ha")
    assert (check.category, check.verdict) == ("infrastructure", Verdict.WARN)
    assert "only 1 control-plane node" in check.summary
    assert report.verdict == ClusterVerdict.READY_WITH_WARNINGS


def test_untainted_control_plane_warns(falcon: Path) -> None:
    def untaint(nodes: list[Json]) -> None:
        item(nodes, "mgmt-03")["spec"].pop("taints")

    edit_items(falcon, "nodes", untaint)
    check = result(validate(falcon), "infra.control-plane-tainted")
    assert (check.verdict, check.nodes) == (Verdict.WARN, ("mgmt-03",))


def test_kernel_versions_differing_across_gpu_nodes_warn(falcon: Path) -> None:
    def upgrade(nodes: list[Json]) -> None:
        node = item(nodes, GPU_NODE)
        node["status"]["nodeInfo"]["kernelVersion"] = "5.15.0-134-generic"

    edit_items(falcon, "nodes", upgrade)
    check = result(validate(falcon), "infra.kernel-consistent")
    assert (check.category, check.verdict) == ("infrastructure", Verdict.WARN)
    assert "5.15.0-134-generic" in check.summary and check.nodes


def test_mixed_container_runtimes_fail(falcon: Path) -> None:
    def crio(nodes: list[Json]) -> None:
        item(nodes, GPU_NODE)["status"]["nodeInfo"]["containerRuntimeVersion"] = "cri-o://1.31.3"

    edit_items(falcon, "nodes", crio)
    assert result(validate(falcon), "infra.runtime-consistent").verdict == Verdict.FAIL


def test_kubelet_too_old_or_newer_than_api_server_fails(falcon: Path) -> None:
    def skew(nodes: list[Json]) -> None:
        item(nodes, GPU_NODE)["status"]["nodeInfo"]["kubeletVersion"] = "v1.27.9"
        item(nodes, OTHER_GPU_NODE)["status"]["nodeInfo"]["kubeletVersion"] = "v1.32.1"

    edit_items(falcon, "nodes", skew)
    check = result(validate(falcon), "infra.kubelet-skew")
    assert check.verdict == Verdict.FAIL
    assert set(check.nodes) == {GPU_NODE, OTHER_GPU_NODE}


def test_kubelet_three_minors_behind_is_within_skew(falcon: Path) -> None:
    edit_items(
        falcon,
        "nodes",
        lambda nodes: item(nodes, GPU_NODE)["status"]["nodeInfo"].update(kubeletVersion="v1.28.15"),
    )
    assert result(validate(falcon), "infra.kubelet-skew").verdict == Verdict.PASS


def test_api_endpoint_on_one_control_plane_node_warns(falcon: Path) -> None:
    manifest = json.loads((falcon / "manifest.json").read_text())
    manifest["api_server"] = "https://172.16.1.11:6443"  # mgmt-02's InternalIP
    (falcon / "manifest.json").write_text(json.dumps(manifest))
    check = result(validate(falcon), "infra.api-load-balanced")
    assert check.verdict == Verdict.WARN and "mgmt-02" in check.summary


def test_not_ready_and_pressured_nodes_fail(falcon: Path) -> None:
    def sick(nodes: list[Json]) -> None:
        conditions = {c["type"]: c for c in item(nodes, GPU_NODE)["status"]["conditions"]}
        conditions["DiskPressure"].update(
            status="True", reason="KubeletHasDiskPressure", message="kubelet has disk pressure"
        )
        conditions["Ready"].update(status="False", reason="KubeletNotReady", message="PLEG is not healthy")

    edit_items(falcon, "nodes", sick)
    report = validate(falcon)
    assert result(report, "infra.nodes-ready").nodes == (GPU_NODE,)
    pressure = result(report, "infra.node-pressure")
    assert pressure.verdict == Verdict.FAIL and "disk pressure" in pressure.evidence[0].excerpt


def _gpu_pod(name: str, node: str | None, gpus: int, phase: str) -> Json:
    status: Json = {"phase": phase}
    if node is None:
        status["conditions"] = [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": UNSCHEDULABLE,
            }
        ]
    container = {
        "name": "trainer",
        "image": "nvcr.io/nvidia/pytorch:25.01-py3",
        "resources": {"limits": {"nvidia.com/gpu": str(gpus)}},
    }
    spec: Json = {"containers": [container]}
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "research"},
        "spec": spec,
        "status": status,
    }


def _without_workloads(pods: list[Json]) -> list[Json]:
    return [p for p in pods if p["metadata"]["namespace"] != "ml"]


def test_fragmentation_fails_and_the_pending_pod_is_explained(falcon: Path) -> None:
    pods = [
        _gpu_pod("sweep-a", OTHER_GPU_NODE, 6, "Running"),
        _gpu_pod("sweep-b", GPU_NODE, 5, "Running"),
        _gpu_pod("finetune-0", None, 4, "Pending"),
    ]
    edit_items(falcon, "pods", lambda items: [*_without_workloads(items), *pods])
    report = validate(falcon)
    frag = result(report, "sched.gpu-fragmentation")
    assert (frag.category, frag.verdict) == ("scheduling", Verdict.FAIL)
    assert "fragmented" in frag.evidence[0].excerpt and "research/finetune-0" in frag.evidence[0].source
    pending = result(report, "sched.gpu-pending-explained")
    assert pending.verdict == Verdict.WARN
    assert "fragmented: 5 GPUs free across nodes, none has 4" in pending.summary


def test_full_cluster_pending_pod_is_explained_not_fragmented(falcon: Path) -> None:
    pods = [
        _gpu_pod("big-a", OTHER_GPU_NODE, 8, "Running"),
        _gpu_pod("big-b", GPU_NODE, 8, "Running"),
        _gpu_pod("queued", None, 2, "Pending"),
    ]
    edit_items(falcon, "pods", lambda items: [*_without_workloads(items), *pods])
    report = validate(falcon)
    assert result(report, "sched.gpu-fragmentation").verdict == Verdict.PASS
    assert (
        "cluster full: all 16 allocatable GPUs in use"
        in result(report, "sched.gpu-pending-explained").summary
    )


def test_pod_asking_more_gpus_than_any_node_has_fails(falcon: Path) -> None:
    edit_items(
        falcon, "pods", lambda items: [*_without_workloads(items), _gpu_pod("huge", None, 16, "Pending")]
    )
    check = result(validate(falcon), "sched.gpu-pending-explained")
    assert check.verdict == Verdict.FAIL and "largest schedulable node has 8" in check.summary


def test_gpu_taint_not_tolerated_by_a_stack_daemonset_fails(falcon: Path) -> None:
    def taint(nodes: list[Json]) -> None:
        item(nodes, GPU_NODE)["spec"]["taints"] = [
            {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
        ]

    def intolerant(sets: list[Json]) -> None:
        item(sets, "nvidia-dcgm-exporter")["spec"]["template"]["spec"]["tolerations"] = []

    edit_items(falcon, "nodes", taint)
    edit_items(falcon, "daemonsets", intolerant)
    check = result(validate(falcon), "sched.gpu-taints-tolerated")
    assert check.verdict == Verdict.FAIL and check.nodes == (GPU_NODE,)
    assert "nvidia-dcgm-exporter" in check.evidence[0].source


def test_missing_nvidia_runtime_class_fails_when_nvidia_is_not_default(falcon: Path) -> None:
    edit_items(falcon, "runtimeclasses", lambda items: [])
    check = result(validate(falcon), "sched.runtimeclass")
    assert check.verdict == Verdict.FAIL and "default runtime runc" in check.summary


def test_expect_gpus_higher_than_present_fails(falcon_healthy: Path) -> None:
    check = result(validate(falcon_healthy, expect_gpus=16), "gpu.allocatable")
    assert check.verdict == Verdict.FAIL and "8 GPUs present, expected 16" in check.summary


def test_gfd_count_label_disagreeing_with_nvidia_smi_fails(falcon: Path) -> None:
    edit_items(
        falcon,
        "nodes",
        lambda nodes: item(nodes, GPU_NODE)["metadata"]["labels"].update({"nvidia.com/gpu.count": "4"}),
    )
    check = result(validate(falcon), "gpu.gfd-labels")
    assert check.verdict == Verdict.FAIL and "gpu.count=4 but 8 GPUs attached" in check.summary


def _edit_file(bundle: Path, rel: str, pattern: str, replacement: str, count: int = 1) -> None:
    path = bundle / rel
    text, done = re.subn(pattern, replacement, path.read_text(), count=count)
    assert done, f"{pattern!r} not found in {rel}"
    path.write_text(text)


def test_gpu_over_its_slowdown_temperature_fails(falcon: Path) -> None:
    xml = f"nodes/{GPU_NODE}/cmd/nvidia-smi-q.xml"
    _edit_file(
        falcon,
        xml,
        r"<gpu_temp>\d+ C</gpu_temp>\s*<gpu_temp_tlimit>\d+ C",
        "<gpu_temp>91 C</gpu_temp>\n<gpu_temp_tlimit>-3 C",
    )
    check = result(validate(falcon), "gpu.temperature")
    assert check.verdict == Verdict.FAIL and check.nodes == (GPU_NODE,)
    assert "91 C" in check.evidence[0].excerpt


def test_driver_versions_differing_across_gpu_nodes_warn(falcon: Path) -> None:
    _edit_file(
        falcon,
        f"nodes/{GPU_NODE}/cmd/nvidia-smi-q.xml",
        r"<driver_version>[^<]+",
        "<driver_version>550.127.08",
    )
    check = result(validate(falcon), "gpu.driver-consistent")
    assert check.verdict == Verdict.WARN and "550.127.08 on gpu-wk-02" in check.summary


def test_rdma_port_down_fails_network(falcon: Path) -> None:
    prom = f"nodes/{GPU_NODE}/metrics/node-exporter.prom"
    _edit_file(
        falcon,
        prom,
        r'node_infiniband_state_id\{device="mlx5_1",port="1"\} 4',
        'node_infiniband_state_id{device="mlx5_1",port="1"} 1',
    )
    _edit_file(
        falcon,
        prom,
        r'node_infiniband_physical_state_id\{device="mlx5_1",port="1"\} 5',
        'node_infiniband_physical_state_id{device="mlx5_1",port="1"} 3',
    )
    check = result(validate(falcon), "network.rdma-ports")
    assert (check.category, check.verdict) == ("network", Verdict.FAIL)
    assert "mlx5_1/1" in check.summary


def test_rdma_port_trained_down_warns(falcon: Path) -> None:
    prom = f"nodes/{GPU_NODE}/metrics/node-exporter.prom"
    _edit_file(
        falcon,
        prom,
        r'(node_infiniband_rate_bytes_per_second\{device="mlx5_0",port="1"\}) \S+',
        r"\1 2.5e+10",
    )
    check = result(validate(falcon), "network.rdma-ports")
    assert check.verdict == Verdict.WARN and "below 400 Gb/s" in check.summary


def test_peermem_not_loaded_with_gpudirect_rdma_fails(falcon: Path) -> None:
    lsmod = falcon / f"nodes/{GPU_NODE}/cmd/lsmod.txt"
    lsmod.write_text(
        "".join(
            line
            for line in lsmod.read_text().splitlines(keepends=True)
            if not line.startswith("nvidia_peermem")
        )
    )
    check = result(validate(falcon), "network.peermem")
    assert check.verdict == Verdict.FAIL and check.nodes == (GPU_NODE,)


def test_crashlooping_cni_pod_on_a_gpu_node_fails(falcon: Path) -> None:
    def crash(pods: list[Json]) -> None:
        cni = next(
            p
            for p in pods
            if p["spec"].get("nodeName") == GPU_NODE
            and p["metadata"]["name"].startswith(("cilium-", "calico-node-"))
            and "operator" not in p["metadata"]["name"]
        )
        status = cni["status"]["containerStatuses"][0]
        status.update(
            ready=False,
            restartCount=9,
            state={
                "waiting": {
                    "reason": "CrashLoopBackOff",
                    "message": "back-off 5m0s restarting failed container",
                }
            },
        )

    edit_items(falcon, "pods", crash)
    check = result(validate(falcon), "network.cni-healthy")
    assert (check.verdict, check.nodes) == (Verdict.FAIL, (GPU_NODE,))


def test_no_servicemonitor_for_dcgm_fails_observability(falcon: Path) -> None:
    edit_items(
        falcon, "servicemonitors", lambda items: [m for m in items if "dcgm" not in m["metadata"]["name"]]
    )
    check = result(validate(falcon), "obs.dcgm-scrape-config")
    assert (check.category, check.verdict) == ("observability", Verdict.FAIL)


def test_node_exporter_missing_on_a_node_fails(falcon: Path) -> None:
    edit_items(
        falcon,
        "pods",
        lambda pods: [
            p
            for p in pods
            if not (p["spec"].get("nodeName") == "mgmt-01" and "node-exporter" in p["metadata"]["name"])
        ],
    )
    check = result(validate(falcon), "obs.node-exporter")
    assert check.verdict == Verdict.FAIL and check.nodes == ("mgmt-01",)


def test_dcgm_series_missing_for_some_gpus_fails(falcon: Path) -> None:
    prom = falcon / f"nodes/{GPU_NODE}/metrics/dcgm-exporter.prom"
    prom.write_text(
        "".join(line for line in prom.read_text().splitlines(keepends=True) if 'gpu="7"' not in line)
    )
    check = result(validate(falcon), "obs.dcgm-exporter")
    assert check.verdict == Verdict.FAIL and "for 7 GPUs, node has 8" in check.summary


@pytest.mark.parametrize(
    ("missing", "check_id"),
    [
        ("csinodes", "storage.csi-registered"),
        ("persistentvolumeclaims", "storage.pvc-bound"),
        ("nodes", "infra.nodes-ready"),
    ],
)
def test_missing_sections_are_unknown_never_pass(falcon: Path, missing: str, check_id: str) -> None:
    (falcon / "cluster" / f"{missing}.json").unlink()
    check = result(validate(falcon), check_id)
    assert check.verdict == Verdict.UNKNOWN and f"cluster/{missing}.json" in check.summary


def test_missing_node_observations_are_unknown(falcon: Path) -> None:
    (falcon / f"nodes/{GPU_NODE}/cmd/nvidia-smi-q.xml").unlink()
    report = validate(falcon)
    assert result(report, "gpu.temperature").verdict == Verdict.UNKNOWN
    assert result(report, "gpu.temperature").nodes == (GPU_NODE,)
    assert report.verdict != ClusterVerdict.READY


def test_rdma_ports_from_the_probes_sysfs_files_when_no_node_exporter(falcon: Path) -> None:
    prom = falcon / f"nodes/{GPU_NODE}/metrics/node-exporter.prom"
    prom.write_text(
        "".join(line for line in prom.read_text().splitlines(keepends=True) if "infiniband" not in line)
    )
    ports = falcon / f"nodes/{GPU_NODE}/files/sys/class/infiniband"
    for device, state, phys in (("mlx5_0", "4: ACTIVE", "5: LinkUp"), ("mlx5_1", "1: DOWN", "3: Disabled")):
        port = ports / device / "ports/1"
        port.mkdir(parents=True)
        (port / "state").write_text(state + "\n")
        (port / "phys_state").write_text(phys + "\n")
        (port / "rate").write_text("400 Gb/sec (4X NDR)\n")
        (port / "link_layer").write_text("Ethernet\n")
    check = result(validate(falcon), "network.rdma-ports")
    assert check.verdict == Verdict.FAIL and "1 of 2 ports not active: mlx5_1/1" in check.summary
    assert check.evidence[0].source.endswith("files/sys/class/infiniband")
