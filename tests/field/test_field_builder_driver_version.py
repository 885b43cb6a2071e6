"""``cluster.gpu_node.driver_version``: a case's node runs the driver its report names, in every
place a collector reads the node's driver, and a malformed version is refused in one line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from builder import build_case
from case import CaseError, load_case, synthetic_case

#: e.g. NVIDIA/gpu-operator reports of a host driver 535.183.01 (CUDA 12.2) under a newer image.
DRIVER = "535.183.01"
LINE = ("{{\"id\": \"{stem}\", \"source\": \"https://example.org/x\", \"title\": \"t\", "
        "\"platform\": \"generic\", \"cluster\": {{\"gpu_node\": {gpu_node}}}, \"evidence\": [], "
        "\"expect\": {{\"healthy\": true}}}}\n")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    case = synthetic_case("driver-version", [], cluster={"gpu_node": {"driver_version": DRIVER}})
    return build_case(case, tmp_path_factory.mktemp("dv"))


def _node(bundle: Path) -> Path:
    return bundle / "nodes" / "gpu-wk-01"


def test_nvidia_smi_names_the_driver_and_its_cuda(bundle: Path) -> None:
    xml = (_node(bundle) / "cmd" / "nvidia-smi-q.xml").read_text(encoding="utf-8")
    assert f"<driver_version>{DRIVER}</driver_version>" in xml
    assert "<cuda_version>12.2</cuda_version>" in xml
    table = (_node(bundle) / "cmd" / "nvidia-smi.txt").read_text(encoding="utf-8")
    header = next(line for line in table.splitlines() if "Driver Version" in line)
    assert f"Driver Version: {DRIVER}" in header and "CUDA Version: 12.2" in header
    default = (bundle / "nodes" / "gpu-wk-02" / "cmd" / "nvidia-smi.txt").read_text(encoding="utf-8")
    assert len(header) == len(next(line for line in default.splitlines() if "Driver Version" in line))


def test_host_files_and_metrics_name_the_driver(bundle: Path) -> None:
    assert DRIVER in (_node(bundle) / "files" / "proc" / "driver" / "nvidia" / "version").read_text()
    assert "NVRM: loading NVIDIA UNIX" in (_node(bundle) / "cmd" / "dmesg.txt").read_text()
    assert DRIVER in (_node(bundle) / "cmd" / "dmesg.txt").read_text()
    metrics = (_node(bundle) / "metrics" / "dcgm-exporter.prom").read_text()
    assert f'DCGM_FI_DRIVER_VERSION="{DRIVER}"' in metrics
    for path in _node(bundle).rglob("*"):
        if path.is_file():
            assert "570.133" not in path.read_text(encoding="utf-8", errors="replace"), path


def test_gfd_labels_and_driver_image_name_the_driver(bundle: Path) -> None:
    nodes = json.loads((bundle / "cluster" / "nodes.json").read_text())
    items = nodes["items"] if isinstance(nodes, dict) else nodes
    labels = next(n for n in items if n["metadata"]["name"] == "gpu-wk-01")["metadata"]["labels"]
    assert labels["nvidia.com/cuda.driver-version.full"] == DRIVER
    assert labels["nvidia.com/cuda.driver.major"] == "535"
    assert labels["nvidia.com/cuda.driver-version.revision"] == "01"
    assert labels["nvidia.com/cuda.runtime-version.full"] == "12.2"
    pods = json.loads((bundle / "cluster" / "pods.json").read_text())
    images = {c["image"] for p in (pods["items"] if isinstance(pods, dict) else pods)
              if p["spec"].get("nodeName") == "gpu-wk-01"
              for c in [*p["spec"].get("initContainers", []), *p["spec"]["containers"]]}
    assert any(i.startswith(f"nvcr.io/nvidia/driver:{DRIVER}-") for i in images)
    assert not any(i.startswith("nvcr.io/nvidia/driver:570.") for i in images)


def test_explicit_cuda_version_wins(tmp_path: Path) -> None:
    over = {"driver_version": "535.54.03", "cuda_version": "12.3"}
    case = synthetic_case("dv-cuda", [], cluster={"gpu_node": over})
    xml = (build_case(case, tmp_path) / "nodes" / "gpu-wk-01" / "cmd" / "nvidia-smi-q.xml").read_text()
    assert "<driver_version>535.54.03</driver_version>" in xml and "<cuda_version>12.3</cuda_version>" in xml


@pytest.mark.parametrize(("gpu_node", "field"), [
    ('{"driver_version": "535"}', "driver_version"),
    ('{"driver_version": "v535.183.01"}', "driver_version"),
    ('{"driver_version": "535.183.01", "cuda_version": "cuda12"}', "cuda_version"),
    ('{"driver_version": "390.157"}', "cuda_version"),
    ('{"cuda_version": "12.2"}', "cuda_version"),
])
def test_bad_version_is_refused_in_one_line(tmp_path: Path, gpu_node: str, field: str) -> None:
    path = tmp_path / "bad-driver.yaml"
    path.write_text(LINE.format(stem="bad-driver", gpu_node=gpu_node), encoding="utf-8")
    with pytest.raises(CaseError) as err:
        load_case(path)
    message = str(err.value)
    assert "\n" not in message
    assert re.match(rf"\S*bad-driver\.yaml: cluster\.gpu_node\.{field}: ", message), message
