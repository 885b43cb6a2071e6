# ruff: noqa: E501  (real log lines are long)
"""Next steps of GPU hardware causes name the GPU the evidence names (``nvidia-smi -i``
accepts the PCI bus id), instead of leaving ``<gpu-index>`` for the reader to fill."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpunode import sim
from gpunode.cli import build_report
from gpunode.parse.gpu_ref import bus_id_above, bus_id_in_line, normal_bus_id
from inprocess import as_a_fresh_process

GPU_PLACEHOLDER = re.compile(r"<(gpu-index|bus-id)>")
NAMES_A_GPU = re.compile(r"\(PCI:[0-9a-fA-F:]+\)|GPU [0-9a-fA-F]{4,8}:|gpu=\"\d+\"|<remapped_row_pending>")


def test_bus_ids_from_kernel_lines_and_smi_xml() -> None:
    assert bus_id_in_line("NVRM: Xid (PCI:0000:2a:00): 79, pid=0, GPU has fallen off the bus.") == "0000:2a:00.0"
    assert normal_bus_id("00000000:2A:00.0") == "0000:2a:00.0" and normal_bus_id("") is None
    xml = ['<gpu id="00000000:2A:00.0">', "<remapped_rows>", "<remapped_row_pending>Yes</remapped_row_pending>"]
    assert bus_id_above(xml, 3) == "0000:2a:00.0" and bus_id_above(xml[1:], 2) is None


@pytest.mark.slow
def test_scenario_next_steps_fill_the_gpu_the_evidence_names(tmp_path: Path) -> None:
    filled = 0
    for name, _ in sim.list_scenarios():
        if name.startswith("scale"):  # fleet-size load scenarios, not fault cases
            continue
        as_a_fresh_process()  # each scenario as its own command reads it (no full collection first)
        report = build_report(sim.build_bundle(sim.load_scenario(name), tmp_path / name), None)
        for node in report.nodes:
            for root in node.root_causes:
                steps = " ".join(root.next_steps)
                if not any(NAMES_A_GPU.search(e.excerpt) for e in root.evidence):
                    continue
                assert not GPU_PLACEHOLDER.search(steps), (name, node.name, root.cause, steps)
                filled += bool(re.search(r" -[is] [0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]\b", steps))
    assert filled, "no scenario exercises a GPU-specific next step"


def test_gpu_index_is_the_position_of_the_evidence_gpu_in_nvidia_smi_xml(tmp_path: Path) -> None:
    """With nvidia-smi -q -x collected, ``{gpu-index}`` is the index nvidia-smi lists the GPU
    at (not the bus id): the Xid's bus id looked up in the node's own GPU list."""
    bundle = sim.build_bundle(sim.load_scenario("fault-uncorrectable-ecc"), tmp_path / "b")
    report = build_report(bundle, None)
    (node,) = [n for n in report.nodes if n.root_causes]
    (root,) = node.root_causes
    bus = next(b for e in root.evidence if (b := bus_id_in_line(e.excerpt)))
    xml = (bundle / "nodes" / node.name / "cmd" / "nvidia-smi-q.xml").read_text()
    listed = [normal_bus_id(b) for b in re.findall(r'<gpu id="([^"]+)"', xml)]
    assert f"nvidia-smi -q -i {listed.index(bus)} -d ECC" in " ".join(root.next_steps)


def test_gpu_values_prefer_an_index_and_keep_the_bus_id() -> None:
    from gpunode.parse.gpu_ref import bus_id_indices, gpu_values

    indices = bus_id_indices(["00000000:18:00.0", None, "00000000:3A:00.0"])
    assert indices == {"0000:18:00.0": 0, "0000:3a:00.0": 2}
    assert gpu_values("0000:3a:00.0", indices) == {"gpu-index": "2", "bus-id": "0000:3a:00.0"}
    assert gpu_values("0000:9a:00.0", indices) == {"gpu-index": "0000:9a:00.0", "bus-id": "0000:9a:00.0"}
    assert gpu_values("4") == {"gpu-index": "4"} and gpu_values(None) == {}
