"""The layer an error names, below the driver: nvidia-smi that started NVML (so the driver
answered) and then could not open one GPU by its handle speaks of that GPU, not of the
driver; the kernel's log settles it for the driver only where it blames the driver and not
the GPU."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import top_pair

from gpunode.catalog import load_catalog


def _case(*evidence: dict[str, Any], gpus: int | None = None, host: bool = False) -> Case:
    raw: dict[str, Any] = {"id": "x-gpu-layers", "source": "https://example.org/x", "title": "t",
                           "platform": "generic", "evidence": list(evidence), "expect": {"healthy": False}}
    if gpus is not None:
        raw["cluster"] = {"driver_mode": "host", "gpu_node": {"gpus": gpus, "gpu": "Tesla T4"}}
    elif host:
        raw["cluster"] = {"driver_mode": "host"}
    return msgspec.convert(raw, Case)


def _smi(text: str) -> dict[str, Any]:
    return {"kind": "node-cmd", "name": "nvidia-smi.txt", "text": text}


def _dmesg(text: str) -> dict[str, Any]:
    return {"kind": "node-cmd", "name": "dmesg.txt", "text": text}


#: NVIDIA/open-gpu-kernel-modules#387: one of four RTX 2080 Ti drops out under load (as pasted).
_ONE_OF_FOUR = "Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error\n"


def test_one_gpu_nvml_cannot_open_while_its_siblings_answer_fell_off_the_bus() -> None:
    assert top_pair(_case(_smi(_ONE_OF_FOUR), gpus=4)) == ("gpu-hardware", "gpu_fallen_off_bus")


def test_the_only_gpu_nvml_cannot_open_is_a_device_error_of_the_gpu() -> None:
    # the same words without a sibling that answers: the GPU's, its class (no space before
    # the bus id, as some releases print it)
    text = "Unable to determine the device handle for GPU0000:07:00.0: Unknown Error\n"
    assert top_pair(_case(_smi(text), gpus=1)) == ("gpu-hardware", "error_device")


def test_a_lost_gpu_keeps_its_catalogued_cause() -> None:
    text = "Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost\n"
    assert top_pair(_case(_smi(text), gpus=1)) == ("gpu-hardware", "gpu_fallen_off_bus")


def test_a_handle_failure_the_kernel_blames_on_the_driver_stays_the_driver_s() -> None:
    # the driver's GSP firmware failing to boot (a driver line, no GPU hardware line): the
    # driver could not bring the GPU up, so the handle failure is the driver's
    gsp = ("[   12.301224] NVRM: _kgspBootGspRm: unexpected WPR2 already up, cannot proceed with "
           "booting GSP\n")
    assert top_pair(_case(_smi(_ONE_OF_FOUR), _dmesg(gsp), gpus=4))[0] == "driver"


def test_nvml_that_cannot_start_is_not_the_gpu_s() -> None:
    # Azure/AKS#4870: NVML itself fails to start; no GPU was opened, nothing names one
    nvml = _smi("Failed to initialize NVML: Unknown Error\n")
    assert top_pair(_case(nvml, gpus=1)) == ("driver", "error_device")


def test_a_table_that_lists_every_gpu_blames_no_gpu() -> None:
    table = ("+-----------------------------------------------------------------------------+\n"
             "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |\n"
             "|   0  Tesla T4            On   | 00000000:00:1E.0 Off |                    0 |\n")
    top = top_pair(_case(_smi(table), gpus=1))
    assert top is None or top[0] != "gpu-hardware"


def _nfd_log(text: str) -> dict[str, Any]:
    return {"kind": "log", "component": "nfd", "text": text}


#: kubernetes-sigs/node-feature-discovery#308: a Jetson kernel release with '+' (as pasted).
_DROPPED = ("2020/05/14 15:12:57 Ignoring invalid feature value kernel-version.full=4.9.140-l4t-r32.3.1"
            "+g47e7e1cb0b49: [a valid label must be an empty string or consist of alphanumeric characters, "
            "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
            "'my_value',  or '12345', regex used for validation is "
            "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')]\n")


def test_a_running_component_that_drops_an_invalid_value_is_degraded_with_that_line() -> None:
    top = top_pair(_case(_nfd_log(_DROPPED + "2020/05/14 15:12:57 Sending labeling request to nfd-master\n")))
    assert top == ("nfd", "error_config_invalid")


def test_a_running_component_that_only_reports_what_it_labels_stays_healthy() -> None:
    # the same worker without the dropped value: its routine lines accuse nothing
    text = ("2020/05/14 15:12:57 Feature discovery done\n"
            "2020/05/14 15:12:57 Sending labeling request to nfd-master\n")
    top = top_pair(_case(_nfd_log(text)))
    assert top is None or top[0] != "nfd"


def _workload_log(text: str) -> dict[str, Any]:
    return {"kind": "log", "object": {"kind": "Pod", "name": "nccl-worker-0", "namespace": "default"},
            "text": text}


def test_a_completion_refused_for_memory_access_names_the_gpudirect_path() -> None:
    """NVIDIA/nccl#928: completion status 4 (IBV_WC_LOC_PROT_ERR) with GPU buffers, PCIe ACS
    redirecting the NIC's peer traffic; status 12 (retry exceeded, NVIDIA/nccl#426) stays the
    links'."""
    named = load_catalog().named_in
    acs = ("NCCL WARN NET/IB : Got completion from peer fe80::966d:ae03:8b:df54%ib0<33397> with error 4, "
           "opcode 32611, len 32611, vendor err 81 (Send)")
    assert named(acs) == "gpudirect-rdma"
    assert top_pair(_case(_workload_log(acs + "\n")))[0] == "gpudirect-rdma"
    retry = ("-worker-1:946:988 [0] transport/net_ib.cc:839 NCCL WARN NET/IB : Got completion with "
             "error 12, opcode 1, len 0, vendor err 129")
    assert named(retry) == "rdma-links"
    assert named(retry.replace("error 12", "error 1")) == "rdma-links"  # not a prefix of 10


def test_a_job_that_cannot_register_gpu_memory_for_rdma_names_the_peer_memory_module() -> None:
    # Mellanox/gpu_direct_rdma_access#5: nv_peer_mem disabled (the sample's own lines)
    text = ("ibv_reg_mr(pd 0x23f8ec0, buf 0x7f88c7200000, size = 100, access_flags = 0x00000007)\n"
            "Couldn't register GPU MR\n"
            "deallocating RX GPU buffer\n")
    assert top_pair(_case(_workload_log(text))) == ("driver", "peermem_not_loaded")
    # the same job registering its buffer says nothing against the driver
    fine = "ibv_reg_mr(pd 0x23f8ec0, buf 0x7f88c7200000, size = 100, access_flags = 0x00000007)\n"
    assert top_pair(_case(_workload_log(fine))) is None


def _nvlink_s(text: str) -> dict[str, Any]:
    return {"kind": "node-cmd", "name": "nvidia-smi-nvlink-s.txt", "text": text}


_DARK = "NVML: Unable to retrieve NVLink information as all links are inActive\n"


def test_a_gpu_whose_links_nvml_reports_all_inactive_on_an_nvswitch_board_is_down() -> None:
    # leptonai/gpud#1085: one B200 of an HGX board (as pasted; the UUID elided there too)
    text = "GPU 2: NVIDIA B200 (UUID: GPU-xxx)\n" + _DARK
    assert top_pair(_case(_nvlink_s(text))) == ("nvlink-fabric", "nvlink_down")


def test_a_bridged_card_whose_twin_has_links_up_is_down_and_cards_without_a_bridge_are_not() -> None:
    lit = "GPU 0: NVIDIA GeForce RTX 2080 Ti (UUID: GPU-0a)\n\t Link 0: 25.781 GB/s\n\t Link 1: 25.781 GB/s\n"
    dark = "GPU 1: NVIDIA GeForce RTX 2080 Ti (UUID: GPU-0b)\n" + _DARK
    assert top_pair(_case(_nvlink_s(lit + dark), gpus=2)) == ("nvlink-fabric", "nvlink_down")
    # two PCIe cards with no bridge fitted print the sentence for both: nothing to link to
    both = dark.replace("GPU 1", "GPU 0").replace("0b", "0a") + dark
    top = top_pair(_case(_nvlink_s(both), gpus=2))
    assert top is None or top[0] != "nvlink-fabric"


def test_a_driver_module_the_kernel_oopsed_in_while_unloading_it_failed_to_unload() -> None:
    """NVIDIA/aicr#1553: nvidia_uvm wedged in uvm_global_exit after the operator's driver was
    uninstalled (as pasted); the module's state flag '-' in the oops's module list says it was
    being unloaded."""
    oops = ("Modules linked in: ... nvidia_uvm(OE-) nvidia(OE) ...\n"
            "  uvm_pmm_devmem_exit+0x88/0x108 [nvidia_uvm]\n"
            "  uvm_global_exit+0x68/0xe8 [nvidia_uvm]\n")
    assert top_pair(_case(_dmesg(oops))) == ("driver", "error_module_load")


def test_an_oops_elsewhere_that_lists_a_settled_driver_module_blames_no_driver() -> None:
    # the same list printed for another module's fault: the NVIDIA modules only taint it
    oops = ("Modules linked in: xt_conntrack nvidia_uvm(POE) nvidia(POE) ena(E) ...\n"
            "  ena_io_poll+0x1c/0x2e0 [ena]\n")
    top = top_pair(_case(_dmesg(oops)))
    assert top is None or top[0] != "driver"


def _validator_log(text: str) -> list[dict[str, Any]]:
    return [{"kind": "pod-state", "component": "validator", "container": "driver-validation", "init": True,
             "state": "Init:CrashLoopBackOff"},
            {"kind": "log", "component": "validator", "container": "driver-validation", "init": True,
             "previous": True, "text": text}]


#: NVIDIA/gpu-operator#671: the validator's /dev/char symlink step on a host whose driver works.
_MODESET = ("Error: error validating driver installation: error creating symlink creator: failed to load "
            "NVIDIA kernel modules: failed to load module nvidia-modeset: exit status 1; output=modprobe: "
            "ERROR: could not insert 'nvidia_modeset': No such device\n")


def test_a_display_module_refused_where_the_driver_serves_its_gpus_is_the_asking_step_s() -> None:
    # a driver pre-installed on the host (the operator's driver disabled), as in the report
    assert top_pair(_case(*_validator_log(_MODESET), host=True)) == ("validator", "error_module_load")


def test_a_display_module_refused_where_the_driver_does_not_answer_is_the_driver_s() -> None:
    down = _smi("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                "Make sure that the latest NVIDIA driver is installed and running.\n")
    assert top_pair(_case(*_validator_log(_MODESET), down, host=True))[0] == "driver"


def test_the_core_module_refused_is_the_driver_s_whatever_else_answers() -> None:
    core = _MODESET.replace("nvidia-modeset", "nvidia").replace("'nvidia_modeset'", "'nvidia'")
    assert top_pair(_case(*_validator_log(core), host=True))[0] == "driver"


def _inspect_failed(component: str, reference: str) -> dict[str, Any]:
    return {"kind": "event", "component": component, "type": "Warning", "reason": "InspectFailed",
            "message": f'Failed to apply default image tag "{reference}": couldn\'t parse image reference '
                       f'"{reference}": invalid reference format: repository name must be lowercase'}


def test_one_unparsable_image_on_several_operands_is_the_operator_s_rendering() -> None:
    # NVIDIA/gpu-operator#366: the placeholder left in the driver's and the toolkit's pods
    case = _case(_inspect_failed("driver", "FILLED_BY_THE_OPERATOR"),
                 _inspect_failed("container-toolkit", "FILLED_BY_THE_OPERATOR"))
    assert top_pair(case) == ("gpu-operator", "error_config_invalid")


def test_one_operand_s_unparsable_image_stays_the_operand_s() -> None:
    top = top_pair(_case(_inspect_failed("driver", "FILLED_BY_THE_OPERATOR")))
    assert top is not None and top[0] == "driver"
