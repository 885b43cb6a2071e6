# ruff: noqa: E501  (real log lines are long)
"""The knowledge base covers what issue 5 asks for, and the Xid catalog is valid data."""

from __future__ import annotations

import re

import pytest

from gpunode.catalog import load_catalog
from gpunode.errors import BundleError
from gpunode.kb import load_kb
from gpunode.xid import classify, load_xid_catalog, parse_xid_catalog, xids_in_line

KB = load_kb()
CATALOG = load_catalog()

# Issue 5's list, by the cause code that answers each item.
REQUIRED = {
    "kernel headers missing": "kernel_headers_missing",
    "precompiled driver image missing": "precompiled_driver_image_missing",
    "driver image tag not found for the OS": "driver_image_not_found",
    "unsupported OS": "unsupported_os",
    "Secure Boot": "secure_boot_enabled",
    "nouveau": "nouveau_loaded",
    "SELinux": "selinux_blocks_module_load",
    "lockdown": "kernel_lockdown_blocks_module",
    "host driver conflict": "host_driver_conflict",
    "GCC mismatch": "gcc_mismatch",
    "fabric manager / CUDA 802": "fabric_manager_not_running",
    "driver upgraded without reboot": "driver_library_mismatch",
    "containerd not patched": "containerd_not_patched",
    "wrong containerd path (k3s/rke2/microk8s)": "containerd_config_wrong_path",
    "containerd config version mismatch": "containerd_config_version_mismatch",
    "containerd not restarted": "containerd_not_restarted",
    "CRI-O hooks dir missing": "crio_hooks_dir_missing",
    "RuntimeClass missing": "nvidia_runtimeclass_missing",
    "runtime handler missing": "runtime_handler_missing",
    "CDI spec generation failed": "cdi_spec_generation_failed",
    "NVML not injected": "nvml_not_injected",
    "device plugin 0 GPUs": "device_plugin_zero_gpus",
    "MIG strategy mismatch": "mig_strategy_mismatch",
    "MIG enabled without instances": "mig_enabled_no_instances",
    "MIG manager blocked by GPU clients": "mig_manager_gpu_clients",
    "time-slicing config invalid": "time_slicing_config_invalid",
    "NFD not deployed / PCI label missing": "nfd_not_deployed",
    "NFD worker not tolerating the GPU taint": "nfd_worker_untolerated_taint",
    "operands not scheduled (taints)": "operands_untolerated_taint",
    "validator missing tolerations": "validator_missing_tolerations",
    "DCGM exporter host engine": "dcgm_hostengine_unreachable",
    "DCP profiling unsupported": "dcgm_profiling_unsupported",
    "DCGM exporter, driver not ready": "dcgm_exporter_driver_not_ready",
    "MOFED repos unreachable": "mofed_repo_unreachable",
    "MOFED kernel packages unavailable": "mofed_kernel_packages_unavailable",
    "RDMA selector no devices": "rdma_selector_no_devices",
    "peermem not loaded": "peermem_not_loaded",
    "Xid 48": "uncorrectable_ecc",
    "Xid 63": "row_remap_pending",
    "Xid 64": "row_remap_failure",
    "Xid 74": "xid_74_nvlink_error",
    "Xid 79": "gpu_fallen_off_bus",
    "Xid 94": "xid_94_contained_ecc",
    "Xid 95": "xid_95_uncontained_ecc",
    "Xid 119": "xid_119_gsp_timeout",
    "Xid 154": "xid_154_recovery_action",
    "uncorrectable ECC with the GPU still advertised": "ecc_gpu_still_advertised",
    "remapped-row failure pending reset": "row_remap_pending",
    "PCIe link downtrained": "pcie_link_downtrained",
    "GPU thermal slowdown": "gpu_thermal_slowdown",
}


def test_issue_list_is_covered() -> None:
    missing = {item: code for item, code in REQUIRED.items() if code not in KB.by_code}
    assert not missing


def test_at_least_50_causes_spanning_every_layer_and_cluster_control() -> None:
    specific = [c for c in KB.causes if c.component != "*"]
    assert len(specific) >= 50
    layers = {CATALOG.get(c.component).layer for c in specific}
    assert layers == {0, 1, 2, 3, 4, 5}


@pytest.mark.parametrize("cause", [c for c in KB.causes if c.match], ids=lambda c: c.code)
def test_signature_entries_cite_references(cause: object) -> None:
    from gpunode.kb import Cause

    assert isinstance(cause, Cause)
    assert cause.references, cause.code
    for ref in cause.references:
        assert re.fullmatch(r"https?://\S+|[\w.-]+/[\w.-]+#\d+", ref), ref


def test_xid_catalog_has_the_issue_codes_and_the_device_plugin_skip_list() -> None:
    xids = load_xid_catalog().entries
    for code in (48, 63, 64, 74, 79, 94, 95, 119, 154):
        info = xids[code]
        assert info.cause and info.is_root_cause, code
        assert KB.get(info.cause).component == "gpu-hardware"
    ignored = {code for code, info in xids.items() if info.device_plugin_ignores}
    assert ignored == {13, 31, 43, 45, 68, 109}
    assert all(not xids[c].is_root_cause for c in ignored)


@pytest.mark.parametrize(
    ("message", "action"),
    [
        ("GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)", "reset_gpu"),
        ("GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)", "reboot_node"),
        ("GPU recovery action changed from 0x1 (GPU Reset Required) to 0x0 (None)", "none"),
    ],
)
def test_xid_154_takes_its_action_from_the_message(message: str, action: str) -> None:
    info = classify(154, message)
    assert info.action == action
    assert info.is_root_cause == (action != "none")


def test_unknown_xid_is_reported_but_never_a_root_cause() -> None:
    info = classify(4242)
    assert not info.known and not info.is_root_cause


def test_xids_are_found_in_kernel_plugin_and_dcgm_lines() -> None:
    assert (
        xids_in_line(
            "[ 1.0] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
        )[0][0]
        == 79
    )
    assert xids_in_line("XidCriticalError: Xid=48 on Device=GPU-1; marking device as unhealthy.")[0][0] == 48
    assert xids_in_line('DCGM_FI_DEV_XID_ERRORS{gpu="1",err_code="94",err_msg="x"} 94')[0][0] == 94
    assert xids_in_line("NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.133.20") == []


CAUSES = set(KB.by_code)
ENTRY = '[[xid]]\ncode = {code}\nmnemonic = "X"\nmeaning = "m"\nclass = "{cls}"\naction = "{action}"\ncatalog = "IGNORE"\n'


def test_duplicate_xid_is_rejected() -> None:
    text = ENTRY.format(code=79, cls="bus", action="reboot_node") * 2
    with pytest.raises(BundleError, match="listed twice"):
        parse_xid_catalog(text, CAUSES)


@pytest.mark.parametrize(("cls", "action"), [("cosmic", "none"), ("bus", "pray")])
def test_unknown_class_or_action_is_rejected(cls: str, action: str) -> None:
    with pytest.raises(BundleError, match=r"xid\.toml"):
        parse_xid_catalog(ENTRY.format(code=1, cls=cls, action=action), CAUSES)


def test_xid_naming_an_unknown_cause_is_rejected() -> None:
    text = ENTRY.format(code=1, cls="bus", action="none") + 'cause = "gpu_on_fire"\n'
    with pytest.raises(BundleError, match="gpu_on_fire"):
        parse_xid_catalog(text, CAUSES)
