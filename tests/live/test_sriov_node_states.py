"""The SR-IOV Network Operator's SriovNetworkNodeStates, collected and read back: listed where
the cluster serves sriovnetwork.openshift.io/v1 (not at all, and with no warning, where it does
not), keeping only the fields read (name, namespace, syncStatus, lastSyncError); a refused list
is said plainly and leaves the operator's verdict unknown; offline and live give the same
report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpunode.apiserver import Faults, serve_bundle
from gpunode.bundle.load import load_bundle
from gpunode.cli import build_report
from gpunode.collect import collect_bundle
from gpunode.model import Report

NODE = "gpu-wk-01"
STATES = "cluster/sriovnetworknodestates.json"
_ERROR = "write /sys/bus/pci/devices/0000:3b:00.1/sriov_numvfs: cannot allocate memory"


def _state(name: str, sync: str, error: str = "") -> dict[str, Any]:
    """A node state as the operator writes it: its spec and the host's interfaces beside the
    verdict (none of them read); an empty error left out (``omitempty``)."""
    return {
        "apiVersion": "sriovnetwork.openshift.io/v1", "kind": "SriovNetworkNodeState",
        "metadata": {"name": name, "namespace": "sriov-network-operator", "generation": 4,
                     "annotations": {"sriovnetwork.openshift.io/current-state": "Idle"},
                     "ownerReferences": [{"kind": "SriovOperatorConfig", "name": "default"}]},
        "spec": {"interfaces": [{"pciAddress": "0000:3b:00.1", "numVfs": 8, "name": "ens1f1"}]},
        "status": {"syncStatus": sync, **({"lastSyncError": error} if error else {}),
                   "interfaces": [{"pciAddress": "0000:3b:00.1", "mac": "0c:42:a1:00:00:01",
                                   "totalvfs": 0, "name": "ens1f1"}]},
    }


@pytest.fixture
def bundle(mini_bundle: Path, tmp_path: Path) -> Path:
    root = tmp_path / "src"
    shutil.copytree(mini_bundle, root)
    doc = {"apiVersion": "v1", "kind": "List",
           "items": [_state(NODE, "Failed", _ERROR), _state("gpu-wk-02", "Succeeded")]}
    (root / STATES).write_text(json.dumps(doc))
    return root


def _pairs(report: Report, node: str = NODE) -> list[tuple[str, str]]:
    found = next(n for n in report.nodes if n.name == node)
    return [(r.component, r.cause) for r in found.root_causes]


def test_states_are_collected_with_only_what_is_read(bundle: Path, tmp_path: Path) -> None:
    with serve_bundle(bundle) as server:
        result = collect_bundle(tmp_path / "live", kubeconfig=server.kubeconfig_path, quiet=True)
    items = json.loads((result.path / STATES).read_text())["items"]
    assert [(i["metadata"]["name"], i["metadata"]["namespace"], i["status"]) for i in items] == [
        (NODE, "sriov-network-operator", {"syncStatus": "Failed", "lastSyncError": _ERROR}),
        ("gpu-wk-02", "sriov-network-operator", {"syncStatus": "Succeeded"})]
    text = json.dumps(items)
    for unread in ("spec", "0c:42:a1", "current-state", "SriovOperatorConfig", "generation"):
        assert unread not in text
    assert not any("sriovnetworknodestates" in w for w in result.warnings)
    live, offline = build_report(result.path, None), build_report(bundle, None)
    assert ("rdma-links", "sriov_vfs_missing") in _pairs(live)
    assert _pairs(live) == _pairs(offline)
    assert _pairs(live, "gpu-wk-02") == _pairs(offline, "gpu-wk-02")  # its own fault, no SR-IOV one
    assert not {c for c, _ in _pairs(live, "gpu-wk-02")} & {"rdma-links", "sriov-config-daemon"}


def test_a_cluster_without_the_crd_is_not_asked_and_nothing_is_missing(mini_bundle: Path,
                                                                         tmp_path: Path) -> None:
    with serve_bundle(mini_bundle) as server:
        result = collect_bundle(tmp_path / "live", kubeconfig=server.kubeconfig_path, quiet=True)
        asked = [r for r in server.audit() if r.resource == "sriovnetworknodestates"]
    assert asked == []
    assert not (result.path / STATES).exists()
    manifest = json.loads((result.path / "manifest.json").read_text())
    assert STATES not in [m["path"] for m in manifest["missing"]]
    facts = load_bundle(result.path)
    assert facts.sriov_node_states is None and facts.has("sriovnetworknodestates")


def test_a_refused_list_is_said_plainly_and_judges_nothing(bundle: Path, tmp_path: Path) -> None:
    faults = Faults(forbid=("list sriovnetworknodestates",))
    with serve_bundle(bundle, faults=faults) as server:
        result = collect_bundle(tmp_path / "live", kubeconfig=server.kubeconfig_path, quiet=True)
    assert any(w.startswith("cannot list sriovnetworknodestates cluster-wide")
               and w.endswith("what needs sriovnetworknodestates is unknown") for w in result.warnings)
    assert not (result.path / STATES).exists()
    manifest = json.loads((result.path / "manifest.json").read_text())
    reasons = {m["path"]: m["reason"] for m in manifest["missing"]}
    assert reasons[STATES].startswith("forbidden to list sriovnetworknodestates cluster-wide (403")
    facts = load_bundle(result.path)
    assert facts.sriov_node_states is None and not facts.has("sriovnetworknodestates")
    assert ("rdma-links", "sriov_vfs_missing") not in _pairs(build_report(result.path, None))


def test_the_bundle_reads_back_what_was_written(bundle: Path) -> None:
    facts = load_bundle(bundle)
    assert facts.sriov_node_states is not None
    assert [(s.metadata.name, s.metadata.namespace, s.status.sync_status, s.status.last_sync_error)
            for s in facts.sriov_node_states] == [
        (NODE, "sriov-network-operator", "Failed", _ERROR),
        ("gpu-wk-02", "sriov-network-operator", "Succeeded", "")]


def test_the_published_reader_role_may_list_them(bundle: Path, tmp_path: Path) -> None:
    published = Path(__file__).parents[2] / "deploy" / "rbac-readonly.yaml"
    roles = list(yaml.safe_load_all(published.read_text()))
    reader = next(r for r in roles if r["metadata"]["name"] == "gpunode-reader")["rules"]
    with serve_bundle(bundle) as server:
        collect_bundle(tmp_path / "live", kubeconfig=server.kubeconfig_path, quiet=True)
        asked = {r.verb for r in server.audit() if r.resource == "sriovnetworknodestates"}
    assert asked == {"list"}
    assert any("sriovnetwork.openshift.io" in rule["apiGroups"]
               and "sriovnetworknodestates" in rule["resources"]
               and {"get", "list"} <= set(rule["verbs"]) for rule in reader)
