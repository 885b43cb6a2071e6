"""GPU monitoring agents on passthrough, sandbox and PCIe nodes: DCGM's own status words and
the NVSwitch module's polls, read by what they name. Each line from a public report (its
address beside it), none from the field cases they were made for.

- DCGM's DCGM_ST_CONNECTION_NOT_VALID (-21), errorString "Host engine connection
  invalid/disconnected" (https://github.com/NVIDIA/DCGM, dcgmlib/dcgm_structs.h and its
  errorString), is a host engine the client cannot reach, whatever API call reported it: the
  error_unreachable class, which dcgm_hostengine_unreachable fits (data/causes/classes.toml).
- DCGM's NVSwitch module polls switches whether or not the board has any; on a board of PCIe
  cards its complaints are no failure (checks/board.py), on an NVSwitch board they stand.
"""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import diagnose_case, top_root_cause

from gpunode.kb import load_kb

#: https://github.com/NVIDIA/dcgm-exporter/issues/61 and the exporter's own wording of the
#: same status (a remote host engine not running): the status string after the API's words.
EXPORTER_61 = ('level=ERROR msg="Failed to connect to remote hostengine" '
               'error="error connecting to nv-hostengine: Host engine connection invalid/disconnected"')
#: dcgmi against a node with no host engine (https://github.com/NVIDIA/dcgm-exporter/issues/144,
#: "dcgmi discovery -l returned : Cannot connect"; dcgmi's message for the status).
DCGMI = "Error: Unable to connect to host engine. Host engine connection invalid/disconnected."
#: Another DCGM status, a device's: stays in the device class (https://github.com/NVIDIA/DCGM).
NVML_STATUS = "dcgmInit failed: DCGM_ST_NVML_ERROR"
#: https://github.com/NVIDIA/DCGM/issues/159: nv-hostengine.log on a node without NVSwitches.
DCGM_159 = ("2024-04-02 12:54:06.828 ERROR [1264985:1264994] [[NvSwitch]] Not attached to NvSwitches. "
            "Aborting [/workspaces/dcgm-rel_dcgm_3_1-postmerge/modules/nvswitch/DcgmNvSwitchManager.cpp:967] "
            "[DcgmNs::DcgmNvSwitchManager::ReadNvSwitchStatusAllSwitches]")
#: https://github.com/NVIDIA/DCGM/issues/174 (also NVIDIA/dcgm-exporter#334).
DCGM_174 = ("2024-05-24 10:22:29.245 ERROR [5231:5273] [[NvSwitch]] ReadNvSwitchStatusAllSwitches() returned "
            "Object is in an undefined state [/workspaces/dcgm-rel_dcgm_2_2-postmerge/modules/nvswitch/"
            "DcgmModuleNvSwitch.cpp:388] [DcgmNs::DcgmModuleNvSwitch::RunOnce]")


def _case(evidence: list[dict[str, Any]], gpu_node: dict[str, Any] | None = None) -> Case:
    raw: dict[str, Any] = {"id": "x-monitoring", "source": "https://example.org/x", "title": "t",
                           "platform": "generic", "evidence": evidence, "expect": {"healthy": True}}
    if gpu_node:
        raw["cluster"] = {"gpu_node": gpu_node}
    return msgspec.convert(raw, Case)


def _top(case: Case) -> tuple[str, str] | None:
    top = top_root_cause(diagnose_case(case), case.node)
    return (top.component, top.cause) if top else None


def test_dcgm_s_connection_status_is_a_host_engine_not_reached() -> None:
    kb = load_kb()
    for line in (EXPORTER_61, DCGMI, "dcgmConnect() failed: DCGM_ST_CONNECTION_NOT_VALID"):
        assert kb.class_of(line) == "error_unreachable", line
    assert kb.class_of(NVML_STATUS) == "error_device"  # a device's status keeps its class


def test_an_exporter_that_exits_on_the_connection_status_names_the_host_engine() -> None:
    # the status, then the exporter's own wrap-up in a configuration's words: the status decides
    log = f"{DCGMI}\nERROR: failed to apply the collector configuration\nexiting\n"
    crashing = {"kind": "pod-state", "component": "dcgm-exporter", "state": "CrashLoopBackOff", "restarts": 3}
    case = _case([crashing,
                  {"kind": "log", "component": "dcgm-exporter", "previous": True, "text": log}])
    assert _top(case) == ("dcgm-exporter", "dcgm_hostengine_unreachable")


def _bare(line: str) -> str:
    """The line without the time nv-hostengine.log puts first, as the engine's records read
    where the report pastes them without it (NVIDIA/gpu-monitoring-tools#194): its level
    first, which the decisive-line reader reads as an error record."""
    return line.split(" ", 2)[2]


def _switch_poll(gpu_node: dict[str, Any]) -> Case:
    log = f"level=info msg=\"Starting webserver\"\n{_bare(DCGM_159)}\n{_bare(DCGM_174)}\n{_bare(DCGM_159)}\n"
    return _case([{"kind": "pod-state", "component": "dcgm-exporter", "state": "Running"},
                  {"kind": "log", "component": "dcgm-exporter", "text": log}], gpu_node)


def test_the_nvswitch_module_s_polls_on_a_board_of_pcie_cards_are_no_failure() -> None:
    assert _top(_switch_poll({"gpu": "Tesla V100-PCIE-32GB", "gpus": 4})) is None
    assert _top(_switch_poll({"gpu": "NVIDIA L40S", "gpus": 2})) is None


def test_the_same_polls_on_an_nvswitch_board_still_alarm() -> None:
    top = _top(_switch_poll({"gpu": "NVIDIA H100 80GB HBM3", "gpus": 8}))
    assert top is not None and top[0] == "dcgm-exporter"


#: The kernel waiting on a GPU still open at unbind (https://github.com/bryansteiner/
#: gpu-passthrough-tutorial/issues/39; NVIDIA/open-gpu-kernel-modules#1374 reads nv-pci.c's wait).
REMOVAL = "[ 4211.873101] NVRM: Attempting to remove device 0000:01:00.0 with non-zero usage count!"
#: cAdvisor's accelerator manager in the kubelet once it holds NVML handles on the GPUs
#: (google/cadvisor accelerators/nvidia.go's klog line, as the kubelet's journal prints it).
CADVISOR = ("Mar 02 09:14:07 node-3 kubelet[2210]: I0302 09:14:07.120044    2210 nvidia.go:104] "
            "NVML initialized. Number of nvidia devices: 4")


def _host(dmesg: str | None, kubelet: str | None) -> Case:
    evidence: list[dict[str, Any]] = []
    if dmesg is not None:
        evidence.append({"kind": "node-cmd", "name": "dmesg.txt", "text": dmesg + "\n"})
    if kubelet is not None:
        evidence.append({"kind": "node-cmd", "name": "journal-kubelet.txt", "text": kubelet + "\n"})
    return _case(evidence, {"gpu": "NVIDIA A40", "gpus": 4})


def test_a_gpu_whose_unbind_waits_while_the_kubelet_holds_nvml_is_the_kubelet_s() -> None:
    assert _top(_host(REMOVAL, CADVISOR)) == ("kubelet", "error_device")


def test_the_kubelet_s_nvml_alone_or_an_unbind_with_no_holder_named_is_no_kubelet_finding() -> None:
    assert _top(_host(None, CADVISOR)) is None  # cAdvisor's metrics on a node that unbinds nothing
    started = "Mar 02 09:14:07 node-3 kubelet[2210]: I0302 09:14:07.1 2210 server.go:416] started"
    top = _top(_host(REMOVAL, started))
    assert top is None or top[0] != "kubelet"
