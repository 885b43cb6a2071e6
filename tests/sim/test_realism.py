"""Every bundled scenario's bundle follows the realism rules of docs/bundle-format.md:
the API's shapes, not a simplified model of them."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from gpunode.sim import build_bundle, list_scenarios, load_scenario

SCENARIOS = [name for name, _ in list_scenarios() if not name.startswith("scale-")]
QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?([EPTGMK]i?|[mkunE])?$")


@cache
def _bundle(name: str, root: str) -> dict[str, Any]:
    out = build_bundle(load_scenario(name), Path(root) / name)
    lists = {
        p.stem: json.loads(p.read_text())["items"]
        for p in (out / "cluster").glob("*.json")
        if p.stem != "version"
    }
    logs = {str(p.relative_to(out / "logs")) for p in (out / "logs").rglob("*.log")}
    return {"lists": lists, "logs": logs}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("realism"))


def _daemonset_pods(lists: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        p
        for p in lists["pods"]
        if any(o["kind"] == "DaemonSet" for o in p["metadata"].get("ownerReferences", []))
        and p["metadata"].get("generateName")
    ]


@pytest.mark.parametrize("name", SCENARIOS)
def test_quantities_are_strings(name: str, root: str) -> None:
    lists = _bundle(name, root)["lists"]
    for node in lists["nodes"]:
        for table in ("capacity", "allocatable"):
            for key, value in node["status"][table].items():
                assert isinstance(value, str) and QUANTITY.match(value), (
                    node["metadata"]["name"],
                    key,
                    value,
                )
    for pod in lists["pods"]:
        for ctr in pod["spec"]["containers"]:
            for table in ctr.get("resources", {}).values():
                assert all(isinstance(v, str) for v in table.values()), (pod["metadata"]["name"], table)


@pytest.mark.parametrize("name", SCENARIOS)
def test_daemonset_pods_carry_matchfields_affinity_and_owner(name: str, root: str) -> None:
    for pod in _daemonset_pods(_bundle(name, root)["lists"]):
        owner = next(o for o in pod["metadata"]["ownerReferences"] if o["kind"] == "DaemonSet")
        assert owner["controller"] is True and owner["uid"]
        terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        fields = terms["nodeSelectorTerms"][0]["matchFields"][0]
        assert fields["key"] == "metadata.name" and fields["operator"] == "In"
        node = pod["spec"].get("nodeName")
        if pod["status"].get("phase") == "Pending" and not pod["status"].get("containerStatuses"):
            assert node is None  # never scheduled
        else:
            assert fields["values"] == [node]


@pytest.mark.parametrize("name", SCENARIOS)
def test_init_containers_have_their_own_statuses(name: str, root: str) -> None:
    for pod in _bundle(name, root)["lists"]["pods"]:
        inits = [c["name"] for c in pod["spec"].get("initContainers", [])]
        if inits and pod["spec"].get("nodeName"):
            statuses = [s["name"] for s in pod["status"].get("initContainerStatuses", [])]
            assert statuses == inits, pod["metadata"]["name"]


@pytest.mark.parametrize("name", SCENARIOS)
def test_crash_looping_containers_have_a_previous_log(name: str, root: str) -> None:
    bundle = _bundle(name, root)
    for pod in bundle["lists"]["pods"]:
        md = pod["metadata"]
        statuses = pod["status"].get("containerStatuses", []) + pod["status"].get("initContainerStatuses", [])
        for cs in statuses:
            if cs["state"].get("waiting", {}).get("reason") == "CrashLoopBackOff":
                assert cs["lastState"]["terminated"]["exitCode"] != 0
                assert f"{md['namespace']}/{md['name']}/{cs['name']}.previous.log" in bundle["logs"]


@pytest.mark.parametrize("name", SCENARIOS)
def test_events_are_objects_with_involved_object_count_and_source(name: str, root: str) -> None:
    for ev in _bundle(name, root)["lists"]["events"]:
        assert ev["kind"] == "Event" and ev["metadata"]["name"]
        assert ev["involvedObject"]["kind"] and ev["involvedObject"]["name"]
        assert isinstance(ev["count"], int) and ev["count"] >= 1
        assert ev["source"]["component"] and ev["type"] in ("Normal", "Warning") and ev["reason"]
        if ev["source"]["component"] == "kubelet" and ev["involvedObject"]["kind"] == "Pod":
            assert ev["source"].get("host"), "the kubelet names its node"


@pytest.mark.parametrize("name", SCENARIOS)
def test_nodes_carry_node_info_conditions_and_platform_labels(name: str, root: str) -> None:
    for node in _bundle(name, root)["lists"]["nodes"]:
        info = node["status"]["nodeInfo"]
        for key in ("containerRuntimeVersion", "kernelVersion", "osImage", "kubeletVersion", "architecture"):
            assert info[key], (node["metadata"]["name"], key)
        assert re.match(r"^(containerd|cri-o|docker)://", info["containerRuntimeVersion"])
        assert {c["type"] for c in node["status"]["conditions"]} >= {
            "Ready",
            "MemoryPressure",
            "DiskPressure",
        }
        labels = node["metadata"]["labels"]
        assert labels["kubernetes.io/hostname"] == node["metadata"]["name"]
        assert labels["kubernetes.io/os"] == "linux" and labels["kubernetes.io/arch"]
        assert "taints" not in node["spec"] or all(
            "effect" in t and "key" in t for t in node["spec"]["taints"]
        )
