# ruff: noqa: E501  (real log lines are long)
"""GPU hardware checks on the simulated Falcon AI cluster: hardware Xids become
their cause wherever they are reported (kernel log, device plugin, DCGM metric),
application Xids never become a root cause, and the nvidia-smi based checks find
a downtrained link, thermal slowdown and ECC damage on a GPU still advertised."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.model import NodeReport, Status
from gpunode.sim import load_scenario
from gpunode.sim.build import build_world
from gpunode.sim.cascade import append_log
from gpunode.sim.finalize import finalize
from gpunode.sim.scenario import Scenario
from gpunode.sim.world import World
from gpunode.sim.writer import write

NODE = "gpu-wk-02"
WorldEdit = Callable[[World], None]
BundleEdit = Callable[[Path], None]


@cache
def _falcon() -> Scenario:
    return load_scenario("falcon-ai")


def _node_report(
    tmp: Path, world_edit: WorldEdit | None = None, bundle_edit: BundleEdit | None = None
) -> NodeReport:
    world = build_world(_falcon())
    if world_edit:
        world_edit(world)
    finalize(world)
    bundle = write(world, tmp / "bundle")
    if bundle_edit:
        bundle_edit(bundle / "nodes" / NODE)
    (report,) = diagnose(load_bundle(bundle), read_node_observations, [NODE]).nodes
    return report


def _kernel(line: str) -> WorldEdit:
    return lambda world: world.node(NODE).host.kernel_events.append(line)


def _plugin_log(line: str) -> WorldEdit:
    def edit(world: World) -> None:
        key = world.ds_pod_key("device-plugin", NODE)
        assert key
        append_log(world, key, "nvidia-device-plugin", [line])

    return edit


def _metric(sample: str) -> BundleEdit:
    def edit(node_dir: Path) -> None:
        prom = node_dir / "metrics" / "dcgm-exporter.prom"
        prom.write_text(prom.read_text() + sample + "\n")

    return edit


def _smi_once(old: str, new: str) -> BundleEdit:
    def edit(node_dir: Path) -> None:
        xml = node_dir / "cmd" / "nvidia-smi-q.xml"
        text = xml.read_text()
        assert old in text
        xml.write_text(text.replace(old, new, 1))

    return edit


def _roots(report: NodeReport) -> list[tuple[str, str]]:
    return [(r.component, r.cause) for r in report.root_causes]


def _component(report: NodeReport, cid: str) -> Status:
    return next(c.status for c in report.components if c.component == cid)


XID_DCGM = 'DCGM_FI_DEV_XID_ERRORS{{gpu="3",UUID="GPU-9a8b7c6d-5e4f-3a2b-1c0d-e9f8a7b6c5d4",pci_bus_id="00000000:5D:00.0",device="nvidia3",modelName="NVIDIA H100 80GB HBM3",Hostname="gpu-wk-02",DCGM_FI_DRIVER_VERSION="570.133.20",container="",err_code="{code}",err_msg="{msg}",namespace="",pod=""}} {code}'


@pytest.mark.parametrize(
    ("world_edit", "bundle_edit", "cause"),
    [
        pytest.param(
            _plugin_log(
                "I0611 10:11:12.481923       1 health.go:194] XidCriticalError: Xid=95 on Device=GPU-9a8b7c6d-5e4f-3a2b-1c0d-e9f8a7b6c5d4; marking device as unhealthy."
            ),
            None,
            "xid_95_uncontained_ecc",
            id="device-plugin-xid-95",
        ),
        pytest.param(
            None,
            _metric(XID_DCGM.format(code=119, msg="GSP RPC timeout")),
            "xid_119_gsp_timeout",
            id="dcgm-metric-xid-119",
        ),
        pytest.param(
            _kernel(
                "[ 4411.273512] NVRM: Xid (PCI:0000:5d:00): 136, pid='<unknown>', name=<unknown>, Link training failed"
            ),
            None,
            "xid_hardware_error",
            id="kernel-xid-136",
        ),
        pytest.param(
            _kernel(
                "[ 4411.273512] NVRM: Xid (PCI:0000:5d:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)"
            ),
            None,
            "xid_154_recovery_action",
            id="kernel-xid-154-reset",
        ),
    ],
)
def test_hardware_xid_is_the_root_cause(
    world_edit: WorldEdit | None, bundle_edit: BundleEdit | None, cause: str, tmp_path: Path
) -> None:
    report = _node_report(tmp_path, world_edit, bundle_edit)
    assert _roots(report) == [("gpu-hardware", cause)]
    (root,) = report.root_causes
    assert root.evidence and any("Xid" in ev.excerpt or "XID" in ev.excerpt for ev in root.evidence)


@pytest.mark.parametrize(
    ("world_edit", "bundle_edit"),
    [
        pytest.param(
            _kernel(
                "[ 5512.118733] NVRM: Xid (PCI:0000:5d:00): 13, pid=77120, name=python3, Graphics SM Warp Exception on (GPC 1, TPC 0, SM 0): Out Of Range Address"
            ),
            None,
            id="kernel-xid-13",
        ),
        pytest.param(
            _plugin_log(
                "I0611 10:11:12.481923       1 health.go:194] XidCriticalError: Xid=31 on Device=GPU-9a8b7c6d-5e4f-3a2b-1c0d-e9f8a7b6c5d4; marking device as unhealthy."
            ),
            None,
            id="device-plugin-xid-31",
        ),
        pytest.param(
            None,
            _metric(
                'DCGM_EXP_XID_ERRORS_COUNT{gpu="3",UUID="GPU-9a8b",xid="43",window_size_in_ms="300000"} 4'
            ),
            id="dcgm-count-xid-43",
        ),
        pytest.param(
            _kernel(
                "[ 4411.273512] NVRM: Xid (PCI:0000:5d:00): 154, GPU recovery action changed from 0x1 (GPU Reset Required) to 0x0 (None)"
            ),
            None,
            id="kernel-xid-154-none",
        ),
        pytest.param(
            _kernel(
                "[ 4411.273512] NVRM: Xid (PCI:0000:5d:00): 999, pid='<unknown>', name=<unknown>, something new"
            ),
            None,
            id="kernel-xid-unknown",
        ),
    ],
)
def test_application_or_unknown_xid_is_never_a_root_cause(
    world_edit: WorldEdit | None, bundle_edit: BundleEdit | None, tmp_path: Path
) -> None:
    report = _node_report(tmp_path, world_edit, bundle_edit)
    assert _roots(report) == []
    assert _component(report, "gpu-hardware") == Status.OK


def _first_gpu_link(util: int, width: str = "16x", gen: str = "5", virt: str = "None") -> BundleEdit:
    """The first GPU at ``util`` % in P0 with the given link and virtualisation mode."""

    def edit(node_dir: Path) -> None:
        xml = node_dir / "cmd" / "nvidia-smi-q.xml"
        head, sep, rest = xml.read_text().partition("</gpu>")
        for pattern, value in (
            (r"<gpu_util>\d+ %</gpu_util>", f"<gpu_util>{util} %</gpu_util>"),
            (r"<performance_state>P\d+</performance_state>", "<performance_state>P0</performance_state>"),
            (
                r"<current_link_width>\d+x</current_link_width>",
                f"<current_link_width>{width}</current_link_width>",
            ),
            (r"<current_link_gen>\d+</current_link_gen>", f"<current_link_gen>{gen}</current_link_gen>"),
            (
                r"<virtualization_mode>[^<]*</virtualization_mode>",
                f"<virtualization_mode>{virt}</virtualization_mode>",
            ),
        ):
            head, count = re.subn(pattern, value, head, count=1)
            assert count == 1, pattern
        xml.write_text(head + sep + rest)

    return edit


@pytest.mark.parametrize(
    ("util", "width", "gen", "virt"),
    [
        (0, "8x", "5", "None"),  # idle: consumer boards narrow their link at rest
        (0, "16x", "1", "None"),  # idle: the generation drops to save power
        (97, "8x", "5", "Pass-Through"),  # a VM sees the link its host shaped (T4/A10G/L4: x8)
    ],
    ids=["idle-narrow", "idle-slow", "busy-vm-x8"],
)
def test_link_at_rest_or_in_a_vm_is_healthy(
    util: int, width: str, gen: str, virt: str, tmp_path: Path
) -> None:
    report = _node_report(tmp_path, bundle_edit=_first_gpu_link(util, width, gen, virt))
    assert _roots(report) == []
    assert _component(report, "gpu-hardware") == Status.OK


@pytest.mark.parametrize(
    ("width", "gen", "shown"),
    [("8x", "5", "x8 of x16"), ("16x", "3", "gen 3 of 5")],
    ids=["narrow", "slow"],
)
def test_busy_gpu_below_its_slot_is_downtrained(width: str, gen: str, shown: str, tmp_path: Path) -> None:
    report = _node_report(tmp_path, bundle_edit=_first_gpu_link(97, width, gen))
    assert _roots(report) == [("gpu-hardware", "pcie_link_downtrained")]
    assert report.root_causes[0].status == Status.DEGRADED
    assert shown in report.root_causes[0].evidence[0].excerpt


def test_thermal_slowdown_is_degraded(tmp_path: Path) -> None:
    reason = "<clocks_event_reason_hw_thermal_slowdown>{}</clocks_event_reason_hw_thermal_slowdown>"
    report = _node_report(
        tmp_path, bundle_edit=_smi_once(reason.format("Not Active"), reason.format("Active"))
    )
    assert _roots(report) == [("gpu-hardware", "gpu_thermal_slowdown")]
    assert report.root_causes[0].status == Status.DEGRADED


def test_ecc_damage_on_a_gpu_still_advertised(tmp_path: Path) -> None:
    def damage(world: World) -> None:
        world.node(NODE).gpus[3].dbe_volatile = 2

    report = _node_report(tmp_path, damage)
    assert _roots(report) == [("gpu-hardware", "ecc_gpu_still_advertised")]
    assert "uncorrectable_ecc" in report.root_causes[0].supporting
