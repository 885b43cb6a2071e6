"""Node-side words that name a catalogued cause of the driver or the GPU: NVML's version
mismatch as notices print it (a capital L), Xid 63's dynamic page retirement waiting for a
driver reload (GPUs before Ampere), a node agent's event for failed row remapping, and
systemd-modules-load refusing nvidia_uvm at boot. Each with a look-alike that stays silent."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

from gpunode.explain import explain_lines
from gpunode.kb import load_kb


def _top(text: str) -> str | None:
    found = explain_lines(text.splitlines(), load_kb())
    return found.matches[0].cause.code if found.matches else None


def _node_cmd(name: str, text: str) -> list[dict[str, Any]]:
    return [{"kind": "node-cmd", "name": name, "text": text + "\n"}]


HOST = {"driver_mode": "host"}

#: https://github.com/Azure/az-cgpu-onboarding/blob/main/docs/Driver-Failure-Mitigation.md
MISMATCH = "Failed to initialize NVML: Driver/Library version mismatch"


def test_nvml_mismatch_with_a_capital_l_is_the_library_mismatch() -> None:
    assert _top(MISMATCH) == "driver_library_mismatch"
    case = synthetic_case("x-nvml", _node_cmd("nvidia-smi.txt", MISMATCH), healthy=False, cluster=HOST)
    assert top_pair(case) == ("driver", "driver_library_mismatch")


def test_nvml_unknown_error_is_not_the_mismatch() -> None:
    assert _top("Failed to initialize NVML: Unknown Error") != "driver_library_mismatch"


#: https://docs.nvidia.com/deploy/dynamic-page-retirement/visibility.html#xids
RETIRED = ("XID 63 Dynamic Page Retirement: New retired page, reload the driver to activate. "
           "(0x00000000012f4a00)")
#: the kernel's own form of the same Xid
RETIRED_NVRM = ("[  812.41] NVRM: Xid (PCI:0000:86:00): 63, Dynamic Page Retirement: New page retired, "
                "reboot to activate (0x00000000012f4a00).")


def test_a_retired_page_waiting_for_a_driver_reload_is_pending_memory_repair() -> None:
    for line in (RETIRED, RETIRED_NVRM):
        assert _top(line) == "row_remap_pending"
    case = synthetic_case("x-dpr", _node_cmd("dmesg.txt", RETIRED), healthy=False,
                          cluster={"gpu_node": {"gpu": "Tesla V100-SXM2-32GB", "gpus": 8}})
    assert top_pair(case) == ("gpu-hardware", "row_remap_pending")


def test_page_retirement_mentioned_at_boot_is_not_read() -> None:
    boot = ("NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.183.01\n"
            "nvidia-persistenced: Dynamic Page Retirement is supported on this GPU")
    assert _top(boot) is None
    case = synthetic_case("x-dpr-ok", _node_cmd("dmesg.txt", boot),
                          cluster={"gpu_node": {"gpu": "Tesla V100-SXM2-32GB"}})
    assert top_pair(case) is None


#: https://support.huaweicloud.com/eu/usermanual-cce/cce_10_0779.html (CCE AI Suite's GPUMemoryError)
FAILED_ROWS = ("GPUServerId=xxx; MemoryErrorType=FailedRemappedRows; Device=xxx; UUID=xxx; SN=xxx; "
               "Message=The device has failed remapped rows, it will go unhealthy.")
#: the same table's event for retired pages over the threshold: not a row remap failure
RETIRED_PAGES = ("GPUServerId=xxx; MemoryErrorType=OverThresholdRetiredPages; Device=xxx; UUID=xxx; SN=xxx; "
                 "Message=The device has more than 60 retired pages")


def test_a_node_agent_s_failed_remapped_rows_event_is_the_remap_failure() -> None:
    assert _top(FAILED_ROWS) == "row_remap_failure"
    assert _top(RETIRED_PAGES) != "row_remap_failure"


#: https://github.com/NixOS/nixpkgs/pull/269473
UVM_REFUSED = ("Nov 13 22:33:04 devserver-fast systemd-modules-load[500]: "
               "Failed to insert module 'nvidia_uvm': No such device")


def test_systemd_modules_load_refusing_nvidia_uvm_is_uvm_missing() -> None:
    case = synthetic_case("x-uvm", _node_cmd("dmesg.txt", UVM_REFUSED), healthy=False, cluster=HOST)
    assert top_pair(case) == ("driver", "nvidia_uvm_missing")


def test_another_module_refused_or_uvm_inserted_is_not_uvm_missing() -> None:
    drm = UVM_REFUSED.replace("nvidia_uvm", "nvidia_drm")
    assert top_pair(synthetic_case("x-drm", _node_cmd("dmesg.txt", drm), healthy=False, cluster=HOST)) != (
        "driver", "nvidia_uvm_missing")
    inserted = "Nov 13 22:33:04 devserver-fast systemd-modules-load[500]: Inserted module 'nvidia_uvm'"
    assert top_pair(synthetic_case("x-uvm-ok", _node_cmd("dmesg.txt", inserted), cluster=HOST)) is None
