"""Real interconnect outputs (tests/fixtures/real/interconnect and broken/interconnect):
each put on a healthy simulated node the way ``collect`` stores it, then diagnosed.

Healthy ones (PCIe-only GPUs, a GPU without NVLink, NVL and NVSwitch systems, Ethernet-only
RoCE nodes, a port disabled on purpose) raise no alarm; broken ones are flagged by the
link component with the link or the port named in the evidence.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from realfix import REAL, Placed, new_bundle

from gpunode.explain import explain_lines
from gpunode.kb import load_kb
from gpunode.model import ComponentReport, NodeReport, Status
from gpunode.parse.fabric import fabric_troubles, parse_fabric_sections
from gpunode.parse.topology import parse_topo_matrix
from gpunode.sim import build_bundle, load_scenario

HEALTHY_DIR = REAL / "interconnect"
BROKEN_DIR = REAL / "broken" / "interconnect"
BAD = (Status.FAILED, Status.DEGRADED)
LINKS = ("nvlink-fabric", "rdma-links", "gpudirect-rdma", "fabric-manager")

#: Where ``collect`` stores each kind of output (docs/bundle-format.md), by file name part.
TARGETS = {
    "nvlink-s": "nvidia-smi-nvlink-s.txt",
    "nvlink-e": "nvidia-smi-nvlink-e.txt",
    "topo-m": "nvidia-smi-topo-m.txt",
    "ibstat": "ibstat.txt",
    "ibv-devinfo": "ibv_devinfo.txt",
    "sysfs-infiniband": "sysfs-infiniband.txt",
}

#: Healthy files -> the status of the component they feed (the rest of the links stay as
#: the healthy bundle has them).
HEALTHY: dict[str, tuple[str, Status]] = {
    "gpud-nvlink-s-a100-sxm4.txt": ("nvlink-fabric", Status.OK),
    "gpud-nvlink-s-a10-empty.txt": ("nvlink-fabric", Status.NOT_DEPLOYED),
    "k8s-test-infra-371-gb200-nvlink-s.txt": ("nvlink-fabric", Status.OK),
    "gpud-752-ibstat-active-hdr.txt": ("rdma-links", Status.OK),
    "gpud-99-ibstat-port-disabled.txt": ("rdma-links", Status.OK),
    "deepep-38-ibv-devinfo-h100-roce.txt": ("rdma-links", Status.OK),
}

#: Broken files -> (component, cause, what the evidence must name: the link or the port).
BROKEN: dict[str, tuple[str, str, str]] = {
    "gpud-482-ibstat-port-polling.txt": ("rdma-links", "ib_port_polling", "mlx5_10/1"),
    "deepep-60-ibv-devinfo-roce-port-down.txt": ("rdma-links", "rdma_port_down", "mlx5_12/1"),
    "gpud-sysfs-infiniband-h100-link-downed.txt": (
        "rdma-links", "ib_port_errors", "mlx5_1/1: excessive_buffer_overrun_errors 15, link_downed 255"
    ),
}


@pytest.fixture(scope="module")
def healthy_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_bundle(load_scenario("falcon-ai"), tmp_path_factory.mktemp("falcon") / "bundle")


def _target(path: Path) -> str:
    return next(name for part, name in TARGETS.items() if part in path.name)


def _placed(bundle: Path, tmp_path: Path, path: Path) -> Placed:
    placed = new_bundle(bundle, tmp_path / "b")
    (placed.node_dir() / "cmd" / _target(path)).write_bytes(path.read_bytes())
    if "nvlink-e" in path.name:  # counters come with the link states they belong to
        status = re.sub(r"^(\s+Link \d+):.*$", r"\1: 50 GB/s", path.read_text(), flags=re.M)
        (placed.node_dir() / "cmd" / TARGETS["nvlink-s"]).write_text(status)
    return placed


def _component(report: NodeReport, component: str) -> ComponentReport:
    return next(c for c in report.components if c.component == component)


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file())


def test_every_interconnect_fixture_is_tested() -> None:
    """Each file is named by a test below (by its kind or its name)."""
    kinds = ("topo-m", "fabric", "nccl-", "nvlink-e", "azhpc-diagnostics-73")
    for path in [*_files(HEALTHY_DIR), *_files(BROKEN_DIR)]:
        assert path.name in HEALTHY or path.name in BROKEN or any(k in path.name for k in kinds), path


@pytest.mark.parametrize("name", sorted(HEALTHY))
def test_healthy_output_raises_no_alarm(name: str, healthy_bundle: Path, tmp_path: Path) -> None:
    report = _placed(healthy_bundle, tmp_path, HEALTHY_DIR / name).report()
    component, status = HEALTHY[name]
    assert _component(report, component).status == status, _component(report, component)
    assert not [c.component for c in report.components if c.component in LINKS and c.status in BAD]
    assert not report.root_causes


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_output_names_the_link_or_port(name: str, healthy_bundle: Path, tmp_path: Path) -> None:
    component, cause, named = BROKEN[name]
    report = _placed(healthy_bundle, tmp_path, BROKEN_DIR / name).report()
    found = _component(report, component)
    assert found.status in BAD and found.cause == cause, found
    root = next(rc for rc in report.root_causes if rc.component == component)
    source = f"nodes/{report.name}/cmd/{_target(BROKEN_DIR / name)}"
    assert any(e.source == source and named in e.excerpt for e in root.evidence), root.evidence


def test_inactive_v100_links_are_named(healthy_bundle: Path, tmp_path: Path) -> None:
    """The report cut the node's other GPUs ("...."); the test adds one peer of the same
    model with its six links up, as the rest of that DGX-1 had them."""
    path = BROKEN_DIR / "azhpc-diagnostics-73-v100-nvlink-s-inactive.txt"
    real = path.read_text()
    peer = re.sub(r"<inactive>", "25.781 GB/s", real).replace("GPU 3:", "GPU 2:")
    placed = new_bundle(healthy_bundle, tmp_path / "b")
    (placed.node_dir() / "cmd" / TARGETS["nvlink-s"]).write_text(peer + real)
    report = placed.report()
    found = _component(report, "nvlink-fabric")
    assert found.status == Status.DEGRADED and found.cause == "nvlink_inactive", found
    root = next(rc for rc in report.root_causes if rc.component == "nvlink-fabric")
    assert any("GPU 3" in e.excerpt and "link 3, 5" in e.excerpt for e in root.evidence), root.evidence


def test_inactive_links_of_a_gpu_with_no_peer_in_the_output_are_named(
    healthy_bundle: Path, tmp_path: Path
) -> None:
    """Azure/azhpc-diagnostics#73 as pasted, GPU 3 alone: with no GPU of its model to compare
    with, its own links are the measure, and four up with two <inactive> is two links down."""
    report = _placed(healthy_bundle, tmp_path,
                     BROKEN_DIR / "azhpc-diagnostics-73-v100-nvlink-s-inactive.txt").report()
    found = _component(report, "nvlink-fabric")
    assert found.status == Status.DEGRADED and found.cause == "nvlink_inactive", found
    root = next(rc for rc in report.root_causes if rc.component == "nvlink-fabric")
    assert any("GPU 3" in e.excerpt and "link 3, 5" in e.excerpt for e in root.evidence), root.evidence


def test_gb300_counters_at_zero_are_healthy(healthy_bundle: Path, tmp_path: Path) -> None:
    report = _placed(healthy_bundle, tmp_path, HEALTHY_DIR / "srt-slurm-307-gb300-nvlink-e.txt").report()
    assert _component(report, "nvlink-fabric").status == Status.OK
    assert not report.root_causes


@pytest.mark.parametrize("path", [p for p in _files(HEALTHY_DIR) if "topo-m" in p.name], ids=lambda p: p.name)
def test_topology_of_real_systems_gives_each_gpu_a_near_nic(path: Path, healthy_bundle: Path,
                                                            tmp_path: Path) -> None:
    """DGX/HGX and PCIe systems built NIC-per-GPU: every GPU row's nearest NIC shares its
    PCIe tree; with ports on the node, gpudirect-rdma raises no affinity alarm."""
    matrix = parse_topo_matrix(path.read_text())
    assert matrix is not None and len(matrix.gpus) >= 4
    for gpu in (g for g in matrix.gpus if g in matrix.cells):
        nearest = matrix.nearest_nic(gpu)
        assert nearest is not None and nearest[1] in ("PIX", "PXB"), (gpu, nearest)
    placed = _placed(healthy_bundle, tmp_path, path)
    ports = "".join(f"mlx5_{n}/ports/1/state:4: ACTIVE\nmlx5_{n}/ports/1/phys_state:5: LinkUp\n"
                    f"mlx5_{n}/ports/1/link_layer:InfiniBand\nmlx5_{n}/ports/1/rate:400 Gb/sec (4X NDR)\n"
                    for n in range(len(matrix.nics)))
    (placed.node_dir() / "cmd" / TARGETS["sysfs-infiniband"]).write_text(ports)
    report = placed.report()
    assert _component(report, "gpudirect-rdma").status not in BAD
    assert not report.root_causes


def test_topology_names_nvlink_peers() -> None:
    matrix = parse_topo_matrix((HEALTHY_DIR / "nccl-1617-h100-topo-m.txt").read_text())
    assert matrix is not None
    assert matrix.nvlinks("GPU0") == {"GPU1": 6, "GPU2": 6, "GPU3": 6}
    pcie = parse_topo_matrix((HEALTHY_DIR / "deepep-128-topo-m-pcie-nic-per-gpu.txt").read_text())
    assert pcie is not None and pcie.nvlinks("GPU0") == {}


def _with_fabric(placed: Placed, text: str) -> None:
    """The node's nvidia-smi XML carries the fabric sections of ``text``, GPU by GPU."""
    xml = placed.node_dir() / "cmd" / "nvidia-smi-q.xml"
    head, _, body = xml.read_text().partition("<nvidia_smi_log>")
    root = ET.fromstring("<nvidia_smi_log>" + body)
    sections = parse_fabric_sections(text)
    for gpu, info in zip(root.findall("gpu"), sections * len(root.findall("gpu")), strict=False):
        fabric = gpu.find("fabric")
        assert fabric is not None
        for tag, value in (("state", info.state), ("status", info.status), ("cliqueId", info.clique_id),
                           ("clusterUuid", info.cluster_uuid),
                           ("health/summary", info.health.get("Summary"))):
            element = fabric.find(tag)
            assert element is not None, tag
            element.text = value or "N/A"
    xml.write_text(head + ET.tostring(root, encoding="unicode"))


@pytest.mark.parametrize(
    ("name", "component", "cause", "trouble"),
    [
        ("dra-driver-626-fabric-health-unhealthy.txt", "nvlink-fabric", "fabric_health_degraded",
         "Health Summary Unhealthy"),
        ("azhpc-images-506-fabric-insufficient-resources.txt", "fabric-manager", "fabric_registration_failed",
         "Status Insufficient Resources"),
    ],
)
def test_broken_fabric_section_is_flagged(name: str, component: str, cause: str, trouble: str,  # noqa: PLR0917
                                          healthy_bundle: Path, tmp_path: Path) -> None:
    text = (BROKEN_DIR / name).read_text()
    assert [fabric_troubles(i) for i in parse_fabric_sections(text)] == [[trouble]]
    placed = new_bundle(healthy_bundle, tmp_path / "b")
    _with_fabric(placed, text)
    found = _component(placed.report(), component)
    assert found.status in BAD and found.cause == cause, found


def test_nccl_socket_fallback_is_explained_and_ib_use_is_not() -> None:
    kb = load_kb()
    fallback_text = (BROKEN_DIR / "nccl-226-net-ib-no-device-socket.txt").read_text()
    fallback = explain_lines(fallback_text.splitlines(), kb)
    assert "nccl_socket_fallback" in [m.cause.code for m in fallback.matches]
    using_ib = explain_lines((HEALTHY_DIR / "nccl-487-net-ib-using.txt").read_text().splitlines(), kb)
    assert "nccl_socket_fallback" not in [m.cause.code for m in using_ib.matches]
