"""NVML collection against a stand-in for the bindings: errors become facts."""

from __future__ import annotations

import pynvml
import pytest
from fake_nvml import GPU_IS_LOST, NOT_SUPPORTED, FakeGpu, FakeNvml

from gpunode.probe.nvml import collect_nvml


def test_healthy_hgx_gpu_facts() -> None:
    facts = collect_nvml(lib=FakeNvml([FakeGpu()]))
    assert facts.init_ok and facts.init_error is None
    assert (facts.driver_version, facts.cuda_driver_version, facts.device_count) == (
        "570.133.20",
        "12.8",
        1,
    )
    gpu = facts.gpus[0]
    assert (gpu.name, gpu.pci_bus_id, gpu.architecture) == (
        "NVIDIA H100 80GB HBM3",
        "00000000:18:00.0",
        "Hopper",
    )
    assert (gpu.memory_total_mib, gpu.temperature_c, gpu.slowdown_temp_c) == (81559, 41, 87)
    assert (gpu.power_draw_w, gpu.power_limit_w) == (583.417, 700.0)
    assert (gpu.ecc_mode_current, gpu.ecc_volatile_dbe, gpu.ecc_volatile_sbe) == ("Enabled", 2, 7)
    assert (gpu.remapped_rows_uncorrectable, gpu.remapped_rows_pending) == (1, True)
    assert (gpu.mig_mode_current, gpu.mig_mode_pending) == ("Disabled", "Enabled")
    assert (gpu.pcie_width_current, gpu.pcie_width_max) == (8, 16)
    assert gpu.clock_event_reasons_active == ("gpu_idle",)
    assert len(gpu.nvlinks) == 18 and not gpu.nvlinks[3].active and gpu.nvlinks[0].active
    assert (gpu.fabric_state, gpu.fabric_status) == ("Completed", "Success")
    assert gpu.recovery_action == "None"
    assert set(gpu.calls.values()) == {"ok"}


def test_not_supported_is_recorded_not_failed() -> None:
    gpu = FakeGpu(
        nvlinks=0,
        fabric_state=pynvml.NVML_GPU_FABRIC_STATE_NOT_SUPPORTED,
        errors={
            "nvmlDeviceGetRetiredPages": NOT_SUPPORTED,
            "nvmlDeviceGetRetiredPagesPendingStatus": NOT_SUPPORTED,
        },
    )
    facts = collect_nvml(lib=FakeNvml([gpu]))
    calls = facts.gpus[0].calls
    assert calls["nvmlDeviceGetRetiredPages(DBE)"] == "not_supported"
    assert calls["nvmlDeviceGetRetiredPagesPendingStatus"] == "not_supported"
    assert calls["nvmlDeviceGetNvLinkState"] == "not_supported"
    assert calls["nvmlDeviceGetGpuFabricInfo"] == "not_supported"
    assert facts.gpus[0].retired_pages_pending is None and facts.gpus[0].nvlinks == ()
    assert facts.gpus[0].lost is False and facts.gpus[0].temperature_c == 41


def test_lost_gpu_is_reported_and_the_others_still_read() -> None:
    lost_handle = FakeGpu(uuid="GPU-lost-handle", handle_error=GPU_IS_LOST)
    lost_midway = FakeGpu(uuid="GPU-lost-midway", errors={"nvmlDeviceGetTemperature": GPU_IS_LOST})
    healthy = FakeGpu(uuid="GPU-healthy", minor=2)
    lib = FakeNvml([lost_handle, lost_midway, healthy])
    facts = collect_nvml(lib=lib)
    first, second, third = facts.gpus
    assert first.lost and first.calls == {"nvmlDeviceGetHandleByIndex": "gpu_is_lost"}
    assert second.lost and second.calls["nvmlDeviceGetTemperature"] == "gpu_is_lost"
    assert second.calls["nvmlDeviceGetPowerUsage"] == "skipped_gpu_lost"
    assert second.uuid == "GPU-lost-midway" and second.temperature_c is None
    assert not third.lost and third.minor_number == 2
    assert lib.shutdowns == 1


@pytest.mark.parametrize(
    ("code", "name"),
    [
        (pynvml.NVML_ERROR_DRIVER_NOT_LOADED, "driver_not_loaded"),
        (pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH, "lib_rm_version_mismatch"),
        (pynvml.NVML_ERROR_LIBRARY_NOT_FOUND, "library_not_found"),
        (pynvml.NVML_ERROR_NO_PERMISSION, "no_permission"),
    ],
)
def test_init_failures_are_facts(code: int, name: str) -> None:
    lib = FakeNvml([FakeGpu()], init_error=code)
    facts = collect_nvml(lib=lib)
    assert (facts.init_ok, facts.init_error, facts.gpus) == (False, name, ())
    assert facts.init_error_message
    assert lib.calls == [] and lib.shutdowns == 0


def test_real_bindings_without_driver_library() -> None:
    """On a machine without libnvidia-ml (CI), the real bindings report it as a fact."""
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        pass
    else:
        pynvml.nvmlShutdown()
        pytest.skip("this machine has an NVIDIA driver")
    facts = collect_nvml()
    assert facts.init_ok is False
    assert facts.init_error in {"library_not_found", "driver_not_loaded"}
    assert facts.bindings_version
