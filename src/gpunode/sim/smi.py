"""`nvidia-smi -q -x` and `nvidia-smi` output, templated per GPU on the real recording
in shared/fixtures/real/h200-vm (same element order and value formats)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime

from gpunode.sim.models import CUDA_VERSION, DRIVER_VERSION, GpuModel
from gpunode.sim.world import Gpu

PROCESS_MIB = 72534


@dataclass(frozen=True)
class GpuLoad:
    """Live readings of one GPU (a busy one runs a training process)."""

    busy: bool
    pid: int = 0


def smi_timestamp(moment: datetime) -> str:
    """`Tue May 20 09:15:00 2025` as nvidia-smi prints it."""
    return moment.strftime("%a %b %d %H:%M:%S %Y")


def _readings(gpu: Gpu, model: GpuModel, load: GpuLoad) -> dict[str, str]:
    """Temperatures, power, memory and utilisation consistent with the load."""
    used = PROCESS_MIB if load.busy else 0
    temp = 61 + gpu.index % 5 if load.busy else 31 + gpu.index % 4
    power = 598.43 + 7.3 * gpu.index if load.busy else 71.27 + 1.9 * gpu.index
    return {
        "temp": str(temp),
        "mem_temp": str(temp + 4),
        "power": f"{power:.2f}",
        "used": str(used),
        "free": str(model.memory_mib - model.reserved_mib - used),
        "util": "97" if load.busy else "0",
        "mem_util": "41" if load.busy else "0",
        "pstate": "P0",
    }


# MIG profile -> (GPU instance id, SM count, memory MiB) on an 80 GB Hopper.
MIG_PROFILES = {
    "1g.10gb": (9, 16, 9984),
    "2g.20gb": (5, 32, 20096),
    "3g.40gb": (2, 60, 40320),
    "7g.80gb": (0, 132, 80896),
}


def _mig_devices_xml(profiles: tuple[str, ...]) -> list[str]:
    """`<mig_device>` entries for the MIG instances on one GPU."""
    out: list[str] = []
    for i, profile in enumerate(profiles):
        gi, sms, mem = MIG_PROFILES[profile]
        out += [
            "\t\t\t<mig_device>",
            f"\t\t\t\t<index>{i}</index>",
            f"\t\t\t\t<gpu_instance_id>{gi + i}</gpu_instance_id>",
            "\t\t\t\t<compute_instance_id>0</compute_instance_id>",
            "\t\t\t\t<device_attributes>",
            "\t\t\t\t\t<shared>",
            f"\t\t\t\t\t\t<multiprocessor_count>{sms}</multiprocessor_count>",
            "\t\t\t\t\t\t<copy_engine_count>1</copy_engine_count>",
            "\t\t\t\t\t\t<encoder_count>0</encoder_count>",
            "\t\t\t\t\t\t<decoder_count>1</decoder_count>",
            "\t\t\t\t\t\t<ofa_count>0</ofa_count>",
            "\t\t\t\t\t\t<jpg_count>1</jpg_count>",
            "\t\t\t\t\t</shared>",
            "\t\t\t\t</device_attributes>",
            "\t\t\t\t<ecc_error_count>",
            "\t\t\t\t\t<volatile_count>",
            "\t\t\t\t\t\t<sram_uncorrectable>0</sram_uncorrectable>",
            "\t\t\t\t\t</volatile_count>",
            "\t\t\t\t</ecc_error_count>",
            "\t\t\t\t<fb_memory_usage>",
            f"\t\t\t\t\t<total>{mem} MiB</total>",
            "\t\t\t\t\t<reserved>0 MiB</reserved>",
            "\t\t\t\t\t<used>13 MiB</used>",
            f"\t\t\t\t\t<free>{mem - 13} MiB</free>",
            "\t\t\t\t</fb_memory_usage>",
            "\t\t\t</mig_device>",
        ]
    return out


def gpu_xml(
    gpu: Gpu, model: GpuModel, load: GpuLoad, fabric: tuple[str, str], mig_profiles: tuple[str, ...] = ()
) -> str:
    """One `<gpu>` element."""
    r = _readings(gpu, model, load)
    mig = "Enabled" if gpu.mig else "Disabled"
    lines = [
        f'\t<gpu id="{gpu.bus_id}">',
        f"\t\t<product_name>{model.product}</product_name>",
        "\t\t<product_brand>NVIDIA</product_brand>",
        f"\t\t<product_architecture>{model.family.capitalize()}</product_architecture>",
        "\t\t<display_mode>Disabled</display_mode>",
        "\t\t<display_active>Disabled</display_active>",
        "\t\t<persistence_mode>Enabled</persistence_mode>",
        "\t\t<addressing_mode>None</addressing_mode>",
        "\t\t<mig_mode>",
        f"\t\t\t<current_mig>{mig}</current_mig>",
        f"\t\t\t<pending_mig>{mig}</pending_mig>",
        "\t\t</mig_mode>",
        "\t\t<mig_devices>",
        *(_mig_devices_xml(mig_profiles) if gpu.mig else ["\t\t\tNone"]),
        "\t\t</mig_devices>",
        "\t\t<accounting_mode>Disabled</accounting_mode>",
        "\t\t<accounting_mode_buffer_size>4000</accounting_mode_buffer_size>",
        "\t\t<driver_model>",
        "\t\t\t<current_dm>N/A</current_dm>",
        "\t\t\t<pending_dm>N/A</pending_dm>",
        "\t\t</driver_model>",
        f"\t\t<serial>{gpu.serial}</serial>",
        f"\t\t<uuid>{gpu.uuid}</uuid>",
        f"\t\t<minor_number>{gpu.index}</minor_number>",
        f"\t\t<vbios_version>{model.vbios}</vbios_version>",
        "\t\t<multigpu_board>No</multigpu_board>",
        f"\t\t<board_id>0x{int(gpu.bus, 16) * 256:x}</board_id>",
        f"\t\t<board_part_number>{model.board_part}</board_part_number>",
        f"\t\t<gpu_part_number>{model.gpu_part}</gpu_part_number>",
        "\t\t<gpu_fru_part_number>N/A</gpu_fru_part_number>",
        "\t\t<platformInfo>",
        "\t\t\t<chassis_serial_number>N/A</chassis_serial_number>",
        "\t\t\t<slot_number>N/A</slot_number>",
        "\t\t\t<tray_index>N/A</tray_index>",
        "\t\t\t<host_id>N/A</host_id>",
        "\t\t\t<peer_type>N/A</peer_type>",
        f"\t\t\t<module_id>{gpu.index + 1}</module_id>",
        "\t\t\t<gpu_fabric_guid>N/A</gpu_fabric_guid>",
        "\t\t</platformInfo>",
        "\t\t<inforom_version>",
        "\t\t\t<img_version>G520.0200.00.05</img_version>",
        "\t\t\t<oem_object>2.1</oem_object>",
        "\t\t\t<ecc_object>7.16</ecc_object>",
        "\t\t\t<pwr_object>N/A</pwr_object>",
        "\t\t</inforom_version>",
        "\t\t<gpu_operation_mode>",
        "\t\t\t<current_gom>N/A</current_gom>",
        "\t\t\t<pending_gom>N/A</pending_gom>",
        "\t\t</gpu_operation_mode>",
        "\t\t<c2c_mode>Disabled</c2c_mode>",
        "\t\t<gpu_virtualization_mode>",
        f"\t\t\t<virtualization_mode>{'VGPU' if gpu.vgpu else 'None'}</virtualization_mode>",
        "\t\t\t<host_vgpu_mode>N/A</host_vgpu_mode>",
        "\t\t\t<vgpu_heterogeneous_mode>N/A</vgpu_heterogeneous_mode>",
        "\t\t</gpu_virtualization_mode>",
        f"\t\t<gpu_recovery_action>{'Reset' if gpu.remap_pending else 'None'}</gpu_recovery_action>",
        f"\t\t<gsp_firmware_version>{DRIVER_VERSION}</gsp_firmware_version>",
        "\t\t<ibmnpu>",
        "\t\t\t<relaxed_ordering_mode>N/A</relaxed_ordering_mode>",
        "\t\t</ibmnpu>",
        *_pci_xml(gpu, model),
        "\t\t<fan_speed>N/A</fan_speed>",
        f"\t\t<performance_state>{r['pstate']}</performance_state>",
        *_clock_events_xml(load.busy),
        "\t\t<sparse_operation_mode>Disabled</sparse_operation_mode>",
        "\t\t<fb_memory_usage>",
        f"\t\t\t<total>{model.memory_mib} MiB</total>",
        f"\t\t\t<reserved>{model.reserved_mib} MiB</reserved>",
        f"\t\t\t<used>{r['used']} MiB</used>",
        f"\t\t\t<free>{r['free']} MiB</free>",
        "\t\t</fb_memory_usage>",
        "\t\t<bar1_memory_usage>",
        "\t\t\t<total>131072 MiB</total>",
        f"\t\t\t<used>{'3' if load.busy else '1'} MiB</used>",
        f"\t\t\t<free>{'131069' if load.busy else '131071'} MiB</free>",
        "\t\t</bar1_memory_usage>",
        "\t\t<cc_protected_memory_usage>",
        "\t\t\t<total>0 MiB</total>",
        "\t\t\t<used>0 MiB</used>",
        "\t\t\t<free>0 MiB</free>",
        "\t\t</cc_protected_memory_usage>",
        "\t\t<compute_mode>Default</compute_mode>",
        "\t\t<utilization>",
        f"\t\t\t<gpu_util>{r['util']} %</gpu_util>",
        f"\t\t\t<memory_util>{r['mem_util']} %</memory_util>",
        "\t\t\t<encoder_util>0 %</encoder_util>",
        "\t\t\t<decoder_util>0 %</decoder_util>",
        "\t\t\t<jpeg_util>0 %</jpeg_util>",
        "\t\t\t<ofa_util>0 %</ofa_util>",
        "\t\t</utilization>",
        *_stats_xml(),
        *_ecc_xml(gpu),
        *_remap_xml(gpu),
        *_temp_power_xml(r, model),
        *_clocks_xml(model, load.busy),
        *_fabric_xml(fabric),
        *_supported_clocks_xml(model),
        *_processes_xml(load, r),
        "\t\t<accounted_processes>",
        "\t\t</accounted_processes>",
        "\t\t<capabilities>",
        "\t\t\t<egm>disabled</egm>",
        "\t\t</capabilities>",
        "\t</gpu>",
        "",
    ]
    return "\n".join(lines)


def _pci_xml(gpu: Gpu, model: GpuModel) -> list[str]:
    return [
        "\t\t<pci>",
        f"\t\t\t<pci_bus>{gpu.bus}</pci_bus>",
        "\t\t\t<pci_device>00</pci_device>",
        "\t\t\t<pci_domain>0000</pci_domain>",
        "\t\t\t<pci_base_class>3</pci_base_class>",
        "\t\t\t<pci_sub_class>2</pci_sub_class>",
        f"\t\t\t<pci_device_id>{model.pci_device_id}</pci_device_id>",
        f"\t\t\t<pci_bus_id>{gpu.bus_id}</pci_bus_id>",
        f"\t\t\t<pci_sub_system_id>{model.subsystem_id}</pci_sub_system_id>",
        "\t\t\t<pci_gpu_link_info>",
        "\t\t\t\t<pcie_gen>",
        "\t\t\t\t\t<max_link_gen>5</max_link_gen>",
        "\t\t\t\t\t<current_link_gen>5</current_link_gen>",
        "\t\t\t\t\t<device_current_link_gen>5</device_current_link_gen>",
        "\t\t\t\t\t<max_device_link_gen>5</max_device_link_gen>",
        "\t\t\t\t\t<max_host_link_gen>5</max_host_link_gen>",
        "\t\t\t\t</pcie_gen>",
        "\t\t\t\t<link_widths>",
        "\t\t\t\t\t<max_link_width>16x</max_link_width>",
        "\t\t\t\t\t<current_link_width>16x</current_link_width>",
        "\t\t\t\t</link_widths>",
        "\t\t\t</pci_gpu_link_info>",
        "\t\t\t<pci_bridge_chip>",
        "\t\t\t\t<bridge_chip_type>N/A</bridge_chip_type>",
        "\t\t\t\t<bridge_chip_fw>N/A</bridge_chip_fw>",
        "\t\t\t</pci_bridge_chip>",
        "\t\t\t<replay_counter>0</replay_counter>",
        "\t\t\t<replay_rollover_counter>0</replay_rollover_counter>",
        "\t\t\t<tx_util>1024 KB/s</tx_util>",
        "\t\t\t<rx_util>512 KB/s</rx_util>",
        "\t\t\t<atomic_caps_outbound>N/A</atomic_caps_outbound>",
        "\t\t\t<atomic_caps_inbound>N/A</atomic_caps_inbound>",
        "\t\t</pci>",
    ]


_EVENT_REASONS = (
    "gpu_idle",
    "applications_clocks_setting",
    "sw_power_cap",
    "hw_slowdown",
    "hw_thermal_slowdown",
    "hw_power_brake_slowdown",
    "sync_boost",
    "sw_thermal_slowdown",
    "display_clocks_setting",
)


# The pieces below depend only on their (hashable) arguments: each is made once per value and
# kept, not once per GPU of every bundle (a few hundred lines a GPU).
@functools.cache
def _clock_events_xml(busy: bool) -> tuple[str, ...]:
    out = ["\t\t<clocks_event_reasons>"]
    for reason in _EVENT_REASONS:
        active = "Active" if reason == "gpu_idle" and not busy else "Not Active"
        out.append(f"\t\t\t<clocks_event_reason_{reason}>{active}</clocks_event_reason_{reason}>")
    out.append("\t\t</clocks_event_reasons>")
    out.append("\t\t<clocks_event_reasons_counters>")
    for counter in ("sw_power_cap", "sync_boost", "sw_therm_slowdown", "hw_therm_slowdown", "hw_power_brake"):
        out.append(
            f"\t\t\t<clocks_event_reasons_counters_{counter}>0 us</clocks_event_reasons_counters_{counter}>"
        )
    out.append("\t\t</clocks_event_reasons_counters>")
    return tuple(out)


@functools.cache
def _stats_xml() -> tuple[str, ...]:
    out: list[str] = []
    for block in ("encoder_stats", "fbc_stats"):
        out += [
            f"\t\t<{block}>",
            "\t\t\t<session_count>0</session_count>",
            "\t\t\t<average_fps>0</average_fps>",
            "\t\t\t<average_latency>0</average_latency>",
            f"\t\t</{block}>",
        ]
    out += [
        "\t\t<dram_encryption_mode>",
        "\t\t\t<current_dram_encryption>N/A</current_dram_encryption>",
        "\t\t\t<pending_dram_encryption>N/A</pending_dram_encryption>",
        "\t\t</dram_encryption_mode>",
        "\t\t<ecc_mode>",
        "\t\t\t<current_ecc>Enabled</current_ecc>",
        "\t\t\t<pending_ecc>Enabled</pending_ecc>",
        "\t\t</ecc_mode>",
    ]
    return tuple(out)


def _ecc_xml(gpu: Gpu) -> list[str]:
    dbe = gpu.dbe_volatile
    block = [
        "\t\t\t\t<sram_correctable>0</sram_correctable>",
        "\t\t\t\t<sram_uncorrectable_parity>0</sram_uncorrectable_parity>",
        "\t\t\t\t<sram_uncorrectable_secded>0</sram_uncorrectable_secded>",
        "\t\t\t\t<dram_correctable>0</dram_correctable>",
        f"\t\t\t\t<dram_uncorrectable>{dbe}</dram_uncorrectable>",
    ]
    return [
        "\t\t<ecc_errors>",
        "\t\t\t<volatile>",
        *block,
        "\t\t\t</volatile>",
        "\t\t\t<aggregate>",
        *block,
        "\t\t\t\t<sram_threshold_exceeded>No</sram_threshold_exceeded>",
        "\t\t\t</aggregate>",
        "\t\t\t<aggregate_uncorrectable_sram_sources>",
        "\t\t\t\t<sram_l2>0</sram_l2>",
        "\t\t\t\t<sram_sm>0</sram_sm>",
        "\t\t\t\t<sram_microcontroller>0</sram_microcontroller>",
        "\t\t\t\t<sram_pcie>0</sram_pcie>",
        "\t\t\t\t<sram_other>0</sram_other>",
        "\t\t\t</aggregate_uncorrectable_sram_sources>",
        "\t\t\t<channel_repair_pending>No</channel_repair_pending>",
        "\t\t\t<tpc_repair_pending>No</tpc_repair_pending>",
        "\t\t\t<unrepairable_memory>No</unrepairable_memory>",
        "\t\t</ecc_errors>",
        "\t\t<retired_pages>",
        "\t\t\t<multiple_single_bit_retirement>",
        "\t\t\t\t<retired_count>N/A</retired_count>",
        "\t\t\t\t<retired_pagelist>N/A</retired_pagelist>",
        "\t\t\t</multiple_single_bit_retirement>",
        "\t\t\t<double_bit_retirement>",
        "\t\t\t\t<retired_count>N/A</retired_count>",
        "\t\t\t\t<retired_pagelist>N/A</retired_pagelist>",
        "\t\t\t</double_bit_retirement>",
        "\t\t\t<pending_blacklist>N/A</pending_blacklist>",
        "\t\t\t<pending_retirement>N/A</pending_retirement>",
        "\t\t</retired_pages>",
    ]


def _remap_xml(gpu: Gpu) -> list[str]:
    pending = "Yes" if gpu.remap_pending else "No"
    partial = 1 if gpu.remapped_unc else 0
    inactive = gpu.remapped_unc if gpu.remap_pending else 0
    return [
        "\t\t<remapped_rows>",
        "\t\t\t<remapped_row_corr>0</remapped_row_corr>",
        "\t\t\t<remapped_row_corr_inactive>0</remapped_row_corr_inactive>",
        f"\t\t\t<remapped_row_unc>{gpu.remapped_unc}</remapped_row_unc>",
        f"\t\t\t<remapped_row_unc_inactive>{inactive}</remapped_row_unc_inactive>",
        f"\t\t\t<remapped_row_pending>{pending}</remapped_row_pending>",
        "\t\t\t<remapped_row_failure>No</remapped_row_failure>",
        "\t\t\t<row_remapper_histogram>",
        "\t\t\t\t<row_remapper_histogram_max>2558 bank(s)</row_remapper_histogram_max>",
        "\t\t\t\t<row_remapper_histogram_high>0 bank(s)</row_remapper_histogram_high>",
        f"\t\t\t\t<row_remapper_histogram_partial>{partial} bank(s)</row_remapper_histogram_partial>",
        "\t\t\t\t<row_remapper_histogram_low>0 bank(s)</row_remapper_histogram_low>",
        "\t\t\t\t<row_remapper_histogram_none>0 bank(s)</row_remapper_histogram_none>",
        "\t\t\t</row_remapper_histogram>",
        "\t\t</remapped_rows>",
    ]


def _temp_power_xml(r: dict[str, str], model: GpuModel) -> list[str]:
    limit = f"{model.power_limit_w:.2f} W"
    return [
        "\t\t<temperature>",
        f"\t\t\t<gpu_temp>{r['temp']} C</gpu_temp>",
        f"\t\t\t<gpu_temp_tlimit>{87 - int(r['temp'])} C</gpu_temp_tlimit>",
        "\t\t\t<gpu_temp_max_tlimit_threshold>-5 C</gpu_temp_max_tlimit_threshold>",
        "\t\t\t<gpu_temp_slow_tlimit_threshold>-2 C</gpu_temp_slow_tlimit_threshold>",
        "\t\t\t<gpu_temp_max_gpu_tlimit_threshold>0 C</gpu_temp_max_gpu_tlimit_threshold>",
        "\t\t\t<gpu_target_temperature>N/A</gpu_target_temperature>",
        f"\t\t\t<memory_temp>{r['mem_temp']} C</memory_temp>",
        "\t\t\t<gpu_temp_max_mem_tlimit_threshold>0 C</gpu_temp_max_mem_tlimit_threshold>",
        "\t\t</temperature>",
        "\t\t<supported_gpu_target_temp>",
        "\t\t\t<gpu_target_temp_min>N/A</gpu_target_temp_min>",
        "\t\t\t<gpu_target_temp_max>N/A</gpu_target_temp_max>",
        "\t\t</supported_gpu_target_temp>",
        "\t\t<gpu_power_readings>",
        f"\t\t\t<power_state>{r['pstate']}</power_state>",
        f"\t\t\t<average_power_draw>{r['power']} W</average_power_draw>",
        f"\t\t\t<instant_power_draw>{r['power']} W</instant_power_draw>",
        f"\t\t\t<current_power_limit>{limit}</current_power_limit>",
        f"\t\t\t<requested_power_limit>{limit}</requested_power_limit>",
        f"\t\t\t<default_power_limit>{limit}</default_power_limit>",
        "\t\t\t<min_power_limit>200.00 W</min_power_limit>",
        f"\t\t\t<max_power_limit>{limit}</max_power_limit>",
        "\t\t</gpu_power_readings>",
        "\t\t<gpu_memory_power_readings>",
        "\t\t\t<average_power_draw>N/A</average_power_draw>",
        "\t\t\t<instant_power_draw>N/A</instant_power_draw>",
        "\t\t</gpu_memory_power_readings>",
        "\t\t<module_power_readings>",
        f"\t\t\t<power_state>{r['pstate']}</power_state>",
        *(
            f"\t\t\t<{k}>N/A</{k}>"
            for k in (
                "average_power_draw",
                "instant_power_draw",
                "current_power_limit",
                "requested_power_limit",
                "default_power_limit",
                "min_power_limit",
                "max_power_limit",
            )
        ),
        "\t\t</module_power_readings>",
        "\t\t<power_smoothing>N/A</power_smoothing>",
        "\t\t<power_profiles>",
        "\t\t\t<power_profile_requested_profiles>N/A</power_profile_requested_profiles>",
        "\t\t\t<power_profile_enforced_profiles>N/A</power_profile_enforced_profiles>",
        "\t\t</power_profiles>",
    ]


@functools.cache
def _clocks_xml(model: GpuModel, busy: bool) -> tuple[str, ...]:
    sm = model.max_sm_mhz if busy else 345
    mem = model.mem_mhz
    video = 1755 if busy else 765
    mx = model.max_sm_mhz
    return (
        "\t\t<clocks>",
        f"\t\t\t<graphics_clock>{sm} MHz</graphics_clock>",
        f"\t\t\t<sm_clock>{sm} MHz</sm_clock>",
        f"\t\t\t<mem_clock>{mem} MHz</mem_clock>",
        f"\t\t\t<video_clock>{video} MHz</video_clock>",
        "\t\t</clocks>",
        "\t\t<applications_clocks>",
        f"\t\t\t<graphics_clock>{mx} MHz</graphics_clock>",
        f"\t\t\t<mem_clock>{mem} MHz</mem_clock>",
        "\t\t</applications_clocks>",
        "\t\t<default_applications_clocks>",
        f"\t\t\t<graphics_clock>{mx} MHz</graphics_clock>",
        f"\t\t\t<mem_clock>{mem} MHz</mem_clock>",
        "\t\t</default_applications_clocks>",
        "\t\t<deferred_clocks>",
        "\t\t\t<mem_clock>N/A</mem_clock>",
        "\t\t</deferred_clocks>",
        "\t\t<max_clocks>",
        f"\t\t\t<graphics_clock>{mx} MHz</graphics_clock>",
        f"\t\t\t<sm_clock>{mx} MHz</sm_clock>",
        f"\t\t\t<mem_clock>{mem} MHz</mem_clock>",
        "\t\t\t<video_clock>1755 MHz</video_clock>",
        "\t\t</max_clocks>",
        "\t\t<max_customer_boost_clocks>",
        f"\t\t\t<graphics_clock>{mx} MHz</graphics_clock>",
        "\t\t</max_customer_boost_clocks>",
        "\t\t<clock_policy>",
        "\t\t\t<auto_boost>N/A</auto_boost>",
        "\t\t\t<auto_boost_default>N/A</auto_boost_default>",
        "\t\t</clock_policy>",
    )


@functools.cache
def _fabric_xml(fabric: tuple[str, str]) -> tuple[str, ...]:
    state, status = fabric
    clique = "0" if state == "Completed" else "N/A"
    cluster = "00000000-0000-0000-0000-000000000000" if state == "Completed" else "N/A"
    return (
        "\t\t<fabric>",
        f"\t\t\t<state>{state}</state>",
        f"\t\t\t<status>{status}</status>",
        f"\t\t\t<cliqueId>{clique}</cliqueId>",
        f"\t\t\t<clusterUuid>{cluster}</clusterUuid>",
        "\t\t\t<health>",
        *(
            f"\t\t\t\t<{k}>N/A</{k}>"
            for k in (
                "summary",
                "bandwidth",
                "route_recovery_in_progress",
                "route_unhealthy",
                "access_timeout_recovery",
                "incorrect_configuration",
                "partition_assigned",
            )
        ),
        "\t\t\t</health>",
        "\t\t</fabric>",
    )


@functools.cache
def _supported_clocks_xml(model: GpuModel) -> tuple[str, ...]:
    graphics = [
        f"\t\t\t\t<supported_graphics_clock>{mhz} MHz</supported_graphics_clock>"
        for mhz in range(model.max_sm_mhz, 344, -15)
    ]
    out = ["\t\t<supported_clocks>"]
    for mem in (model.mem_mhz, 1593 if model.mem_mhz != 1593 else 1215):
        out += [
            "\t\t\t<supported_mem_clock>",
            f"\t\t\t\t<value>{mem} MHz</value>",
            *graphics,
            "\t\t\t</supported_mem_clock>",
        ]
    out.append("\t\t</supported_clocks>")
    return tuple(out)


def _processes_xml(load: GpuLoad, r: dict[str, str]) -> list[str]:
    if not load.busy:
        return ["\t\t<processes>", "\t\t</processes>"]
    return [
        "\t\t<processes>",
        "\t\t\t<process_info>",
        "\t\t\t\t<gpu_instance_id>N/A</gpu_instance_id>",
        "\t\t\t\t<compute_instance_id>N/A</compute_instance_id>",
        f"\t\t\t\t<pid>{load.pid}</pid>",
        "\t\t\t\t<type>C</type>",
        "\t\t\t\t<process_name>/usr/bin/python</process_name>",
        f"\t\t\t\t<used_memory>{r['used']} MiB</used_memory>",
        "\t\t\t</process_info>",
        "\t\t</processes>",
    ]


def smi_xml(
    gpus: list[Gpu],
    model: GpuModel,
    loads: list[GpuLoad],
    fabric: tuple[str, str],
    at: datetime,
    *,
    mig_profiles: tuple[str, ...] = (),
) -> str:
    """The whole `nvidia-smi -q -x` document for the visible GPUs."""
    head = (
        '<?xml version="1.0" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">\n'
        f"<nvidia_smi_log>\n\t<timestamp>{smi_timestamp(at)}</timestamp>\n"
        f"\t<driver_version>{DRIVER_VERSION}</driver_version>\n\t<cuda_version>{CUDA_VERSION}</cuda_version>\n"
        f"\t<attached_gpus>{len(gpus)}</attached_gpus>\n"
    )
    body = "".join(gpu_xml(g, model, load, fabric, mig_profiles) for g, load in zip(gpus, loads, strict=True))
    return head + body + "\n</nvidia_smi_log>\n"


def smi_table(gpus: list[Gpu], model: GpuModel, loads: list[GpuLoad], at: datetime) -> str:
    """The default `nvidia-smi` table (89 columns, as driver 570 prints it)."""
    bar = "+-----------------------------------------+------------------------+----------------------+"
    head = (
        f" NVIDIA-SMI {DRIVER_VERSION:<23}Driver Version: {DRIVER_VERSION:<15}CUDA Version: {CUDA_VERSION:<9}"
    )
    out = [
        f"{smi_timestamp(at)}       ",
        "+" + "-" * 89 + "+",
        f"|{head}|",
        bar,
        "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
        "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
        "|                                         |                        |               MIG M. |",
        "|=========================================+========================+======================|",
    ]
    for gpu, load in zip(gpus, loads, strict=True):
        r = _readings(gpu, model, load)
        mem = f"{r['used']}MiB / {model.memory_mib}MiB"
        power = f"{float(r['power']):.0f}W"
        mig = "Enabled" if gpu.mig else "Disabled"
        out += [
            f"|{gpu.index:>4}  {model.product:<31}On  |   {gpu.bus_id} Off | {gpu.dbe_volatile:>20} |",
            f"| N/A   {r['temp']:>2}C    {r['pstate']}{power:>16} / {model.power_limit_w:>4}W |"
            f" {mem:>22} | {r['util']:>6}%      Default |",
            f"|                                         |                        | {mig:>20} |",
            bar,
        ]
    out += ["", *_process_table(gpus, loads)]
    return "\n".join(out) + "\n"


def _process_table(gpus: list[Gpu], loads: list[GpuLoad]) -> list[str]:
    line = "+-----------------------------------------------------------------------------------------+"
    out = [
        line,
        "| Processes:                                                                              |",
        "|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |",
        "|        ID   ID                                                               Usage      |",
        "|=========================================================================================|",
    ]
    busy = [(g, load) for g, load in zip(gpus, loads, strict=True) if load.busy]
    if not busy:
        out.append(
            "|  No running processes found                                                             |"
        )
    for gpu, load in busy:
        row = f"|  {gpu.index:>3}   N/A  N/A  {load.pid:>15}      C   {'/usr/bin/python':<33}"
        out.append(f"{row}{PROCESS_MIB:>9}MiB |")
    out.append(line)
    return out
