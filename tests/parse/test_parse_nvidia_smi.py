"""nvidia-smi -q -x parsing on the recorded H200 and a synthetic 8x H100 HGX."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from node_fixtures import read_fixture

from gpunode.errors import ParseError
from gpunode.parse import nvidia_smi
from gpunode.parse.nvidia_smi import parse_nvidia_smi_failure, parse_nvidia_smi_xml

H200_XML = read_fixture("h200-vm", "nvidia-smi-q.xml")
HGX_XML = read_fixture("h100-hgx", "nvidia-smi-q.xml")


def test_recorded_h200_identity_and_versions() -> None:
    report = parse_nvidia_smi_xml(H200_XML)
    assert (report.driver_version, report.cuda_version, report.attached_gpus) == (
        "580.159.04",
        "13.0",
        1,
    )
    gpu = report.gpus[0]
    assert gpu.pci_bus_id == "00000000:00:06.0"
    assert gpu.product_name == "NVIDIA H200"
    assert gpu.uuid == "GPU-2eeabde5-1867-5a25-7cd4-0f413a2de09e"
    assert gpu.minor_number == 0
    assert gpu.memory_total_mib == 143771


def test_recorded_h200_health_fields() -> None:
    gpu = parse_nvidia_smi_xml(H200_XML).gpus[0]
    assert gpu.ecc_mode_current == "Enabled"
    assert (gpu.ecc_volatile_dbe, gpu.ecc_aggregate_dbe) == (0, 0)
    assert gpu.remapped_rows_uncorrectable == 0
    assert gpu.remapped_rows_pending is False and gpu.remapped_rows_failure is False
    assert gpu.retired_pages_pending is None  # H200 remaps rows, pages are N/A
    assert (gpu.mig_mode_current, gpu.mig_mode_pending) == ("Disabled", "Disabled")
    assert gpu.fabric_state is None and gpu.fabric_status is None
    assert (gpu.pcie_gen_current, gpu.pcie_gen_max) == (5, 5)
    assert (gpu.pcie_width_current, gpu.pcie_width_max) == (16, 16)
    assert gpu.clock_event_reasons_active == ("gpu_idle",)
    assert gpu.persistence_mode == "Enabled"
    assert gpu.recovery_action == "None"


def test_recorded_h200_power_and_thresholds_match_nvml() -> None:
    gpu = parse_nvidia_smi_xml(H200_XML).gpus[0]
    assert gpu.temperature_c == 39
    # nvml-calls.txt recorded on the same machine: slowdown 89, shutdown 95
    assert (gpu.slowdown_temp_c, gpu.shutdown_temp_c) == (89, 95)
    assert gpu.power_draw_w == pytest.approx(124.13)
    assert gpu.power_limit_w == pytest.approx(700.0)


def test_hgx_eight_gpus_with_completed_fabric() -> None:
    report = parse_nvidia_smi_xml(HGX_XML)
    assert report.attached_gpus == len(report.gpus) == 8
    assert {g.product_name for g in report.gpus} == {"NVIDIA H100 80GB HBM3"}
    assert [g.minor_number for g in report.gpus] == list(range(8))
    assert {(g.fabric_state, g.fabric_status) for g in report.gpus} == {("Completed", "Success")}
    assert len({g.uuid for g in report.gpus}) == 8
    assert report.gpus[3].pci_bus_id == "00000000:5D:00.0"


def test_hgx_fabric_in_progress_and_ecc_errors_are_read() -> None:
    first, rest = HGX_XML.split("</gpu>", 1)
    first = first.replace("<state>Completed</state>", "<state>In Progress</state>", 1)
    first = first.replace("<status>Success</status>", "<status>N/A</status>", 1)
    first = first.replace(
        "<dram_uncorrectable>0</dram_uncorrectable>",
        "<dram_uncorrectable>2</dram_uncorrectable>",
        1,
    )
    first = first.replace(
        "<sram_uncorrectable_secded>0</sram_uncorrectable_secded>",
        "<sram_uncorrectable_secded>1</sram_uncorrectable_secded>",
        1,
    )
    first = first.replace("<remapped_row_pending>No<", "<remapped_row_pending>Yes<")
    gpu = parse_nvidia_smi_xml(first + "</gpu>" + rest).gpus[0]
    assert (gpu.fabric_state, gpu.fabric_status) == ("In Progress", None)
    assert gpu.ecc_volatile_dbe == 3
    assert gpu.ecc_aggregate_dbe == 0
    assert gpu.remapped_rows_pending is True


OLD_DRIVER_XML = """<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v11.dtd">
<nvidia_smi_log>
\t<driver_version>470.239.06</driver_version>
\t<cuda_version>11.4</cuda_version>
\t<attached_gpus>1</attached_gpus>
\t<gpu id="00000000:07:00.0">
\t\t<product_name>NVIDIA A100-SXM4-40GB</product_name>
\t\t<persistence_mode>Disabled</persistence_mode>
\t\t<mig_mode><current_mig>Enabled</current_mig><pending_mig>Disabled</pending_mig></mig_mode>
\t\t<uuid>GPU-34319582-d595-d1c7-d1d2-179bcfa61660</uuid>
\t\t<minor_number>3</minor_number>
\t\t<clocks_throttle_reasons>
\t\t\t<clocks_throttle_reason_gpu_idle>Not Active</clocks_throttle_reason_gpu_idle>
\t\t\t<clocks_throttle_reason_hw_slowdown>Active</clocks_throttle_reason_hw_slowdown>
\t\t\t<clocks_throttle_reason_hw_thermal_slowdown>Active</clocks_throttle_reason_hw_thermal_slowdown>
\t\t</clocks_throttle_reasons>
\t\t<fb_memory_usage><total>40536 MiB</total></fb_memory_usage>
\t\t<ecc_mode><current_ecc>Enabled</current_ecc><pending_ecc>Enabled</pending_ecc></ecc_mode>
\t\t<ecc_errors>
\t\t\t<volatile>
\t\t\t\t<single_bit><device_memory>4</device_memory><total>4</total></single_bit>
\t\t\t\t<double_bit><device_memory>1</device_memory><total>1</total></double_bit>
\t\t\t</volatile>
\t\t\t<aggregate>
\t\t\t\t<single_bit><total>12</total></single_bit>
\t\t\t\t<double_bit><total>N/A</total></double_bit>
\t\t\t</aggregate>
\t\t</ecc_errors>
\t\t<retired_pages><pending_blacklist>Yes</pending_blacklist></retired_pages>
\t\t<remapped_rows>N/A</remapped_rows>
\t\t<temperature>
\t\t\t<gpu_temp>84 C</gpu_temp>
\t\t\t<gpu_temp_max_threshold>92 C</gpu_temp_max_threshold>
\t\t\t<gpu_temp_slow_threshold>89 C</gpu_temp_slow_threshold>
\t\t</temperature>
\t\t<power_readings>
\t\t\t<power_draw>391.12 W</power_draw>
\t\t\t<power_limit>400.00 W</power_limit>
\t\t</power_readings>
\t</gpu>
</nvidia_smi_log>
"""


def test_older_driver_spellings() -> None:
    gpu = parse_nvidia_smi_xml(OLD_DRIVER_XML).gpus[0]
    assert gpu.clock_event_reasons_active == ("hw_slowdown", "hw_thermal_slowdown")
    assert (gpu.ecc_volatile_dbe, gpu.ecc_aggregate_dbe) == (1, None)
    assert gpu.retired_pages_pending is True
    assert gpu.remapped_rows_uncorrectable is None and gpu.remapped_rows_pending is None
    assert (gpu.slowdown_temp_c, gpu.shutdown_temp_c) == (89, 92)
    assert (gpu.power_draw_w, gpu.power_limit_w) == (391.12, 400.0)
    assert (gpu.mig_mode_current, gpu.mig_mode_pending) == ("Enabled", "Disabled")
    assert gpu.minor_number == 3


@pytest.mark.parametrize(
    "text",
    [
        H200_XML[: len(H200_XML) // 2],  # truncated mid-file
        "",
        "nvidia-smi: command not found\n",
        "<?xml version='1.0'?><other_root/>",
        H200_XML.replace("<attached_gpus>1</attached_gpus>", ""),
        H200_XML.replace('<gpu id="00000000:00:06.0">', "<gpu>"),
    ],
)
def test_malformed_xml_raises_parse_error(text: str) -> None:
    with pytest.raises(ParseError):
        parse_nvidia_smi_xml(text)


def test_entity_declarations_are_refused() -> None:
    bomb = (
        '<?xml version="1.0"?><!DOCTYPE nvidia_smi_log [<!ENTITY a "aaaaaaaaaa">'
        '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]><nvidia_smi_log>&b;</nvidia_smi_log>'
    )
    with pytest.raises(ParseError, match="entities"):
        parse_nvidia_smi_xml(bomb)


def test_plain_output_of_healthy_node_is_not_a_failure() -> None:
    assert parse_nvidia_smi_failure(read_fixture("h200-vm", "nvidia-smi.txt")) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Failed to initialize NVML: Driver/library version mismatch\n"
            "NVML library version: 570.133\n",
            "Failed to initialize NVML: Driver/library version mismatch",
        ),
        (
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
            "Make sure that the latest NVIDIA driver is installed and running.\n\n",
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
            "Make sure that the latest NVIDIA driver is installed and running.",
        ),
        ("No devices were found\n", "No devices were found"),
        (
            "Unable to determine the device handle for GPU0000:DB:00.0: Unknown Error\n",
            "Unable to determine the device handle for GPU0000:DB:00.0: Unknown Error",
        ),
    ],
)
def test_plain_output_failures(text: str, expected: str) -> None:
    assert parse_nvidia_smi_failure(text) == expected


_TAGS = st.sampled_from(["a", "b", "c"])


@st.composite
def _trees(draw: st.DrawFn, depth: int = 3) -> ET.Element:
    elem = ET.Element(draw(_TAGS))
    elem.text = draw(st.sampled_from(["", "x", "N/A"]))
    if depth:
        for _ in range(draw(st.integers(0, 3))):
            elem.append(draw(_trees(depth - 1)))
    return elem


@settings(max_examples=300, deadline=None)
@given(_trees(), st.lists(_TAGS, min_size=1, max_size=3).map("/".join))
def test_child_path_lookup_answers_as_elementtree_find(root: ET.Element, path: str) -> None:
    """Several ``a`` children, only a later one holding ``b``: ``a/b`` still finds it."""
    assert nvidia_smi._find(root, path) is root.find(path)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["<supported_clocks>", "</supported_clocks>", "x", "<a>", "\n",
                                 "<!ENTITY"]),
                max_size=12).map("".join))
def test_unread_sections_are_cut_like_the_non_greedy_pattern(text: str) -> None:
    pattern = re.compile(r"<supported_clocks>.*?</supported_clocks>", re.DOTALL)
    assert nvidia_smi._without_unread(text) == pattern.sub("", text)
    kept, declares = nvidia_smi._cut_unread(text)
    assert kept == pattern.sub("", text)
    assert declares == any("<!ENTITY" in cut.group(0) for cut in pattern.finditer(text))
