# ruff: noqa: E501  (real log lines are long)
"""Logs fetched live only where the lists (or the node's own scrape) already show the symptom
they explain: nfd-master's log while a GPU node lacks NFD's NVIDIA PCI label, a running DCGM
exporter's log when its scrape carries no per-GPU series. Through the test API server, on the
simulator's Falcon AI cluster; a healthy cluster pays for neither."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpunode.apiserver import serve_bundle
from gpunode.apiserver.httpserver import AuditRecord
from gpunode.cli import build_report
from gpunode.collect import CollectResult, collect_bundle
from gpunode.collect.plan import dcgm_scrape_short, nfd_label_gaps
from gpunode.collect.reports import LINKS_REASON
from gpunode.collect.slim import Meta, Node

sim = pytest.importorskip("gpunode.sim")
scenario_mod = pytest.importorskip("gpunode.sim.scenario")

NFD_PCI = "feature.node.kubernetes.io/pci-10de.present"
# nfd-master refusing a label outside its allowed namespaces (node-feature-discovery#424).
DENIED = "I0412 10:00:01.000000       1 nfd-master.go:410] Namespace 'example' is not allowed. Ignoring label 'example/nvidia-driver'\n"
# The exporter's pod mapper cannot reach the kubelet's pod-resources socket: no series at all.
POD_MAPPER = (
    'time="2024-08-02T12:45:40Z" level=error msg="Failed to collect metrics; err: failed to transform '
    "metrics for transform 'podMapper'; err: failure connecting to '/var/lib/kubelet/pod-resources/kubelet.sock'; "
    'err: context deadline exceeded"\n'
)


def _falcon(tmp_path: Path) -> Path:
    return sim.build_bundle(scenario_mod.load_scenario("falcon-ai"), tmp_path / "source")


def _pod(source: Path, part: str) -> dict:
    pods = json.loads((source / "cluster/pods.json").read_text())["items"]
    return next(p for p in pods if part in p["metadata"]["name"])


def _write_log(source: Path, pod: dict, container: str, text: str) -> None:
    path = source / "logs" / pod["metadata"]["namespace"] / pod["metadata"]["name"] / f"{container}.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _drop_label(source: Path, node: str, label: str) -> None:
    path = source / "cluster/nodes.json"
    doc = json.loads(path.read_text())
    for item in doc["items"]:
        if item["metadata"]["name"] == node:
            del item["metadata"]["labels"][label]
    path.write_text(json.dumps(doc))


def _collect(source: Path, out: Path, **kwargs: object) -> tuple[CollectResult, list[AuditRecord]]:
    with serve_bundle(source) as server:
        result = collect_bundle(out, kubeconfig=server.kubeconfig_path, quiet=True, **kwargs)  # type: ignore[arg-type]
        return result, server.audit()


def _logs_read(audit: list[AuditRecord]) -> set[str]:
    return {a.name for a in audit if a.resource == "pods/log"}


def _causes(bundle: Path, node: str) -> list[str]:
    report = build_report(bundle, None)
    return [rc.cause for n in report.nodes if n.name == node for rc in n.root_causes]


def test_nfd_master_log_is_read_when_a_gpu_node_lacks_the_nvidia_pci_label(tmp_path: Path) -> None:
    source = _falcon(tmp_path)
    master = _pod(source, "node-feature-discovery-master")
    _write_log(source, master, "master", DENIED)
    _drop_label(source, "gpu-wk-02", NFD_PCI)
    result, audit = _collect(source, tmp_path / "live")
    assert master["metadata"]["name"] in _logs_read(audit)
    assert not any("-gc-" in name or "-worker-" in name for name in _logs_read(audit))
    assert "nfd_label_namespace_denied" in _causes(result.path, "gpu-wk-02")


def test_a_fully_labelled_fleet_never_reads_nfd_master(tmp_path: Path) -> None:
    source = _falcon(tmp_path)
    master = _pod(source, "node-feature-discovery-master")
    _write_log(source, master, "master", DENIED)  # there to read, yet no symptom asks for it
    result, audit = _collect(source, tmp_path / "live")
    assert not any("node-feature-discovery" in name for name in _logs_read(audit))  # (operators' are read)
    # its 8-GPU, RDMA nodes are read for their links only (the lists cannot judge links)
    assert all(why.startswith(LINKS_REASON) for why in result.extras_reasons.values()), result.extras_reasons


def test_a_short_dcgm_scrape_brings_the_exporters_log(tmp_path: Path) -> None:
    source = _falcon(tmp_path)
    exporter = next(
        p for p in json.loads((source / "cluster/pods.json").read_text())["items"]
        if "dcgm-exporter" in p["metadata"]["name"] and p["spec"].get("nodeName") == "gpu-wk-01"
    )
    container = exporter["spec"]["containers"][0]["name"]
    _write_log(source, exporter, container, POD_MAPPER)
    (source / "nodes/gpu-wk-01/metrics/dcgm-exporter.prom").write_text(
        "# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).\n# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n"
    )
    result, audit = _collect(source, tmp_path / "live", extras="all-nodes")
    exporters = {name for name in _logs_read(audit) if "dcgm-exporter" in name}
    assert exporters == {exporter["metadata"]["name"]}  # gpu-wk-02's full scrape asks for none
    assert _causes(result.path, "gpu-wk-01")[:1] == ["dcgm_pod_resources_unreachable"]


def test_what_counts_as_the_symptom() -> None:
    assert dcgm_scrape_short(b"") and dcgm_scrape_short(b"# HELP DCGM_FI_DEV_GPU_TEMP t\n")
    assert dcgm_scrape_short(b'DCGM_FI_DEV_GPU_TEMP{Hostname="n"} 40\n')  # no GPU named
    assert not dcgm_scrape_short(b'DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-1"} 40\n')
    assert not dcgm_scrape_short(b'# no DCGM_FI_PROF_* series: the default counters\nDCGM_FI_DEV_SM_CLOCK{gpu="3"} 1980\n')


def test_which_gpu_nodes_lack_the_label() -> None:
    nodes = [
        Node(metadata=Meta(name="a", labels={NFD_PCI: "true"})),
        Node(metadata=Meta(name="b", labels={"feature.node.kubernetes.io/pci-0302_10de.present": "true"})),
        Node(metadata=Meta(name="c", labels={"nvidia.com/gpu.present": "true"})),
        Node(metadata=Meta(name="cpu", labels={})),
    ]
    assert nfd_label_gaps(nodes, ["a", "b", "c"]) == ["c"]  # "cpu" is no GPU node (not a candidate)
