"""GPU hardware and Fabric Manager, judged per GPU from the probe's NVML facts."""

from __future__ import annotations

from pathlib import Path

from probe_check_helpers import (
    Facts,
    add_gpus,
    component,
    excerpts,
    gpu,
    judge,
    node_object,
    recorded,
    recorded_raw,
    root_cause,
    root_causes,
    status,
)

from gpunode.model import Status
from gpunode.parse.kernel_log import parse_kernel_log

XID_79 = (
    "[ 9120.551877] NVRM: Xid (PCI:0000:28:00): 79, pid='<unknown>', name=<unknown>, "
    "GPU has fallen off the bus."
)
XID_13 = (
    "[ 8811.204519] NVRM: Xid (PCI:0000:18:00): 13, pid=48211, name=python3, "
    "Graphics SM Warp Exception on (GPC 1, TPC 0, SM 0): Out Of Range Address"
)


def _lose(facts: Facts, index: int) -> None:
    """NVML's view of a GPU that fell off the bus: the first call answers gpu_is_lost."""
    lost = gpu(facts, index)
    calls = dict.fromkeys(lost["calls"], "skipped_gpu_lost")
    calls["nvmlDeviceGetHandleByIndex"] = "ok"
    calls["nvmlDeviceGetPciInfo"] = "ok"
    calls["nvmlDeviceGetArchitecture"] = "gpu_is_lost"
    keep = {"index", "pci_bus_id", "seconds"}
    lost.update({k: None for k in lost if k not in keep and k not in ("calls", "nvlinks")})
    lost.update(calls=calls, lost=True, nvlinks=[])


def test_recorded_h200_gpu_is_ok(tmp_path: Path) -> None:
    report = judge(tmp_path, recorded())
    assert component(report, "gpu-hardware").summary == "1x NVIDIA H200"
    assert status(report, "gpu-hardware") == Status.OK


def test_a_lost_gpu_is_named_and_the_others_still_judged(tmp_path: Path) -> None:
    facts = recorded()
    add_gpus(facts, 2)
    _lose(facts, 1)
    hot = gpu(facts, 0)
    hot.update(temperature_c=91, clock_event_reasons_active=["sw_thermal_slowdown", "hw_thermal_slowdown"])
    report = judge(tmp_path, facts)
    rc = root_cause(report, "gpu-hardware")
    assert rc.cause == "gpu_fallen_off_bus"
    assert "GPU 1 (00000000:28:00.0): nvmlDeviceGetArchitecture answered gpu_is_lost" in excerpts(rc)
    assert "GPU 0 (00000000:18:00.0): 91 °C (slowdown at 89 °C)" in excerpts(rc)
    assert rc.supporting == ("gpu_thermal_slowdown",)


def test_volatile_uncorrectable_ecc_fails_the_gpu(tmp_path: Path) -> None:
    facts = recorded()
    gpu(facts).update(ecc_volatile_dbe=2, ecc_aggregate_dbe=2)
    report = judge(tmp_path, facts)
    assert root_causes(report) == [("gpu-hardware", "uncorrectable_ecc")]
    assert "2 uncorrectable ECC error(s) since driver load" in excerpts(root_cause(report, "gpu-hardware"))


def test_old_uncorrectable_ecc_alone_is_history_not_a_fault(tmp_path: Path) -> None:
    facts = recorded()
    gpu(facts).update(ecc_aggregate_dbe=3)
    assert root_causes(judge(tmp_path, facts)) == []


def test_remap_failure_fails_and_pending_remap_degrades(tmp_path: Path) -> None:
    facts = recorded()
    gpu(facts).update(remapped_rows_uncorrectable=1, remapped_rows_pending=True)
    pending = judge(tmp_path / "pending", facts)
    assert root_causes(pending) == [("gpu-hardware", "row_remap_pending")]
    assert root_cause(pending, "gpu-hardware").status == Status.DEGRADED
    gpu(facts).update(remapped_rows_failure=True)
    failed = judge(tmp_path / "failed", facts)
    assert root_causes(failed) == [("gpu-hardware", "row_remap_failure")]
    assert root_cause(failed, "gpu-hardware").status == Status.FAILED


def test_at_slowdown_temperature_without_reasons_is_still_thermal(tmp_path: Path) -> None:
    facts = recorded()
    gpu(facts).update(temperature_c=89, clock_event_reasons_active=[])
    report = judge(tmp_path, facts)
    assert root_causes(report) == [("gpu-hardware", "gpu_thermal_slowdown")]
    assert root_cause(report, "gpu-hardware").status == Status.DEGRADED


def test_idle_and_power_cap_reasons_are_not_heat(tmp_path: Path) -> None:
    facts = recorded()
    gpu(facts).update(temperature_c=71, clock_event_reasons_active=["gpu_idle", "sw_power_cap"])
    assert root_causes(judge(tmp_path, facts)) == []


def test_recovery_action_reset_fails_and_drain_p2p_degrades(tmp_path: Path) -> None:
    facts = recorded()
    gpu(facts)["recovery_action"] = "GPU Reset Required"
    reset = judge(tmp_path / "reset", facts)
    assert root_causes(reset) == [("gpu-hardware", "xid_154_recovery_action")]
    assert root_cause(reset, "gpu-hardware").status == Status.FAILED
    gpu(facts)["recovery_action"] = "Drain P2P"
    drain = judge(tmp_path / "drain", facts)
    assert root_cause(drain, "gpu-hardware").status == Status.DEGRADED


def test_pending_mig_mode_change_degrades(tmp_path: Path) -> None:
    facts = recorded()
    gpu(facts)["mig_mode_pending"] = "Enabled"
    report = judge(tmp_path, facts)
    assert root_causes(report) == [("gpu-hardware", "mig_mode_change_pending")]


def test_idle_link_is_not_judged_but_a_busy_narrow_one_is(tmp_path: Path) -> None:
    facts = recorded()
    gpu(facts).update(pcie_gen_current=1, pcie_gen_max=5, pcie_width_current=8, pcie_width_max=16)
    gpu(facts).update(utilization_gpu_pct=0, performance_state="P0", virtualization_mode="None")
    assert root_causes(judge(tmp_path / "idle", facts)) == []
    gpu(facts).update(utilization_gpu_pct=88, pcie_gen_current=5)
    narrow = judge(tmp_path / "narrow", facts)
    assert root_causes(narrow) == [("gpu-hardware", "pcie_link_downtrained")]
    assert "PCIe link x8 of x16 at 88% utilisation" in excerpts(root_cause(narrow, "gpu-hardware"))
    gpu(facts).update(virtualization_mode="Pass-Through")
    assert root_causes(judge(tmp_path / "vm", facts)) == []


def test_fewer_gpus_than_the_node_should_have(tmp_path: Path) -> None:
    report = judge(tmp_path, recorded(), node=node_object(gpus=8))
    assert root_causes(report) == [("gpu-hardware", "gpu_missing")]
    assert "nvmlDeviceGetCount=1, the node should have 8" in excerpts(root_cause(report, "gpu-hardware"))


def _with_kernel_lines(facts: Facts, raw: dict[str, str], *lines: str) -> None:
    """As if the kernel had logged ``lines``: the probe's parsed list and (maybe) its text."""
    text = recorded_raw()["cmd/dmesg.txt"] + "".join(line + "\n" for line in lines)
    log = parse_kernel_log(text)
    kernel_log = facts["host"]["kernel_log"]
    kernel_log["xids"] = [
        {"pci": x.pci, "xid": x.xid, "pid": x.pid, "process": x.process, "message": x.message}
        | {"line_no": x.line_no, "line": x.line}
        for x in log.xids
    ]
    if "cmd/dmesg.txt" in raw:
        raw["cmd/dmesg.txt"] = text


def test_probe_xids_are_judged_when_the_kernel_log_text_is_missing(tmp_path: Path) -> None:
    facts = recorded()
    raw = {k: v for k, v in recorded_raw().items() if k != "cmd/dmesg.txt"}
    _with_kernel_lines(facts, raw, XID_13, XID_79)
    report = judge(tmp_path, facts, raw=raw)
    assert root_causes(report) == [("gpu-hardware", "gpu_fallen_off_bus")]
    text = excerpts(root_cause(report, "gpu-hardware"))
    assert "79, pid='<unknown>'" in text and ": 13," not in text  # an application Xid is no fault


def test_probe_xids_defer_to_the_kernel_log_text_when_present(tmp_path: Path) -> None:
    facts, raw = recorded(), recorded_raw()
    _with_kernel_lines(facts, raw, XID_79)
    rc = root_cause(judge(tmp_path, facts, raw=raw), "gpu-hardware")
    assert rc.cause == "gpu_fallen_off_bus"
    assert all("cmd/dmesg.txt:" in ev.source for ev in rc.evidence)  # judged once, from the text


def _hgx(facts: Facts, state: str, fm_running: bool) -> None:
    add_gpus(facts, 8)
    for index in range(8):
        entry = gpu(facts, index)
        entry["calls"]["nvmlDeviceGetGpuFabricInfo"] = "ok"
        entry.update(fabric_state=state, fabric_status="Success" if state == "Completed" else None)
    host = facts["host"]
    host["device_nodes"] += [f"nvidia-nvswitch{n}" for n in range(4)]
    host["processes"]["nv-fabricmanager"] = fm_running


def test_no_nvswitch_means_fabric_manager_not_deployed(tmp_path: Path) -> None:
    report = judge(tmp_path, recorded())
    assert status(report, "fabric-manager") == Status.NOT_DEPLOYED


def test_hgx_fabric_not_started_without_fabric_manager(tmp_path: Path) -> None:
    facts = recorded()
    _hgx(facts, "Not Started", fm_running=False)
    report = judge(tmp_path, facts)
    assert root_causes(report) == [("fabric-manager", "fabric_manager_not_running")]
    text = excerpts(root_cause(report, "fabric-manager"))
    assert "GPU 0 (00000000:18:00.0) Not Started" in text and "(+4 more)" in text
    assert "no nv-fabricmanager process" in text


def test_hgx_fabric_completed_with_fabric_manager_is_ok(tmp_path: Path) -> None:
    facts = recorded()
    _hgx(facts, "Completed", fm_running=True)
    report = judge(tmp_path, facts)
    assert root_causes(report) == []
    assert (
        component(report, "fabric-manager").summary
        == "fabric Completed on 8 GPU(s), nv-fabricmanager running"
    )


def test_hgx_gpu_failing_fabric_registration(tmp_path: Path) -> None:
    facts = recorded()
    _hgx(facts, "Completed", fm_running=True)
    gpu(facts, 5)["fabric_status"] = "unknown"
    report = judge(tmp_path, facts)
    assert root_causes(report) == [("fabric-manager", "fabric_registration_failed")]


def test_nvswitches_without_fabric_state_are_judged_by_the_daemon(tmp_path: Path) -> None:
    facts = recorded()
    facts["host"]["device_nodes"] += ["nvidia-nvswitch0", "nvidia-nvswitch1"]
    report = judge(tmp_path, facts)
    assert root_causes(report) == [("fabric-manager", "fabric_manager_not_running")]


def test_fabric_is_unknown_when_nvml_did_not_start(tmp_path: Path) -> None:
    facts = recorded()
    facts["nvml"].update(init_ok=False, init_error="unknown", device_count=None, gpus=[])
    facts["host"]["device_nodes"] = []
    report = judge(tmp_path, facts)
    assert status(report, "fabric-manager") == Status.UNKNOWN
