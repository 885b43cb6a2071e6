"""The probe's interconnect section as recorded on the lent H100 (no NVLink peers, no HCA),
replayed: the facts decode, the verdicts are stated, and the node is healthy."""

from __future__ import annotations

from pathlib import Path

from probe_check_helpers import component, root_causes, write_bundle

from gpunode.cli import build_report
from gpunode.model import Status
from gpunode.parse.nvlink import parse_nvlink_status
from gpunode.probe import load_probe_json

RUN = Path(__file__).resolve().parents[1] / "fixtures" / "node" / "h100-interconnect"


def test_recorded_section_states_no_peers_and_no_hca() -> None:
    probe = load_probe_json((RUN / "probe.json").read_bytes())
    assert probe.interconnect.nvlink == "no NVLink peers (NVLink: not supported)"
    assert probe.interconnect.infiniband == "no InfiniBand HCA"
    gpu = probe.nvml.gpus[0]
    assert gpu.calls["nvmlDeviceGetGpuFabricInfoV"] == "ok"
    assert gpu.calls["nvmlDeviceGetGpuFabricInfo"] == "not_supported"
    assert parse_nvlink_status((RUN / "nvidia-smi-nvlink-s.txt").read_text()) == []


def test_recorded_node_is_healthy(tmp_path: Path) -> None:
    import json

    facts = json.loads((RUN / "probe.json").read_text())
    report = build_report(write_bundle(tmp_path, facts, raw={}), [facts["node_name"]]).nodes[0]
    assert root_causes(report) == []
    for cid in ("nvlink-fabric", "rdma-links", "imex", "gpudirect-rdma"):
        assert component(report, cid).status == Status.NOT_DEPLOYED, cid
