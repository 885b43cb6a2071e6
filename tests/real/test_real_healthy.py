"""Real files from healthy machines (tests/fixtures/real, sources in SOURCES.md) stay healthy.

Each file goes into an otherwise healthy bundle, the bundle made consistent with it;
the node must get no root cause and no failed or degraded component.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from realfix import (
    REAL,
    SIM_PRODUCT,
    Placed,
    assert_healthy,
    driver_of_labels,
    fixture_files,
    gpus_of_dcgm,
    gpus_of_smi_text,
    gpus_of_xml,
    new_bundle,
    parse_labels,
    place_labels,
    set_driver_version,
    set_gpus,
    set_node_info,
)

from gpunode.parse._toml import load_toml
from gpunode.sim import build_bundle, load_scenario


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_bundle(load_scenario("falcon-ai"), tmp_path_factory.mktemp("falcon") / "bundle")


def _cases(kind: str, known: dict[str, str]) -> list[object]:
    """One case per file; files that hit a rule still being fixed are strict xfails."""
    cases: list[object] = []
    for path in fixture_files(kind):
        reason = known.get(path.name)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        cases.append(pytest.param(path, id=path.name, marks=marks))
    return cases


# ---------------------------------------------------------------- nvidia-smi -q -x

XML_KNOWN: dict[str, str] = {}


@pytest.mark.parametrize("path", _cases("nvidia-smi-xml", XML_KNOWN))
def test_nvidia_smi_xml(path: Path, healthy: Path, tmp_path: Path) -> None:
    placed = new_bundle(healthy, tmp_path / "b")
    text = path.read_text()
    gpus, driver = gpus_of_xml(text)
    if driver:
        set_driver_version(placed, driver)
    set_gpus(placed, gpus)
    (placed.node_dir() / "cmd" / "nvidia-smi-q.xml").write_text(text)
    assert_healthy(placed.report())


# ---------------------------------------------------------------- containerd configs

# where each distribution keeps the config containerd runs with, and how its kubelet reports
DISTRIBUTIONS = {
    "k3s": ("/var/lib/rancher/k3s/agent/etc/containerd/config.toml", "v1.31.4+k3s1", "-k3s1"),
    "rke2": ("/var/lib/rancher/rke2/agent/etc/containerd/config.toml", "v1.31.4+rke2r1", "-k3s1"),
    "microk8s": ("/var/snap/microk8s/current/args/containerd-template.toml", "v1.31.4", ""),
}
CONTAINERD_KNOWN: dict[str, str] = {}


def place_containerd(placed: Placed, path: Path) -> None:
    flavour = path.name.split("-")[0]
    target, kubelet, suffix = DISTRIBUTIONS.get(flavour, ("/etc/containerd/config.toml", "v1.31.4", ""))
    files = placed.node_dir() / "files"
    shutil.rmtree(files / "etc" / "containerd", ignore_errors=True)
    if path.name.endswith(".tmpl"):  # a k3s/RKE2 template, beside where k3s renders config.toml
        target += ".tmpl"
    dest = files / target.lstrip("/")
    dest.parent.mkdir(parents=True, exist_ok=True)
    text = path.read_text()
    dest.write_text(text)
    version = load_toml(target, text).get("version", 1)
    runtime = "containerd://2.0.2" if version >= 3 or "cri.v1.runtime" in text else "containerd://1.7.24"
    set_node_info(placed, kubeletVersion=kubelet, containerRuntimeVersion=runtime + suffix)


@pytest.mark.parametrize("path", _cases("containerd", CONTAINERD_KNOWN))
def test_containerd_config(path: Path, healthy: Path, tmp_path: Path) -> None:
    placed = new_bundle(healthy, tmp_path / "b")
    place_containerd(placed, path)
    assert_healthy(placed.report())


# ---------------------------------------------------------------- CRI-O drop-ins

CRIO_DROP_IN = "/etc/crio/crio.conf.d/99-nvidia.toml"
CRIO_KNOWN: dict[str, str] = {}


# OpenShift's base drop-in (no extension), on a GPU node beside the toolkit's own drop-in
OPENSHIFT_BASE = "/etc/crio/crio.conf.d/00-default"
TOOLKIT_DROP_IN = REAL / "crio" / "nvidia-ctk-dropin-new-file.toml"


def crio_files(path: Path) -> dict[str, str]:
    """Where a CRI-O node keeps this file, with the toolkit's drop-in beside OpenShift's base."""
    if path.name.startswith("openshift-"):
        return {OPENSHIFT_BASE: path.read_text(), CRIO_DROP_IN: TOOLKIT_DROP_IN.read_text()}
    return {CRIO_DROP_IN: path.read_text()}


def place_crio(placed: Placed, path: Path) -> None:
    """A CRI-O node: no containerd config, the drop-ins where CRI-O reads them."""
    files = placed.node_dir() / "files"
    shutil.rmtree(files / "etc" / "containerd", ignore_errors=True)
    for target, text in crio_files(path).items():
        dest = files / target.lstrip("/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text)
    set_node_info(placed, containerRuntimeVersion="cri-o://1.31.3")


@pytest.mark.parametrize("path", _cases("crio", CRIO_KNOWN))
def test_crio_drop_in(path: Path, healthy: Path, tmp_path: Path) -> None:
    placed = new_bundle(healthy, tmp_path / "b")
    place_crio(placed, path)
    report = placed.report()
    assert_healthy(report)
    toolkit = next(c for c in report.components if c.component == "container-toolkit")
    assert "cri-o" in toolkit.summary, toolkit.summary


def test_openshift_base_drop_in_sets_the_default_runtime(healthy: Path, tmp_path: Path) -> None:
    """MCO's extensionless 00-default is read: its default runtime crun is what CRI-O uses."""
    placed = new_bundle(healthy, tmp_path / "b")
    place_crio(placed, REAL / "crio" / "openshift-mco-worker-00-default")
    toolkit = next(c for c in placed.report().components if c.component == "container-toolkit")
    assert "default runtime crun" in toolkit.summary, toolkit.summary


# ---------------------------------------------------------------- plain nvidia-smi

SMI_KNOWN: dict[str, str] = {}


@pytest.mark.parametrize("path", _cases("nvidia-smi", SMI_KNOWN))
def test_nvidia_smi_table(path: Path, healthy: Path, tmp_path: Path) -> None:
    placed = new_bundle(healthy, tmp_path / "b")
    text = path.read_text()
    gpus, driver = gpus_of_smi_text(text)
    assert gpus.count > 0, "no GPU row recognised"
    if driver:
        set_driver_version(placed, driver)
    set_gpus(placed, gpus)
    (placed.node_dir() / "cmd" / "nvidia-smi.txt").write_text(text)
    assert_healthy(placed.report())


# ---------------------------------------------------------------- DCGM exporter scrapes

DCGM_KNOWN: dict[str, str] = {}
# scrapes whose labels name no model: the product the source describes
DCGM_PRODUCT = {
    "cloud-native-docs-dcgm-exporter-a100-mig.prom": "NVIDIA A100-SXM4-40GB",
    # the README names no model: the bundle keeps its own
    "dcgm-exporter-readme-helm-memory-temp-blank.prom": SIM_PRODUCT,
}


@pytest.mark.parametrize("path", _cases("dcgm-exporter", DCGM_KNOWN))
def test_dcgm_exporter_scrape(path: Path, healthy: Path, tmp_path: Path) -> None:
    placed = new_bundle(healthy, tmp_path / "b")
    text = path.read_text()
    gpus, driver = gpus_of_dcgm(text, DCGM_PRODUCT.get(path.name))
    if driver:
        set_driver_version(placed, driver)
    set_gpus(placed, gpus, keep_dcgm=True)
    (placed.node_dir() / "metrics" / "dcgm-exporter.prom").write_text(text)
    assert_healthy(placed.report())


# ---------------------------------------------------------------- GFD / NFD label sets

LABELS_KNOWN: dict[str, str] = {}


@pytest.mark.parametrize("path", _cases("labels", LABELS_KNOWN))
def test_node_labels(path: Path, healthy: Path, tmp_path: Path) -> None:
    placed = new_bundle(healthy, tmp_path / "b")
    labels = parse_labels(path.read_text())
    assert any(k.startswith("nvidia.com/gpu.") for k in labels), "no GFD label recognised"
    driver = driver_of_labels(labels)
    if driver:
        set_driver_version(placed, driver)
    place_labels(placed, labels)
    assert_healthy(placed.report())


# ---------------------------------------------------------------- kernel log and loaded driver

_NVRM_LOADED = re.compile(r"NVRM: loading NVIDIA UNIX .*?Kernel Module(?: for \w+)?\s+(\d+(?:\.\d+)+)")
_NVRM_VERSION = re.compile(r"NVRM version: NVIDIA UNIX .*?Kernel Module(?: for \w+)?\s+(\d+(?:\.\d+)+)")


@pytest.mark.parametrize("path", _cases("dmesg", {}))
def test_kernel_log(path: Path, healthy: Path, tmp_path: Path) -> None:
    placed = new_bundle(healthy, tmp_path / "b")
    text = path.read_text()
    loaded = _NVRM_LOADED.search(text)
    assert loaded, "no driver load line"
    set_driver_version(placed, loaded.group(1))
    (placed.node_dir() / "cmd" / "dmesg.txt").write_text(text)
    assert_healthy(placed.report())


@pytest.mark.parametrize("path", _cases("proc-driver-version", {}))
def test_proc_driver_version(path: Path, healthy: Path, tmp_path: Path) -> None:
    placed = new_bundle(healthy, tmp_path / "b")
    text = path.read_text()
    version = _NVRM_VERSION.search(text)
    assert version, "no NVRM version line"
    set_driver_version(placed, version.group(1))
    (placed.node_dir() / "files" / "proc" / "driver" / "nvidia" / "version").write_text(text)
    assert_healthy(placed.report())


# ---------------------------------------------------------------- Docker as the node's runtime


@pytest.mark.parametrize("path", _cases("docker", {}))
def test_docker_daemon_json(path: Path, healthy: Path, tmp_path: Path) -> None:
    placed = new_bundle(healthy, tmp_path / "b")
    files = placed.node_dir() / "files"
    shutil.rmtree(files / "etc" / "containerd")
    dest = files / "etc" / "docker" / "daemon.json"
    dest.parent.mkdir(parents=True)
    dest.write_text(path.read_text())
    set_node_info(placed, containerRuntimeVersion="docker://24.0.7")
    assert_healthy(placed.report())
