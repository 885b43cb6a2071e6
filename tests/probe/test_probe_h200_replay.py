"""Replay of the probe recorded on a real H200 machine, checked against the
``nvidia-smi -q -x`` recorded in the same run (tests/fixtures/node/h200-device)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpunode.parse.nvidia_smi import NvidiaSmiReport, parse_nvidia_smi_xml
from gpunode.probe import ProbeResult, load_probe_json

DEVICE = Path(__file__).resolve().parents[1] / "fixtures" / "node" / "h200-device"


@pytest.fixture(scope="module")
def probe() -> ProbeResult:
    return load_probe_json((DEVICE / "probe.json").read_bytes())


@pytest.fixture(scope="module")
def smi() -> NvidiaSmiReport:
    return parse_nvidia_smi_xml((DEVICE / "nvidia-smi-q.xml").read_text())


def test_probe_agrees_with_nvidia_smi(probe: ProbeResult, smi: NvidiaSmiReport) -> None:
    nvml = probe.nvml
    assert nvml.device_count == smi.attached_gpus == len(nvml.gpus) == len(smi.gpus)
    assert nvml.driver_version == smi.driver_version
    assert nvml.cuda_driver_version == smi.cuda_version
    for gpu, smi_gpu in zip(nvml.gpus, smi.gpus, strict=True):
        assert gpu.pci_bus_id == smi_gpu.pci_bus_id
        assert gpu.uuid == smi_gpu.uuid
        assert gpu.memory_total_mib == smi_gpu.memory_total_mib
        assert gpu.ecc_mode_current == smi_gpu.ecc_mode_current
        assert (gpu.mig_mode_current, gpu.mig_mode_pending) == (
            smi_gpu.mig_mode_current,
            smi_gpu.mig_mode_pending,
        )
        assert (gpu.slowdown_temp_c, gpu.shutdown_temp_c) == (
            smi_gpu.slowdown_temp_c,
            smi_gpu.shutdown_temp_c,
        )
        assert gpu.persistence_mode == smi_gpu.persistence_mode
        assert (gpu.pcie_gen_max, gpu.pcie_width_max) == (smi_gpu.pcie_gen_max, smi_gpu.pcie_width_max)


def test_h200_is_healthy_at_layer_one(probe: ProbeResult) -> None:
    assert probe.nvml.init_ok and probe.errors == ()
    (gpu,) = probe.nvml.gpus
    assert (gpu.name, gpu.architecture, gpu.lost) == ("NVIDIA H200", "Hopper", False)
    assert (gpu.ecc_volatile_dbe, gpu.ecc_aggregate_dbe) == (0, 0)
    assert (gpu.remapped_rows_pending, gpu.remapped_rows_failure) == (False, False)
    assert gpu.recovery_action == "None"
    assert probe.host.driver is not None
    assert probe.host.driver.version == probe.nvml.driver_version == "580.159.04"
    assert probe.host.driver.kernel_module_type == "open"
    assert probe.host.kernel_log.source == "/dev/kmsg"
    assert probe.host.kernel_log.driver_loaded == "580.159.04"
    assert probe.host.kernel_log.xids == () and probe.host.kernel_log.fallen_off_bus == ()


def test_missing_features_are_not_supported_not_failures(probe: ProbeResult) -> None:
    """An H200 remaps rows instead of retiring pages, and this VM exposes no NVLink."""
    calls = probe.nvml.gpus[0].calls
    assert calls["nvmlDeviceGetRetiredPagesPendingStatus"] == "not_supported"
    assert calls["nvmlDeviceGetNvLinkState"] == "not_supported"
    assert calls["nvmlDeviceGetGpuFabricInfo"] == "not_supported"
    assert calls["nvmlDeviceGetRemappedRows"] == "ok"
    assert {v for v in calls.values()} <= {"ok", "not_supported"}


def test_no_kubernetes_runtime_or_rdma_is_absence_not_error(probe: ProbeResult) -> None:
    host = probe.host
    assert host.runtime_configs == () and host.cdi_specs == ()
    assert host.device_plugin_sockets == () and not host.kubelet_registration_socket
    assert host.validations == () and host.rdma_ports == ()
    assert not any(host.processes[p] for p in ("kubelet", "containerd", "crio", "k3s-agent"))
    assert host.read_errors == () and host.rdma_errors == ()


def test_recorded_bundle_has_the_probe_and_nvidia_smi(probe: ProbeResult) -> None:
    node = DEVICE / "bundle" / "nodes" / "h200-device"
    bundled = load_probe_json((node / "cmd" / "gpunode-probe.json").read_bytes())
    assert bundled.nvidia_smi == "ok"
    assert bundled.nvml.gpus[0].uuid == probe.nvml.gpus[0].uuid
    report = parse_nvidia_smi_xml((node / "cmd" / "nvidia-smi-q.xml").read_text())
    assert report.gpus[0].uuid == probe.nvml.gpus[0].uuid
    assert (node / "files" / "proc" / "modules").read_text().startswith("nvidia_uvm ")
