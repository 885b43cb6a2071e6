"""What real failure reports show, placed as the collector writes it and read by the engine:
the interconnect outputs under their bundle names, the host journals of Fabric Manager and
IMEX, GPU workloads' own logs (NCCL, NVML), DaemonSet events and admission refusals."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from builder import build_case
from case import Case, CaseError, load_case
from components import extras
from scoreboard import diagnose_case, top_root_cause

from gpunode.catalog import Recogniser, load_catalog

_JOB = {"kind": "Pod", "name": "train-0", "namespace": "ml"}

# Lines as gpu-operator#610 shows journalctl -u nvidia-fabricmanager (host and times changed).
_FM_FAILED = """\
2023-11-15T14:15:47+0800 gpu-wk-01 systemd[1]: Starting NVIDIA fabric manager service...
2023-11-15T14:15:47+0800 gpu-wk-01 nv-fabricmanager[4177]: request to query NVSwitch device information \
from NVSwitch driver failed with error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]
2023-11-15T14:15:47+0800 gpu-wk-01 systemd[1]: nvidia-fabricmanager.service: Control process exited, \
code=exited, status=1/FAILURE
2023-11-15T14:15:47+0800 gpu-wk-01 systemd[1]: nvidia-fabricmanager.service: Failed with result 'exit-code'.
2023-11-15T14:15:47+0800 gpu-wk-01 systemd[1]: Failed to start NVIDIA fabric manager service.
"""
# A failed start, then a start that worked (nvtrust#128's wording of a healthy start).
_FM_RECOVERED = _FM_FAILED + """\
2023-11-15T14:20:01+0800 gpu-wk-01 systemd[1]: Starting nvidia-fabricmanager.service - NVIDIA fabric \
manager service...
2023-11-15T14:20:46+0800 gpu-wk-01 nv-fabricmanager[1120]: Connected to 1 node.
2023-11-15T14:20:48+0800 gpu-wk-01 systemd[1]: Started nvidia-fabricmanager.service - NVIDIA fabric \
manager service.
"""
_NCCL_SOCKETS = """\
train-0:123:456 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.5<0>
train-0:123:456 [0] NCCL INFO NET/IB : No device found.
train-0:123:456 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.5<0>
train-0:123:456 [0] NCCL INFO Using network Socket
"""
_NCCL_IB = ("train-0:123:456 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; "
            "OOB ib0:10.0.0.1<0>\n")


def _case(*evidence: dict[str, Any], **extra: Any) -> Case:
    raw = {"id": "x-collected", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "evidence": list(evidence), "expect": {"healthy": True}, **extra}
    return msgspec.convert(raw, Case)


def _top(case: Case) -> tuple[str, str, str] | None:
    top = top_root_cause(diagnose_case(case), case.node)
    return (top.component, top.cause, top.title) if top else None


@pytest.mark.parametrize("name", [
    "nvidia-smi-nvlink-s.txt", "nvidia-smi-nvlink-e.txt", "nvidia-smi-topo-m.txt", "sysfs-infiniband.txt",
    "ibstat.txt", "ibv_devinfo.txt", "imex.txt", "journal-fabricmanager.txt", "journal-imex.txt"])
def test_interconnect_and_journal_outputs_land_under_their_bundle_names(name: str, tmp_path: Path) -> None:
    case = _case({"kind": "node-cmd", "name": name, "text": "x\n"})
    out = build_case(case, tmp_path / "b")
    assert (out / "nodes" / "gpu-wk-01" / "cmd" / name).read_text() == "x\n"


def test_ibstat_of_a_port_stuck_in_polling_is_read_where_sysfs_was_not() -> None:
    ibstat = ("CA 'mlx5_0'\n\tCA type: MT4123\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: Down\n"
              "\t\tPhysical state: Polling\n\t\tRate: 10\n\t\tBase lid: 65535\n\t\tLink layer: InfiniBand\n")
    found = _top(_case({"kind": "node-cmd", "name": "ibstat.txt", "text": ibstat}))
    assert found is not None and found[0] == "rdma-links"


def test_a_fabric_manager_unit_that_failed_is_named_by_its_own_journal_line() -> None:
    found = _top(_case({"kind": "node-cmd", "name": "journal-fabricmanager.txt", "text": _FM_FAILED}))
    assert found is not None and found[0] == "fabric-manager"
    assert "request to query NVSwitch device information" in found[2]  # its line, not systemd's


def test_a_fabric_manager_unit_started_again_since_is_not_failed() -> None:
    case = _case({"kind": "node-cmd", "name": "journal-fabricmanager.txt", "text": _FM_RECOVERED})
    assert _top(case) is None


def test_an_imex_unit_stopped_on_purpose_is_not_failed() -> None:
    text = ("2025-03-01T10:00:00+0000 gpu-wk-01 systemd[1]: Stopping NVIDIA IMEX service...\n"
            "2025-03-01T10:00:00+0000 gpu-wk-01 systemd[1]: nvidia-imex.service: Deactivated successfully.\n"
            "2025-03-01T10:00:00+0000 gpu-wk-01 systemd[1]: Stopped NVIDIA IMEX service.\n")
    assert _top(_case({"kind": "node-cmd", "name": "journal-imex.txt", "text": text})) is None


def test_an_imex_unit_that_exited_is_failed_with_its_line() -> None:
    text = ("2025-03-01T10:00:00+0000 gpu-wk-01 systemd[1]: Starting NVIDIA IMEX service...\n"
            "2025-03-01T10:00:01+0000 gpu-wk-01 nvidia-imex[2211]: ERROR: failed to open "
            "/etc/nvidia-imex/nodes_config.cfg: No such file or directory\n"
            "2025-03-01T10:00:01+0000 gpu-wk-01 systemd[1]: nvidia-imex.service: Main process exited, "
            "code=exited, status=1/FAILURE\n"
            "2025-03-01T10:00:01+0000 gpu-wk-01 systemd[1]: nvidia-imex.service: Failed with result "
            "'exit-code'.\n")
    found = _top(_case({"kind": "node-cmd", "name": "journal-imex.txt", "text": text}))
    assert found is not None and found[0] == "imex" and "nodes_config.cfg" in found[2]


def test_nvml_unknown_error_in_a_running_workloads_log_accuses_the_toolkit() -> None:
    found = _top(_case({"kind": "log", "object": _JOB, "text": "Failed to initialize NVML: Unknown Error\n"}))
    assert found is not None and found[:2] == ("container-toolkit", "nvml_device_access_lost")
    assert "ml/train-0" in found[2]


def test_the_workload_log_lands_in_the_running_workload_pod(tmp_path: Path) -> None:
    case = _case({"kind": "log", "object": _JOB, "text": _NCCL_SOCKETS})
    out = build_case(case, tmp_path / "b")
    assert (out / "logs" / "ml" / "train-0" / "cuda.log").read_text() == _NCCL_SOCKETS


def test_nccl_falling_back_to_sockets_on_a_node_with_rdma_is_degraded_gpudirect() -> None:
    # falcon-ai's GPU nodes run the Network Operator's MOFED driver: the node has RDMA ports
    found = _top(_case({"kind": "log", "object": _JOB, "text": _NCCL_SOCKETS}))
    assert found is not None and found[:2] == ("gpudirect-rdma", "nccl_socket_fallback")


def test_nccl_on_sockets_without_rdma_and_nccl_on_ib_are_healthy() -> None:
    no_rdma = _case({"kind": "log", "object": _JOB, "text": _NCCL_SOCKETS},
                    cluster={"components": ["gpu-operator", "nfd", "gfd", "dcgm-exporter", "validator"],
                             "gpu_node": {"nics": 0}})
    assert _top(no_rdma) is None
    assert _top(_case({"kind": "log", "object": _JOB, "text": _NCCL_IB})) is None


def test_a_log_names_either_a_component_or_a_pod(tmp_path: Path) -> None:
    path = tmp_path / "x-collected.yaml"
    path.write_text("id: x-collected\nsource: https://example.org/x\ntitle: t\nplatform: generic\n"
                    "evidence:\n  - kind: log\n    text: hi\nexpect: {healthy: true}\n")
    with pytest.raises(CaseError, match="a log names either component or object"):
        load_case(path)


_QUOTA = ("Error creating: insufficient quota to match these scopes: [{PriorityClass In "
          "[system-node-critical system-cluster-critical]}]")


@pytest.mark.parametrize("involved", [
    {"component": "device-plugin", "object": {"kind": "DaemonSet"}},
    {"object": {"kind": "DaemonSet", "name": "nvidia-device-plugin-daemonset"}},
])
def test_a_daemonset_refused_its_pods_by_a_quota_is_read_from_its_event(involved: dict[str, Any]) -> None:
    case = _case({"kind": "pod-missing", "component": "device-plugin"},
                 {"kind": "event", "reason": "FailedCreate", "message": _QUOTA, **involved})
    report = diagnose_case(case)
    top = top_root_cause(report, case.node)
    assert top is not None and top.component == "device-plugin" and "insufficient quota" in top.title


def test_a_daemonset_event_is_recorded_by_the_controller_in_its_namespace(tmp_path: Path) -> None:
    case = _case({"kind": "event", "object": {"kind": "DaemonSet", "name": "nvidia-device-plugin-daemonset"},
                  "reason": "FailedCreate", "message": _QUOTA})
    out = build_case(case, tmp_path / "b")
    events = msgspec.json.decode((out / "cluster" / "events.json").read_bytes())["items"]
    found = [e for e in events if e["reason"] == "FailedCreate"]
    assert found and found[0]["involvedObject"]["kind"] == "DaemonSet"
    assert found[0]["involvedObject"]["namespace"] == "gpu-operator"
    assert found[0]["source"]["component"] == "daemonset-controller"


def test_a_component_pod_refused_at_admission_is_failed_without_containers(tmp_path: Path) -> None:
    message = ("Allocate failed due to rpc error: code = Unknown desc = no healthy devices, "
               "which is unexpected")
    case = _case({"kind": "pod-state", "component": "dcgm-exporter", "state": "UnexpectedAdmissionError",
                  "message": message})
    out = build_case(case, tmp_path / "b")
    pods = msgspec.json.decode((out / "cluster" / "pods.json").read_bytes())["items"]
    pod = next(p for p in pods if p["metadata"]["name"].startswith("nvidia-dcgm-exporter")
               and p["spec"].get("nodeName") == "gpu-wk-01")
    assert pod["status"]["phase"] == "Failed" and pod["status"]["reason"] == "UnexpectedAdmissionError"
    assert "containerStatuses" not in pod["status"]
    assert _top(case) is not None


def test_an_init_container_that_cannot_run_names_the_layer_its_message_names() -> None:
    message = ("failed to create containerd task: failed to create shim task: OCI runtime create failed: "
               "runc create failed: unable to start container process: error during container init: error "
               "running hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as "
               "'legacy'\nnvidia-container-cli: initialization error: load library failed: "
               "libnvidia-ml.so.1: cannot open shared object file: no such file or directory: unknown")
    found = _top(_case({"kind": "pod-state", "component": "device-plugin", "state": "Init:RunContainerError",
                        "message": message}))
    assert found is not None and found[0] == "container-toolkit"


@pytest.mark.parametrize("component", sorted(extras()))
def test_a_component_no_scenario_deploys_gets_its_real_pod(component: str, tmp_path: Path) -> None:
    """Issue 21: the DRA driver, HAMi, Volcano, GKE's and the sandbox device plugin run as their
    real manifests deploy them, and the catalog recognises their pods."""
    line = "E1205 10:00:00.000000 1 main.go:42] boom\n"
    case = _case({"kind": "log", "component": component, "text": line})
    out = build_case(case, tmp_path / "b")
    pods = msgspec.json.decode((out / "cluster" / "pods.json").read_bytes())["items"]
    recogniser = Recogniser(load_catalog())
    mine = [p for p in pods if recogniser.component_of(
        [_owner(o) for o in p["metadata"].get("ownerReferences", [])], p["metadata"].get("labels", {}),
        [(c["name"], c["image"]) for c in p["spec"]["containers"]]) == component]
    assert mine, f"no {component} pod"
    placed = [p for p in mine if (out / "logs" / p["metadata"]["namespace"] / p["metadata"]["name"]).is_dir()]
    assert len(placed) == 1
    spec = extras()[component].daemonset or extras()[component].deployment
    assert spec is not None and placed[0]["metadata"]["namespace"] == spec.namespace
    if load_catalog().get(component).scope == "node":
        assert placed[0]["spec"]["nodeName"] == "gpu-wk-01"


def _owner(ref: dict[str, str]) -> str:
    """A pod's owner as the catalog names it: a ReplicaSet by its Deployment."""
    return ref["name"].rsplit("-", 1)[0] if ref["kind"] == "ReplicaSet" else ref["name"]


# nvidia-smi -q's Fabric section on an NVSwitch system before Fabric Manager registered the GPU
# (the wording NVSentinel#883 and the Fabric Manager guide show).
_FABRIC_IN_PROGRESS = """\
    Fabric
        State                             : In Progress
        Status                            : N/A
        CliqueId                          : N/A
        ClusterUUID                       : N/A
        Health
            Bandwidth                     : N/A
"""


def test_the_pasted_fabric_section_lands_in_each_gpus_fabric_element(tmp_path: Path) -> None:
    case = _case({"kind": "gpu-fabric", "text": _FABRIC_IN_PROGRESS, "gpus": [2]})
    xml = (build_case(case, tmp_path / "b") / "nodes" / "gpu-wk-01" / "cmd" / "nvidia-smi-q.xml").read_text()
    states = re.findall(r"<fabric>\s*<state>([^<]*)</state>\s*<status>([^<]*)</status>", xml)
    assert states[2] == ("In Progress", "N/A")
    assert all(s == ("Completed", "Success") for i, s in enumerate(states) if i != 2)


def test_a_fabric_still_in_progress_is_fabric_manager_not_running() -> None:
    found = _top(_case({"kind": "gpu-fabric", "text": _FABRIC_IN_PROGRESS}))
    assert found is not None and found[:2] == ("fabric-manager", "fabric_manager_not_running")


def test_the_units_journal_line_explains_a_fabric_left_in_progress() -> None:
    """The state (fabric In Progress: Fabric Manager not running) is never the whole answer
    while the unit's own journal says why it stopped."""
    found = _top(_case({"kind": "gpu-fabric", "text": _FABRIC_IN_PROGRESS},
                       {"kind": "node-cmd", "name": "journal-fabricmanager.txt", "text": _FM_FAILED}))
    assert found is not None and found[0] == "fabric-manager"
    assert "NV_WARN_NOTHING_TO_DO" in found[2]


def test_the_start_scripts_exit_code_gives_way_to_the_error_before_it() -> None:
    """data-infra/cube-studio#29's journal: nvidia-fabricmanager-start.sh reports the command
    it ran and its exit code after nv-fabricmanager said why."""
    at = "2025-09-18T03:19:01+0000 gpu-wk-01"
    text = (f"{at} systemd[1]: Starting NVIDIA fabric manager service...\n"
            f"{at} nvidia-fabricmanager-start.sh[4753]: Detected Pre-NVL5 system\n"
            f"{at} nvidia-fabricmanager-start.sh[4756]: request to query NVSwitch device information from "
            "NVSwitch driver failed with error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]\n"
            f"{at} nvidia-fabricmanager-start.sh[4753]: \"/usr/bin/nv-fabricmanager -c "
            "/usr/share/nvidia/nvswitch/fabricmanager.cfg\" failed! Exit code: 1\n"
            f"{at} systemd[1]: nvidia-fabricmanager.service: Control process exited, code=exited, "
            "status=1/FAILURE\n")
    found = _top(_case({"kind": "node-cmd", "name": "journal-fabricmanager.txt", "text": text}))
    assert found is not None and found[0] == "fabric-manager" and "NV_WARN_NOTHING_TO_DO" in found[2]


def _status(case: Case, component: str) -> str:
    node = next(n for n in diagnose_case(case).nodes if n.name == case.node)
    return next(c.status.value for c in node.components if c.component == component)


def test_fabric_manager_with_nothing_to_do_on_pcie_cards_is_no_failure() -> None:
    """gpu-operator#610: two A40 cards on an NVLink bridge have no NVSwitch, so Fabric Manager
    exits with NV_WARN_NOTHING_TO_DO there by design; on the HGX board of the other tests the
    same journal is a failure (test_a_fabric_manager_unit_that_failed_...)."""
    case = _case({"kind": "node-cmd", "name": "journal-fabricmanager.txt", "text": _FM_FAILED},
                 cluster={"driver_mode": "host", "gpu_node": {"gpus": 2, "gpu": "A40"}})
    assert _top(case) is None
    assert _status(case, "fabric-manager") == "not-deployed"


def test_fabric_manager_with_nothing_to_do_where_the_board_is_unknown_is_not_failed() -> None:
    """Without a GPU model, NVSwitch device or fabric state to read, the board may or may not
    have NVSwitches: the unit is unknown, never failed."""
    case = _case({"kind": "node-cmd", "name": "journal-fabricmanager.txt", "text": _FM_FAILED},
                 {"kind": "node-labels", "labels": {"nvidia.com/gpu.product": None}},
                 {"kind": "node-cmd", "name": "nvidia-smi.txt",
                  "text": "Failed to initialize NVML: Unknown Error\n"})
    assert _status(case, "fabric-manager") == "unknown"


def test_a_unit_whose_journal_holds_only_systemds_lines_is_read_in_its_own_log_file() -> None:
    at = "2024-11-04T10:00:01+0000 gpu-wk-01"
    journal = (f"{at} systemd[1]: Starting NVIDIA fabric manager service...\n"
               f"{at} systemd[1]: nvidia-fabricmanager.service: Control process exited, code=exited, "
               "status=1/FAILURE\n"
               f"{at} systemd[1]: Failed to start NVIDIA fabric manager service.\n")
    # siderolabs/extensions#511: the one line Fabric Manager logged
    log = ("[Nov 04 2024 10:00:01] [INFO] [tid 812] Fabric Manager version 550.127.05 is running\n"
           "[Nov 04 2024 10:00:01] [ERROR] [tid 812] fabric manager config file item: "
           "FABRIC_NODE_CONFIG_FILE has an invalid value\n")
    found = _top(_case({"kind": "node-cmd", "name": "journal-fabricmanager.txt", "text": journal},
                       {"kind": "node-file", "path": "var/log/fabricmanager.log", "text": log}))
    assert found is not None and found[0] == "fabric-manager" and "FABRIC_NODE_CONFIG_FILE" in found[2]
    without_log = _top(_case({"kind": "node-cmd", "name": "journal-fabricmanager.txt", "text": journal}))
    assert without_log is not None and without_log[:2] == ("fabric-manager", "fabric_manager_not_running")


# CanvOS#700: the start script's precheck, as journalctl -u nvidia-fabricmanager shows it
# without systemd's lines (host changed).
_FM_PRECHECK = """\
Jul 20 16:15:36 edge-1 nvidia-fabricmanager-start.sh[2011]: Detected NVL5+ system
Jul 20 16:15:36 edge-1 nvidia-fabricmanager-start.sh[2011]: Kernel module "ib_umad" has not been loaded, \
fabric manager cannot be started
"""
# Global Fabric Manager's exit (its finishGlobalFMInitialization), as pytorch/ci-infra#552 quotes
# /var/log/fabricmanager.log; the times and thread ids are the log's own format.
_FM_LOG_EXIT = """\
[Mar 10 2025 08:00:01] [INFO] [tid 1001] Fabric Manager version 570.124.06 is running
[Mar 10 2025 08:00:31] [ERROR] [tid 1001] not all local fabric manager instances finished their configuration
[Mar 10 2025 08:00:31] [ERROR] [tid 1001] failed to configure all the available GPUs or NVSwitches
"""


def test_a_unit_journal_without_systemds_lines_that_ends_in_its_own_error_is_failed() -> None:
    found = _top(_case({"kind": "node-cmd", "name": "journal-fabricmanager.txt", "text": _FM_PRECHECK}))
    assert found is not None and found[0] == "fabric-manager" and "ib_umad" in found[2]


def test_a_unit_log_file_that_ends_in_the_units_exit_is_fabric_manager_not_running() -> None:
    found = _top(_case({"kind": "node-file", "path": "var/log/fabricmanager.log", "text": _FM_LOG_EXIT}))
    assert found is not None and found[:2] == ("fabric-manager", "fabric_manager_not_running")


@pytest.mark.parametrize(("kind", "text"), [
    # an error, then a start systemd reports: the unit runs again
    ("journal", _FM_PRECHECK + "Jul 20 16:16:02 edge-1 systemd[1]: Started NVIDIA fabric manager service.\n"),
    # the unit's last word is not an error (nvtrust#128's healthy start)
    ("journal", "Jan 05 14:45:26 gpu-wk-01 nv-fabricmanager[1120]: Connected to 1 node.\n"),
    # a log whose error was followed by the unit's own success
    ("log", _FM_LOG_EXIT.replace("available GPUs or NVSwitches\n", "available GPUs or NVSwitches\n"
                                 "[Mar 10 2025 08:01:02] [INFO] [tid 1201] Successfully configured all the "
                                 "available NVSwitches to route GPU NVLink traffic.\n")),
])
def test_a_unit_whose_last_word_is_not_an_error_is_not_failed(kind: str, text: str) -> None:
    item = ({"kind": "node-cmd", "name": "journal-fabricmanager.txt", "text": text} if kind == "journal"
            else {"kind": "node-file", "path": "var/log/fabricmanager.log", "text": text})
    assert _top(_case(item)) is None


@pytest.mark.parametrize(("text", "component"), [
    ("Failed to initialize NVML: Unknown Error\n", "container-toolkit"),
    (_NCCL_SOCKETS, "gpudirect-rdma"),
])
def test_a_running_workload_hit_in_its_log_is_listed_as_hit(text: str, component: str) -> None:
    """Issue 21: the report says which workloads were hit, also when their pod runs."""
    case = _case({"kind": "log", "object": _JOB, "text": text})
    hit = [w for w in diagnose_case(case).gpu_workloads if (w.namespace, w.name) == ("ml", "train-0")]
    assert len(hit) == 1 and hit[0].component == hit[0].root_cause == component
    assert hit[0].source is not None and hit[0].source.startswith("logs/ml/train-0/cuda.log")
    assert hit[0].message


def test_a_running_workload_whose_log_says_nothing_of_the_stack_is_not_listed() -> None:
    case = _case({"kind": "log", "object": _JOB, "text": _NCCL_IB})
    assert diagnose_case(case).gpu_workloads == ()


def test_the_collected_imex_read_of_a_configured_daemon_not_running_is_imex_not_running() -> None:
    text = ("lib/systemd/system/nvidia-imex.service\n"
            "etc/systemd/system/multi-user.target.wants/nvidia-imex.service\n"
            "etc/nvidia-imex/nodes_config.cfg\n"
            "dev/nvidia-caps-imex-channels/channel0\n"
            "etc/nvidia-imex/nodes_config.cfg:10.0.0.11\n"
            "etc/nvidia-imex/nodes_config.cfg:10.0.0.12\n")
    found = _top(_case({"kind": "node-cmd", "name": "imex.txt", "text": text}))
    assert found is not None and found[:2] == ("imex", "imex_not_running")


def test_a_workload_log_is_its_running_containers(tmp_path: Path) -> None:
    case = _case({"kind": "log", "object": _JOB, "text": _NCCL_SOCKETS, "previous": True})
    with pytest.raises(CaseError, match="no previous or init log"):
        build_case(case, tmp_path / "b")


# NCCL's own lines name the layer under the job (formats of transport/net_ib.cc, net.cc, nvls.cc).
_NCCL_PORT_EVENT = "train-0:123:456 [0] NCCL WARN NET/IB : mlx5_0:1 Got async event : port error\n"
_NCCL_RETRY_EXCEEDED = ("train-0:123:456 [0] transport/net_ib.cc:2244 NCCL WARN NET/IB: Got completion from "
                        "peer 10.0.0.2<53908> with status=12 opcode=129 len=1048576 vendor err 129 (Recv)\n"
                        "train-0:123:456 [0] NCCL INFO transport/net.cc:1362 -> 6\n")
_NCCL_NVLS_BIND = ("Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152:\n"
                   "CUDA error 401 'the operation cannot be performed in the present state'.\n"
                   "This is usually caused by a system or configuration error in the Fabric Manager "
                   "or NVSwitches.\n")


@pytest.mark.parametrize(("text", "expected"), [
    (_NCCL_PORT_EVENT, ("rdma-links", "ib_port_errors")),
    # a work completion with status 12 (transport retry counter exceeded): the peer never
    # answered over the link
    (_NCCL_RETRY_EXCEEDED, ("rdma-links", "error_unreachable")),
    (_NCCL_NVLS_BIND, ("fabric-manager", "fabric_manager_not_running")),
    ("train-0:1:2 [0] NCCL INFO GPU Direct RDMA Disabled for GPU 3b000 / HCA 0 (distance 7 > 4)\n",
     ("gpudirect-rdma", "nic_gpu_affinity_missing")),
    ("Call to cuMemCreate(&handle, size, &prop, 0) failed (Cu failure: operation not permitted)\n",
     ("imex", "imex_channel_missing")),
    # CUDA error 802 names the daemon CUDA waits for: on an NVSwitch system, Fabric Manager
    # (nccl-tests#264's all_reduce_perf)
    ("test: Test CUDA failure common.cu:941 'system not yet initialized'\n",
     ("fabric-manager", "fabric_manager_not_running")),
    # NCCL's verbs wrapper failing to register GPU memory with the NIC: the GPUDirect path
    # (misc/ibvwrap.cc's WARN, as NVIDIA/nccl#778 and nccl-tests#206 show it)
    ("misc/ibvwrap.cc:288 NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Operation not supported\n",
     ("gpudirect-rdma", "error_unclassified")),
    ("misc/ibvwrap.cc:278 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory\n",
     ("gpudirect-rdma", "error_resource_exhausted")),
    # ibdev2netdev inside the job: its only RDMA port (an SR-IOV VF) is down
    # (k8snetworkplumbingwg/sriov-network-operator#382)
    ("mlx5_3 port 1 ==> net1 (Down)\n", ("rdma-links", "rdma_port_down")),
])
def test_a_workloads_nccl_or_cuda_line_names_the_link_layer_under_it(text: str,
                                                                     expected: tuple[str, str]) -> None:
    found = _top(_case({"kind": "log", "object": _JOB, "text": text}))
    assert found is not None and found[:2] == expected


@pytest.mark.parametrize("text", [
    # a port coming up (GPUDirect off on every HCA is no link failure but a degraded GPUDirect
    # RDMA path: tests/field/test_field_nccl_gdr_off.py)
    "train-0:123:456 [0] NCCL WARN NET/IB : Got async event : port active\n",
    _NCCL_IB,
    # a host view with a spare port down beside the ones in use
    "mlx5_0 port 1 ==> ib0 (Up)\nmlx5_1 port 1 ==> ib1 (Down)\n",
])
def test_nccl_lines_that_report_no_link_failure_are_healthy(text: str) -> None:
    assert _top(_case({"kind": "log", "object": _JOB, "text": text})) is None


def test_a_device_the_job_cannot_open_is_not_the_link() -> None:
    text = ("misc/ibvwrap.cc:212 NCCL WARN Call to ibv_open_device failed\n"
            "transport/net_ib.cc:148 NCCL WARN NET/IB : Unable to open device mlx5_bond_0\n" + _NCCL_SOCKETS)
    found = _top(_case({"kind": "log", "object": _JOB, "text": text}))
    assert found is not None and found[:2] == ("gpudirect-rdma", "nccl_socket_fallback")


_RDMA_ROUND = ('2025/07/26 20:34:31 discovering host network devices\n'
               '2025/07/26 20:34:31 error creating new device: "missing RDMA device spec for device '
               '0000:16:00.0, RDMA device \\"issm\\" not found"\n'
               '2025/07/26 20:34:31 exposing "0" devices\n')


def test_an_rdma_plugin_round_that_exposes_nothing_after_errors_is_degraded_with_the_error() -> None:
    found = _top(_case({"kind": "log", "component": "rdma-device-plugin", "text": _RDMA_ROUND}))
    assert found is not None and found[:2] == ("rdma-device-plugin", "error_not_found")


def test_an_rdma_plugin_with_no_matching_device_and_no_error_is_healthy() -> None:
    text = '2025/07/26 20:34:31 discovering host network devices\n2025/07/26 20:34:31 exposing "0" devices\n'
    assert _top(_case({"kind": "log", "component": "rdma-device-plugin", "text": text})) is None


def test_a_resource_the_rdma_plugin_exposes_but_the_node_shows_at_zero_never_reached_the_kubelet() -> None:
    log = ('2022/01/19 11:15:55 Updating "rdma/hca_shared" devices\n'
           '2022/01/19 11:15:55 hca_shared.sock gets registered successfully at Kubelet\n'
           '2022/01/19 11:15:55 exposing "1" devices\n')
    zero = _case({"kind": "log", "component": "rdma-device-plugin", "text": log},
                 {"kind": "node-capacity", "resources": {"rdma/hca_shared": "0"}})
    found = _top(zero)
    assert found is not None and found[:2] == ("rdma-device-plugin", "rdma_resources_zero")
    shown = _case({"kind": "log", "component": "rdma-device-plugin", "text": log},
                  {"kind": "node-capacity", "resources": {"rdma/hca_shared": "1"}})
    assert _top(shown) is None


def test_an_rdma_plugin_error_naming_a_resource_the_node_shows_at_zero_is_that_resource_lost() -> None:
    """Mellanox/k8s-rdma-shared-dev-plugin 1b64181: after a kubelet restart the old
    ListAndWatch stream fails and the resource stays at 0; the same line with the resource
    back above zero, or a resource at 0 with no error naming it (an empty pool), is healthy."""
    log = ('2023/03/01 10:00:00 Updating "rdma/mlnx_shared" devices\n'
           '2023/03/01 10:00:00 exposing "63" devices\n'
           'error: failed to update "rdma/mlnx_shared" resources: rpc error: code = Unavailable '
           'desc = transport is closing\n')
    plugin_log = {"kind": "log", "component": "rdma-device-plugin", "text": log}
    zero = _top(_case(plugin_log, {"kind": "node-capacity", "resources": {"rdma/mlnx_shared": "0"}}))
    assert zero is not None and zero[:2] == ("rdma-device-plugin", "rdma_resources_zero")
    back = _top(_case(plugin_log, {"kind": "node-capacity", "resources": {"rdma/mlnx_shared": "63"}}))
    assert back is None or back[:2] != ("rdma-device-plugin", "rdma_resources_zero")
    quiet = '2023/03/01 10:00:00 Updating "rdma/mlnx_shared" devices\n'
    empty = _top(_case({"kind": "log", "component": "rdma-device-plugin", "text": quiet},
                       {"kind": "node-capacity", "resources": {"rdma/mlnx_shared": "0"}}))
    assert empty is None


def test_the_gpu_peer_memory_clients_error_line_is_the_drivers() -> None:
    text = ("[ 812.1] nvidia-peermem nv_get_p2p_free_callback:134 nv_get_p2p_free_callback -- "
            "invalid dma_mapping\n")
    dmesg = {"kind": "node-cmd", "name": "dmesg.txt", "text": text}
    found = _top(_case(dmesg, cluster={"driver_mode": "host"}))
    assert found is not None and found[0] == "driver"


def test_a_vf_the_ib_sriov_cni_cannot_configure_names_the_rdma_links() -> None:
    """NVIDIA/network-operator#1825: the sandbox of a job is refused because the InfiniBand
    SR-IOV CNI finds the VF's own state unusable (no GUID): the VF of the link, not the pod."""
    message = ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for '
               'sandbox "de0d2174b993": plugin type="multus" name="multus-cni-network" failed (add): '
               '[ml/train-0/cc41464d:ibp192s0]: error adding container to network "ibp192s0": infiniBand '
               'SRI-OV CNI failed to configure VF "VF ibp192s0v10 GUID is not valid"')
    event = {"kind": "event", "object": _JOB, "type": "Warning", "reason": "FailedCreatePodSandBox",
             "message": message}
    found = _top(_case(event))
    assert found is not None and found[0] == "rdma-links" and "GUID is not valid" in found[2]


def test_a_failing_startup_probe_leaves_its_container_not_ready_and_says_why(tmp_path: Path) -> None:
    """kubernetes-sigs/dra-driver-nvidia-gpu#333: the ComputeDomain daemon's startup probe
    (nvidia-imex-ctl over IPv6 where the pod has none) fails; the kubelet reports it only
    while it fails, and the container is not ready until it passes."""
    message = ("Startup probe failed: Query Status returned error code: 14 - failed to connect to all "
               "addresses; last error: UNKNOWN: ipv6:%5B::%5D:50005: Address family not supported by "
               "protocol")
    case = _case({"kind": "event", "component": "compute-domain-daemon", "type": "Warning",
                  "reason": "Unhealthy", "message": message})
    pods = msgspec.json.decode((build_case(case, tmp_path / "b") / "cluster" / "pods.json").read_bytes())
    daemon = next(p for p in pods["items"] if any(c["name"] == "compute-domain-daemon"
                                                  for c in p["spec"]["containers"]))
    assert [s["ready"] for s in daemon["status"]["containerStatuses"]] == [False]
    found = _top(case)
    assert found is not None and found[:2] == ("compute-domain-daemon", "error_unreachable")


def test_an_image_reference_that_does_not_parse_leaves_its_container_waiting(tmp_path: Path) -> None:
    """NVIDIA/gpu-operator#366: the kubelet's InspectFailed event for an operand image it cannot
    parse; the container waits in InvalidImageName with that message and nothing starts."""
    message = ('Failed to apply default image tag "FILLED_BY_THE_OPERATOR": couldn\'t parse image reference '
               '"FILLED_BY_THE_OPERATOR": invalid reference format: repository name must be lowercase')
    case = _case({"kind": "event", "component": "container-toolkit", "type": "Warning",
                  "reason": "InspectFailed", "message": message})
    pods = msgspec.json.decode((build_case(case, tmp_path / "b") / "cluster" / "pods.json").read_bytes())
    toolkit = next(p for p in pods["items"] if p["metadata"]["name"].startswith("nvidia-container-toolkit"))
    waiting = toolkit["status"]["containerStatuses"][0]["state"]["waiting"]
    assert (waiting["reason"], waiting["message"]) == ("InvalidImageName", message)
    found = _top(case)
    # the pull state's reason is the line's class: an image reference the operator left unfilled is
    # a configuration holding an invalid value (as the field case of the same report expects)
    assert found is not None and found[:2] == ("container-toolkit", "error_config_invalid")
