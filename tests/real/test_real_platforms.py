"""docs/platforms.md names, per platform, the real files its rules were tried on: each must
exist, and a real DRA ResourceSlice list placed on a healthy node running the DRA driver
raises no alarm (the other healthy files are tried in test_real_healthy.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from realfix import NODE, REAL, Placed, assert_healthy, fixture_files, new_bundle

from gpunode.sim import build_bundle, load_scenario

DOC = Path(__file__).resolve().parents[2] / "docs" / "platforms.md"
SECTION = "## What gpunode reads on each platform"


def _named_files() -> list[str]:
    """Backquoted paths in the table's last column."""
    text = DOC.read_text()
    table = text[text.index(SECTION):]
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| ---")]
    return [name for row in rows[1:] for name in re.findall(r"`([\w./-]+\.\w+|[\w./-]+/[\w.-]+)`",
                                                               row.rsplit("|", 2)[1])
            if "/" in name and "*" not in name and not name.startswith("tests/")]


def test_every_file_the_table_names_exists() -> None:
    named = _named_files()
    assert len(named) >= 12
    missing = [name for name in named if not (REAL / name).is_file()]
    assert missing == []


def test_every_real_dra_file_is_in_the_table() -> None:
    named = set(_named_files())
    assert {p.relative_to(REAL).as_posix() for p in fixture_files("dra")} <= named


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_bundle(load_scenario("falcon-ai"), tmp_path_factory.mktemp("falcon") / "bundle")


def _with_dra_driver(placed: Placed, slices: list[dict[str, object]]) -> None:
    """The node runs the DRA driver's kubelet plugin (chart defaults) beside NVIDIA's device
    plugin, and the real slices are its own (their node name is this node's)."""
    pods_path = placed.root / "cluster" / "pods.json"
    pods = json.loads(pods_path.read_text())
    plugin = next(p for p in pods["items"]
                  if p["metadata"]["name"].startswith("nvidia-device-plugin-daemonset")
                  and p["spec"]["nodeName"] == NODE)
    pod = json.loads(json.dumps(plugin))
    image = "nvcr.io/nvidia/k8s-dra-driver-gpu:v25.12.0"
    pod["metadata"].update(name="nvidia-dra-driver-gpu-kubelet-plugin-qbfsj",
                           namespace="nvidia-dra-driver-gpu",
                           labels={"nvidia-dra-driver-gpu-component": "kubelet-plugin"})
    pod["metadata"]["ownerReferences"][0]["name"] = "nvidia-dra-driver-gpu-kubelet-plugin"
    status = pod["status"]["containerStatuses"][0]
    pod["spec"]["containers"] = [{"name": n, "image": image} for n in ("compute-domains", "gpus")]
    pod["status"]["containerStatuses"] = [{**status, "name": n, "image": image}
                                          for n in ("compute-domains", "gpus")]
    pods["items"].append(pod)
    pods_path.write_text(json.dumps(pods))
    (placed.root / "cluster" / "resourceslices.json").write_text(
        json.dumps({"apiVersion": "v1", "kind": "List", "items": slices}))


@pytest.mark.parametrize("path", fixture_files("dra"), ids=lambda p: p.name)
def test_real_resourceslices_on_a_dra_node_raise_no_alarm(path: Path, healthy: Path, tmp_path: Path) -> None:
    placed = new_bundle(healthy, tmp_path / "b")
    items = yaml.safe_load(path.read_text())["items"]
    first = items[0]["spec"]["nodeName"]
    mine = [s for s in items if s["spec"]["nodeName"] == first]
    for item in mine:
        item["spec"]["nodeName"] = NODE
    _with_dra_driver(placed, mine)
    report = placed.report()
    assert_healthy(report)
    dra = next(c for c in report.components if c.component == "dra-kubelet-plugin")
    assert dra.status.value == "ok" and "gpu.nvidia.com: 1 device(s) published" in dra.summary, dra.summary
