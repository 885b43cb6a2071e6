"""NVLink domains judged per domain: a uniform domain gets no flag; a node missing from its
domain, a domain short of nodes and links up on one side only are each flagged naming the
node and the domain."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import msgspec
import pytest
from fleetsim import build, diagnose, edit_file, edit_node, scenario, uniform
from rich.console import Console

from gpunode.fleet.domains import CLIQUE_LABEL, Member, find
from gpunode.fleet.model import Domain
from gpunode.model import Report
from gpunode.report import html, markdown, table

RACK_A = "7e3b7c2e-4f0e-4bd8-9a51-2f4f5c7d8e01"
RACK_B = "0b8f3a55-1c2d-4e6f-8a9b-c0d1e2f3a4b5"
GB200 = "NVIDIA-GB200"


def _tray(name: str, domain: str, *, label: str | None = "same", gpus: tuple[str, ...] | None = None,
          links: tuple[int, int] | None = (72, 72), product: str = GB200) -> Member:
    """A GB200 compute tray: 4 GPUs, 18 NVLinks each, all in ``domain``."""
    return Member(name, domain if label == "same" else label, product,
                  gpus if gpus is not None else (domain,) * 4, links)


def _rack(prefix: str, uuid: str, trays: int = 18, clique: int = 32766) -> list[Member]:
    return [_tray(f"{prefix}-{i:02d}", f"{uuid}.{clique}") for i in range(trays)]


def _by_domain(found: list[Domain]) -> dict[str, Domain]:
    return {d.domain: d for d in found}


def test_uniform_domains_get_no_flag() -> None:
    found = find(_rack("a", RACK_A) + _rack("b", RACK_B))
    assert [len(d.nodes) for d in found] == [18, 18]
    assert all(not d.flags for d in found)
    assert {d.usual_nodes for d in found} == {18}
    assert {d.cluster_uuid for d in found} == {RACK_A, RACK_B}


def test_a_single_domain_is_listed_without_flags() -> None:
    (only,) = find(_rack("a", RACK_A, trays=2))
    assert only.nodes == ("a-00", "a-01") and only.usual_nodes is None and not only.flags


def test_a_node_whose_gpus_report_no_clique_is_missing_from_its_labelled_domain() -> None:
    members = _rack("a", RACK_A)
    members[5] = _tray("a-05", f"{RACK_A}.32766", gpus=("", "", "", ""))
    domain = _by_domain(find(members))[f"{RACK_A}.32766"]
    (flag,) = domain.flags
    assert (flag.kind, flag.node) == ("node_outside_domain", "a-05")
    assert "a-05" in flag.text and f"{RACK_A}.32766" in flag.text and "no clique" in flag.text
    assert "a-05" in domain.nodes  # it is counted where it belongs: the domain is not short


def test_a_node_in_another_clique_than_its_rack_peers_is_flagged_without_labels() -> None:
    members = [_tray(m.name, f"{RACK_A}.1", label=None) for m in _rack("a", RACK_A, trays=4)]
    members[2] = _tray("a-02", f"{RACK_A}.9", label=None)
    found = find(members)
    assert [d.domain for d in found] == [f"{RACK_A}.1"]
    (flag,) = found[0].flags
    assert (flag.kind, flag.node) == ("node_outside_domain", "a-02")
    assert f"{RACK_A}.9" in flag.text and "rack peers" in flag.text


def test_a_domain_short_of_a_tray_is_flagged_naming_it() -> None:
    found = _by_domain(find(_rack("a", RACK_A) + _rack("b", RACK_B, trays=17)))
    short = found[f"{RACK_B}.32766"]
    (flag,) = short.flags
    assert (flag.kind, flag.node) == ("domain_short", None)
    assert RACK_B in flag.text and "17 node(s)" in flag.text and "have 18" in flag.text
    assert short.usual_nodes == 18 and len(short.nodes) == 17
    assert not found[f"{RACK_A}.32766"].flags


def test_domains_of_another_product_are_not_peers() -> None:
    small = [_tray(f"b-{i}", f"{RACK_B}.1", product="NVIDIA-GB300") for i in range(9)]
    found = _by_domain(find(_rack("a", RACK_A) + small))
    assert not found[f"{RACK_B}.1"].flags


def test_links_down_on_one_side_only_are_flagged_naming_the_node() -> None:
    members = _rack("a", RACK_A, trays=4)
    members[3] = _tray("a-03", f"{RACK_A}.32766", links=(0, 72))
    (domain,) = find(members)
    (flag,) = domain.flags
    assert (flag.kind, flag.node) == ("links_one_sided", "a-03")
    assert "0 of 72" in flag.text and f"{RACK_A}.32766" in flag.text


def test_links_down_everywhere_are_not_one_sided() -> None:
    members = [_tray(f"a-{i}", f"{RACK_A}.1", links=(60, 72)) for i in range(4)]
    (domain,) = find(members)
    assert not domain.flags


def test_a_node_with_unknown_gpus_is_counted_by_its_label_and_not_flagged() -> None:
    members = _rack("a", RACK_A, trays=3)
    members[0] = Member("a-00", f"{RACK_A}.32766", GB200, None, None)
    (domain,) = find(members)
    assert len(domain.nodes) == 3 and not domain.flags


# --- through a diagnosis: GFD's label and nvidia-smi's <fabric> ------------------------

CLUSTER_OF_SIM = "fabric_health_degraded@gpu-wk-01"  # puts every GPU node in one NVLink domain


@pytest.fixture(scope="module")
def one_tray_out(tmp_path_factory: pytest.TempPathFactory) -> Report:
    """Three nodes labelled in one domain by GFD; gpu-wk-03's GPUs report another clique."""
    bundle = build(scenario(uniform(3), faults=[CLUSTER_OF_SIM]), tmp_path_factory.mktemp("domain"))
    xml = (bundle / "nodes" / "gpu-wk-02" / "cmd" / "nvidia-smi-q.xml").read_text()
    uuid = re.search(r"<clusterUuid>([^<]+)</clusterUuid>", xml)
    assert uuid is not None
    domain = f"{uuid.group(1)}.32766"
    for name in ("gpu-wk-01", "gpu-wk-02", "gpu-wk-03"):
        edit_node(bundle, name, lambda node: node["metadata"]["labels"].update({CLIQUE_LABEL: domain}))
    edit_file(bundle, "gpu-wk-03", "cmd/nvidia-smi-q.xml",
              "<cliqueId>32766</cliqueId>", "<cliqueId>4</cliqueId>")
    return diagnose(bundle)


def test_a_diagnosis_groups_nodes_by_domain_and_flags_the_one_outside(one_tray_out: Report) -> None:
    (domain,) = one_tray_out.fleet.nvlink_domains
    assert domain.nodes == ("gpu-wk-01", "gpu-wk-02", "gpu-wk-03") and domain.clique == "32766"
    (flag,) = domain.flags
    assert (flag.kind, flag.node) == ("node_outside_domain", "gpu-wk-03")
    encoded = json.loads(msgspec.json.encode(one_tray_out))
    assert encoded["fleet"]["domains"][0]["flags"][0]["node"] == "gpu-wk-03"


def test_every_reporter_shows_the_domain(one_tray_out: Report) -> None:
    table = render_table(one_tray_out)
    assert "NVLink domains (1)" in table and "gpu-wk-03 is missing from NVLink domain" in table
    assert "## NVLink domains" in render_markdown(one_tray_out)
    assert "<h3>NVLink domains</h3>" in render_html(one_tray_out)


def test_a_fleet_without_nvlink_domains_writes_no_domains_field(tmp_path: Path) -> None:
    report = diagnose(build(scenario(uniform(2)), tmp_path))
    assert "domains" not in json.loads(msgspec.json.encode(report))["fleet"]


def _rendered(report: Report, fn: object) -> str:
    buffer = io.StringIO()
    fn(report, Console(file=buffer, width=200, color_system=None))  # type: ignore[operator]
    return buffer.getvalue()


def render_table(report: Report) -> str:
    return _rendered(report, table.render_diagnosis)


def render_markdown(report: Report) -> str:
    return _rendered(report, markdown.render_diagnosis)


def render_html(report: Report) -> str:
    return html.render_html(report)


def test_the_tray_out_scenario_flags_its_tray(tmp_path: Path) -> None:
    """The simulator's nvl-domain-tray-out: no root cause anywhere, one flag in the fleet."""
    from gpunode.sim import build_bundle, load_scenario

    report = diagnose(build_bundle(load_scenario("nvl-domain-tray-out"), tmp_path / "bundle"))
    assert not any(n.root_causes for n in report.nodes)
    (domain,) = report.fleet.nvlink_domains
    assert [(f.kind, f.node) for f in domain.flags] == [("node_outside_domain", "gpu-wk-03")]


def test_a_labelled_tray_whose_gpus_never_registered_is_missing_from_its_domain(tmp_path: Path) -> None:
    """gpu-wk-03's fabric still In Progress (no clique yet) while GFD's label puts it in the
    domain its peers registered in."""
    from gpunode.sim import build_bundle, load_scenario

    bundle = build_bundle(load_scenario("nvl-domain-tray-out"), tmp_path / "bundle")
    xml = bundle / "nodes" / "gpu-wk-03" / "cmd" / "nvidia-smi-q.xml"
    text = xml.read_text().replace("<state>Completed</state>\n\t\t\t<status>Success</status>",
                                   "<state>In Progress</state>\n\t\t\t<status>N/A</status>")
    xml.write_text(text.replace("<cliqueId>4</cliqueId>", "<cliqueId>N/A</cliqueId>"))
    (domain,) = diagnose(bundle).fleet.nvlink_domains
    (flag,) = domain.flags
    assert (flag.kind, flag.node) == ("node_outside_domain", "gpu-wk-03")
    assert "its GPUs report no clique" in flag.text
