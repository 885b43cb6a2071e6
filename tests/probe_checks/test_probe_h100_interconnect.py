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


def _statuses(report: dict[str, object]) -> dict[str, tuple[str, str]]:
    node = report["nodes"][0]  # type: ignore[index]
    return {c["component"]: (c["status"], c["summary"]) for c in node["components"]}


def test_recorded_agent_and_probe_reports_agree_and_say_why() -> None:
    """`gpunode agent`'s /report after 90 s and `gpunode probe -o json`, both recorded on the
    same H100: healthy, and the link components say there is nothing to link rather than ok."""
    import json

    agent = json.loads((RUN / "agent-report.json").read_text())
    probe = json.loads((RUN / "probe-report.json").read_text())
    assert agent["nodes"][0]["status"] == probe["nodes"][0]["status"] == "ok"
    assert agent["nodes"][0]["root_causes"] == []
    statuses = _statuses(agent)
    assert statuses == _statuses(probe)
    assert statuses["nvlink-fabric"][0] == "not-deployed"
    assert statuses["nvlink-fabric"][1].startswith("no NVLink peers")
    assert statuses["rdma-links"] == ("not-deployed", "no InfiniBand HCA")


def test_recorded_facts_judged_today_as_the_machine_judged_them(tmp_path: Path) -> None:
    """The recorded probe facts, judged by today's engine, give the statuses the machine's own
    agent reported for the layers the facts cover (0-2): a drift guard for the replay."""
    import json

    facts = json.loads((RUN / "probe.json").read_text())
    report = build_report(write_bundle(tmp_path, facts, raw={}), [facts["node_name"]]).nodes[0]
    recorded = _statuses(json.loads((RUN / "agent-report.json").read_text()))
    for cid in ("gpu-hardware", "driver", "nvlink-fabric", "rdma-links", "imex", "gpudirect-rdma"):
        assert component(report, cid).status.value == recorded[cid][0], cid
