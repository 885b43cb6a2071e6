"""Driver and kernel, judged from the probe's NVML init outcome and host facts."""

from __future__ import annotations

from pathlib import Path

from probe_check_helpers import (
    Facts,
    component,
    excerpts,
    judge,
    module,
    no_nvidia_stack,
    recorded,
    recorded_raw,
    root_cause,
    root_causes,
    status,
    write_bundle,
)

from gpunode.cli import build_report
from gpunode.model import Status

SIG_REFUSED = "[    6.118204] Loading of unsigned module is rejected"
MODPROBE_REFUSED = "[    6.118377] modprobe: ERROR: could not insert 'nvidia': Key was rejected by service"


def test_recorded_h200_driver_is_ok_with_its_versions(tmp_path: Path) -> None:
    report = judge(tmp_path, recorded())
    driver = component(report, "driver")
    assert driver.status == Status.OK
    assert driver.summary == "driver 580.159.04, CUDA 13.0"
    assert root_causes(report) == []


def test_no_driver_at_all_is_driver_not_loaded_and_the_only_root_cause(tmp_path: Path) -> None:
    facts = recorded()
    no_nvidia_stack(facts)
    report = judge(tmp_path, facts)
    assert root_causes(report) == [("driver", "driver_not_loaded")]
    text = excerpts(root_cause(report, "driver"))
    assert "library_not_found" in text and "/proc/driver/nvidia/version is absent" in text
    assert status(report, "gpu-hardware") == Status.UNKNOWN  # NVML never started: not asked
    assert root_cause(report, "driver").unverified_below == ("gpu-hardware",)
    assert component(report, "fabric-manager").blocked_by == ("driver",)


def test_upgraded_driver_without_reboot_is_library_mismatch(tmp_path: Path) -> None:
    facts = recorded()
    facts["nvml"].update(
        init_ok=False,
        init_error="lib_rm_version_mismatch",
        init_error_message="RM has detected an NVML/RM version mismatch.",
        driver_version=None,
        device_count=None,
        gpus=[],
    )
    facts["host"]["driver"]["version"] = "570.133.20"  # still loaded; userspace is 580
    report = judge(tmp_path, facts)
    assert root_causes(report) == [("driver", "driver_library_mismatch")]
    assert "kernel module 570.133.20 (open) is loaded" in excerpts(root_cause(report, "driver"))


def test_module_loaded_but_nvml_says_not_loaded_points_at_device_nodes(tmp_path: Path) -> None:
    facts = recorded()
    facts["nvml"].update(init_ok=False, init_error="driver_not_loaded", device_count=None, gpus=[])
    facts["nvml"]["init_error_message"] = "Driver Not Loaded"
    facts["host"]["device_nodes"] = []
    report = judge(tmp_path, facts)
    assert root_causes(report) == [("driver", "driver_not_loaded")]
    assert "no /dev/nvidia* device nodes" in excerpts(root_cause(report, "driver"))


def test_module_without_nvml_library_is_library_missing(tmp_path: Path) -> None:
    facts = recorded()
    facts["nvml"].update(init_ok=False, init_error="library_not_found", device_count=None, gpus=[])
    report = judge(tmp_path, facts)
    assert root_causes(report) == [("driver", "nvml_library_missing")]


def test_no_permission_says_unknown_not_failed(tmp_path: Path) -> None:
    facts = recorded()
    facts["nvml"].update(init_ok=False, init_error="no_permission", device_count=None, gpus=[])
    report = judge(tmp_path, facts)
    assert status(report, "driver") == Status.UNKNOWN
    assert "no permission" in component(report, "driver").summary
    assert root_causes(report) == []


def test_other_init_errors_are_the_driver_not_answering(tmp_path: Path) -> None:
    facts = recorded()
    facts["nvml"].update(init_ok=False, init_error="unknown", init_error_message="Unknown Error")
    facts["nvml"].update(device_count=None, gpus=[])
    report = judge(tmp_path, facts)
    assert root_causes(report) == [("driver", "nvidia_smi_failed")]


def test_missing_uvm_module_and_device_node_degrade_the_driver(tmp_path: Path) -> None:
    facts = recorded()
    del facts["host"]["modules"]["nvidia_uvm"]
    facts["host"]["device_nodes"] = ["nvidia-caps", "nvidia0", "nvidiactl"]
    report = judge(tmp_path, facts)
    assert root_causes(report) == [("driver", "nvidia_uvm_missing")]
    rc = root_cause(report, "driver")
    assert rc.status == Status.DEGRADED
    assert "nvidia_uvm is not loaded" in excerpts(rc) and "/dev/nvidia-uvm is absent" in excerpts(rc)


def test_uvm_is_not_judged_when_dev_was_not_visible(tmp_path: Path) -> None:
    facts = recorded()
    facts["host"]["device_nodes"] = []
    assert status(judge(tmp_path, facts), "driver") == Status.OK


def _gpudirect() -> dict[str, str]:
    """The driver container's ready marker, as written with driver.rdma enabled."""
    raw = recorded_raw()
    raw["files/run/nvidia/validations/.driver-ctr-ready"] = (
        "GDRCOPY_ENABLED: false\nGDS_ENABLED: false\nGPU_DIRECT_RDMA_ENABLED: true\n"
    )
    return raw


def test_gpudirect_requested_without_peermem(tmp_path: Path) -> None:
    facts = recorded()
    report = judge(tmp_path, facts, raw=_gpudirect())
    assert root_causes(report) == [("driver", "peermem_not_loaded")]
    assert "GPU_DIRECT_RDMA_ENABLED true" in excerpts(root_cause(report, "driver"))


def test_gpudirect_requested_and_peermem_loaded(tmp_path: Path) -> None:
    facts = recorded()
    facts["host"]["modules"]["nvidia_peermem"] = module("nvidia_peermem", 16384)
    report = judge(tmp_path, facts, raw=_gpudirect())
    assert root_causes(report) == []
    assert "nvidia_peermem loaded" in component(report, "driver").summary


def test_no_gpudirect_no_peermem_judgement(tmp_path: Path) -> None:
    report = judge(tmp_path, recorded())
    assert "peermem" not in component(report, "driver").summary


def _secure_boot_refused(facts: Facts, refusals: bool) -> dict[str, str]:
    """The driver's libraries are installed, the module was refused at load."""
    no_nvidia_stack(facts)
    nvml, host = facts["nvml"], facts["host"]
    nvml.update(init_error="driver_not_loaded", init_error_message="Driver Not Loaded")
    host["secure_boot"] = "enabled"
    raw = recorded_raw()
    if refusals:
        lines = raw["cmd/dmesg.txt"].splitlines()
        first = len(lines) + 1
        raw["cmd/dmesg.txt"] += SIG_REFUSED + "\n" + MODPROBE_REFUSED + "\n"
        host["kernel_log"]["nvrm_errors"] = [[first, SIG_REFUSED], [first + 1, MODPROBE_REFUSED]]
    return raw


def test_secure_boot_refusing_the_module_is_the_kernel_root_cause(tmp_path: Path) -> None:
    facts = recorded()
    raw = _secure_boot_refused(facts, refusals=True)
    report = judge(tmp_path, facts, raw=raw)
    assert root_causes(report) == [("kernel", "secure_boot_enabled")]
    rc = root_cause(report, "kernel")
    refused_at = len(raw["cmd/dmesg.txt"].splitlines()) - 1
    assert f"nodes/h200-device/cmd/dmesg.txt:{refused_at}" in [ev.source for ev in rc.evidence]
    assert "Loading of unsigned module is rejected" in excerpts(rc)
    # the driver's own refusal lines name the same cause; the kernel's Secure Boot still blocks it
    driver = component(report, "driver")
    assert (driver.status, driver.cause, driver.blocked_by) == (
        Status.FAILED,
        "secure_boot_enabled",
        ("kernel",),
    )


def test_secure_boot_with_libraries_but_no_module_is_blamed_without_log_lines(tmp_path: Path) -> None:
    facts = recorded()
    raw = _secure_boot_refused(facts, refusals=False)
    assert root_causes(judge(tmp_path, facts, raw=raw)) == [("kernel", "secure_boot_enabled")]


def test_secure_boot_is_not_blamed_for_a_node_without_any_driver(tmp_path: Path) -> None:
    facts = recorded()
    no_nvidia_stack(facts)
    facts["host"]["secure_boot"] = "enabled"
    report = judge(tmp_path, facts)
    assert root_causes(report) == [("driver", "driver_not_loaded")]
    assert status(report, "kernel") == Status.OK


def test_secure_boot_on_a_healthy_node_is_no_root_cause(tmp_path: Path) -> None:
    facts = recorded()
    facts["host"]["secure_boot"] = "enabled"
    report = judge(tmp_path, facts)
    assert root_causes(report) == []
    assert component(report, "kernel").summary == "6.18.44-fc-v657-gpu"


def test_nouveau_with_no_nvidia_driver_is_the_kernel_root_cause(tmp_path: Path) -> None:
    facts = recorded()
    no_nvidia_stack(facts)
    facts["host"]["modules"] = {"nouveau": module("nouveau", 3_104_768, ("drm_ttm_helper",))}
    facts["host"]["modules_error"] = None
    report = judge(tmp_path, facts)
    assert root_causes(report) == [("kernel", "nouveau_loaded")]
    assert root_cause(report, "kernel").status == Status.FAILED
    assert component(report, "driver").blocked_by == ("kernel",)


def test_nouveau_beside_a_working_driver_only_degrades(tmp_path: Path) -> None:
    facts = recorded()
    facts["host"]["modules"]["nouveau"] = module("nouveau", 3_104_768)
    report = judge(tmp_path, facts)
    assert root_causes(report) == [("kernel", "nouveau_loaded")]
    assert root_cause(report, "kernel").status == Status.DEGRADED
    assert status(report, "driver") == Status.OK


def test_unreadable_probe_json_leaves_components_unknown(tmp_path: Path) -> None:
    bundle = write_bundle(tmp_path, recorded())
    (bundle / "nodes/h200-device/cmd/gpunode-probe.json").write_text('{"format": "something-else/v9"}')
    broken = build_report(bundle, None).nodes[0]
    assert status(broken, "driver") == Status.UNKNOWN
    assert component(broken, "driver").summary == "the probe's facts could not be read"
    assert broken.root_causes == ()
