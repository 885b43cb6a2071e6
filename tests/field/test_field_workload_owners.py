"""A GPU workload's refusal names the owner of the operation that failed: the plugin that
serves what the pod asked for (its Allocate answer), the DRA kubelet plugin (its prepare),
or the kubelet (its own admission counts); busy GPUs name no one (checks/admission.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
from builder import build_case
from case import Case
from scoreboard import top_pair, top_root_cause

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.catalog import load_catalog
from gpunode.checks.admission import DRA_PLUGIN, owned
from gpunode.decisive import severity
from gpunode.diagnose import diagnose
from gpunode.kb import load_kb


def _case(*evidence: dict[str, Any], **extra: Any) -> Case:
    raw = {"id": "x-owners", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "evidence": list(evidence), "expect": {"healthy": True}, **extra}
    return msgspec.convert(raw, Case)


def _refused(reason: str, message: str, name: str = "gpu-pod") -> dict[str, Any]:
    return {"kind": "event", "object": {"kind": "Pod", "name": name}, "type": "Warning",
            "reason": reason, "message": message}


# kubernetes-sigs/dra-driver-nvidia-gpu#1144 (the kubelet's event, as pasted there)
_PREPARE_CDI = ("Failed to prepare dynamic resources: NodePrepareResources failed for ResourceClaim "
                "<claim>: error preparing devices for claim <ns>/<claim>:<uid>: unable to create CDI spec "
                "file for claim: failed to write spec: invalid CDI Spec: failed add device "
                "\"<uid>-gpu-N\": invalid device, empty device edits")


def test_a_dra_prepare_that_cannot_write_its_cdi_spec_is_the_dra_plugins() -> None:
    case = _case({"kind": "pod-state", "component": DRA_PLUGIN, "container": "gpus", "state": "Running"},
                 _refused("FailedPrepareDynamicResources", _PREPARE_CDI))
    # the spec the plugin writes, not the toolkit's
    assert top_pair(case) == (DRA_PLUGIN, "dra_prepare_failed")


def test_a_container_the_runtime_cannot_give_cdi_devices_stays_the_toolkits() -> None:
    # The runtime resolving CDI devices when it creates a container (no prepare involved):
    # NVIDIA/nvidia-container-toolkit's CDI spec is missing (containerd's wording).
    case = _case(_refused("Failed", "Error: failed to create containerd container: CDI device injection "
                                    "failed: unresolvable CDI devices nvidia.com/gpu=all"))
    found = top_pair(case)
    assert found is not None and found[0] == "container-toolkit"


def test_a_dra_prepare_names_a_layer_the_plugin_depends_on() -> None:
    catalog = load_catalog()
    # nvidia-smi, run by the plugin to set a time slice, answering from a driver whose
    # libraries and module differ: the driver's, not the plugin's
    line = ("NodePrepareResources failed: error setting time slice: error running nvidia-smi: Failed to "
            "initialize NVML: Driver/library version mismatch")
    assert owned(catalog, DRA_PLUGIN, line) == "driver"
    assert owned(catalog, DRA_PLUGIN, _PREPARE_CDI) == DRA_PLUGIN


# kubernetes-sigs/dra-driver-nvidia-gpu#41: the plugin's own log of the prepare it failed
_PLUGIN_PREPARE_LOG = (
    'E1221 04:43:21.238522       1 nonblockinggrpcserver.go:127] "dra: handling request failed" '
    'err="error preparing devices for claim 5dc94ce6-1e6e-4359-bc73-3d2039797ff0: error setting up sharing: '
    'error setting timeslice for 5dc94ce6-1e6e-4359-bc73-3d2039797ff0: error setting time slice: error '
    'running nvidia-smi: exit status 3" requestID=2 request="&NodePrepareResourceRequest{Namespace:gpu-test1,'
    'ClaimUid:5dc94ce6-1e6e-4359-bc73-3d2039797ff0,ClaimName:pod1-gpu,ResourceHandle:,}"\n')


def test_the_dra_plugins_log_of_a_failed_prepare_is_dra_prepare_failed() -> None:
    case = _case({"kind": "pod-state", "component": DRA_PLUGIN, "container": "gpus", "state": "Running"},
                 {"kind": "log", "component": DRA_PLUGIN, "container": "gpus", "text": _PLUGIN_PREPARE_LOG})
    assert top_pair(case) == (DRA_PLUGIN, "dra_prepare_failed")


def test_the_dra_plugins_log_of_a_prepared_claim_is_healthy() -> None:
    # the driver's info line once a claim is prepared (its nodePrepareResource)
    ok = ("I1221 04:43:21.238522       1 driver.go:87] Returning newly prepared devices for claim "
          "'5dc94ce6-1e6e-4359-bc73-3d2039797ff0': "
          "[k8s.gpu.nvidia.com/claim=5dc94ce6-1e6e-4359-bc73-3d2039797ff0]\n")
    case = _case({"kind": "pod-state", "component": DRA_PLUGIN, "container": "gpus", "state": "Running"},
                 {"kind": "log", "component": DRA_PLUGIN, "container": "gpus", "text": ok})
    assert top_pair(case) is None


# NVIDIA/k8s-device-plugin#153 (GKE): admitted after a restart before the plugin registered
_NO_CAPACITY = "Node didn't have enough resource: nvidia.com/gpu, requested: 1, used: 0, capacity: 0"


def test_a_pod_admitted_while_the_node_had_no_capacity_it_has_now_is_the_kubelets() -> None:
    case = _case(_refused("OutOfnvidia.com/gpu", _NO_CAPACITY))
    assert top_pair(case) == ("kubelet", "error_resource_exhausted")


def test_a_pod_admitted_while_every_gpu_was_held_names_no_one() -> None:
    busy = "Node didn't have enough resource: nvidia.com/gpu, requested: 1, used: 8, capacity: 8"
    assert top_pair(_case(_refused("OutOfnvidia.com/gpu", busy))) is None


# kubernetes/kubernetes#130145: the device manager's stale record of allocated GPUs (whether
# running pods held every GPU instead is not settled by the pod list: it stays the kubelet's)
_UNAVAILABLE = ("Pod Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. "
                "Requested:1, Available: 0, which is unexpected")


def test_no_free_device_while_the_api_shows_free_ones_is_the_kubelets_record() -> None:
    case = _case(_refused("UnexpectedAdmissionError", _UNAVAILABLE))
    assert top_pair(case) == ("kubelet", "error_resource_exhausted")


# Project-HAMi/HAMi#653: HAMi's plugin answering the kubelet's Allocate
_HAMI_ANSWER = ("Allocate failed due to rpc error: code = Unknown desc = no binding pod found on node "
                "k8s-master, which is unexpected")


def test_a_plugins_allocate_answer_names_the_plugin_that_serves_the_resource() -> None:
    case = _case({"kind": "pod-state", "component": "hami-device-plugin", "state": "Running"},
                 _refused("UnexpectedAdmissionError", _HAMI_ANSWER))
    found = top_pair(case)
    assert found is not None and found[0] == "hami-device-plugin"  # HAMi serves nvidia.com/gpu there


def test_the_same_answer_where_nvidias_plugin_serves_the_gpus_is_nvidias() -> None:
    found = top_pair(_case(_refused("UnexpectedAdmissionError", _HAMI_ANSWER)))
    assert found is not None and found[0] == "device-plugin"


def _hami_refusal(tmp_path: Path, scheduler: str) -> tuple[str, str] | None:
    """HAMi's scheduler and plugin running, a GPU pod placed by ``scheduler`` and refused
    at admission with HAMi's plugin's answer: the top root cause."""
    case = _case({"kind": "pod-state", "component": "hami-scheduler", "state": "Running"},
                 {"kind": "pod-state", "component": "hami-device-plugin", "state": "Running"},
                 _refused("UnexpectedAdmissionError", _HAMI_ANSWER))
    root = build_case(case, tmp_path)
    path = root / "cluster/pods.json"
    pods = json.loads(path.read_text())
    for pod in pods["items"]:
        if pod["metadata"]["name"] == "gpu-pod":
            pod["spec"]["schedulerName"] = scheduler
    path.write_text(json.dumps(pods))
    report = diagnose(load_bundle(root), read_node_observations)
    top = top_root_cause(report, case.node)
    return (top.component, top.cause) if top else None


def test_a_hami_refusal_of_a_pod_another_scheduler_placed_names_hamis_scheduler(tmp_path: Path) -> None:
    # Project-HAMi/HAMi#653: the webhook could not be called (failurePolicy Ignore), so the
    # pod kept default-scheduler and HAMi's plugin found no binding for it
    found = _hami_refusal(tmp_path, "default-scheduler")
    assert found is not None and found[0] == "hami-scheduler"


def test_a_hami_refusal_of_a_pod_hamis_scheduler_placed_stays_the_plugins(tmp_path: Path) -> None:
    found = _hami_refusal(tmp_path, "hami-scheduler")
    assert found is not None and found[0] == "hami-device-plugin"


def test_an_allocate_answer_for_a_volcano_resource_names_volcanos_plugin(tmp_path: Path) -> None:
    # volcano-sh/devices#17: Volcano's GPU-share plugin cannot find the GPU id its scheduler
    # picked; the pod asks volcano.sh/gpu-memory (the field builder's pods ask nvidia.com/gpu,
    # so the pod's request is set here as the report gives it)
    answer = ("Allocate failed due to rpc error: code = Unknown desc = failed to find gpu id, "
              "which is unexpected")
    case = _case({"kind": "pod-state", "component": "volcano-device-plugin", "state": "Running"},
                 {"kind": "node-capacity", "resources": {"volcano.sh/gpu-memory": "32768"}},
                 _refused("UnexpectedAdmissionError", answer))
    root = build_case(case, tmp_path)
    path = root / "cluster/pods.json"
    pods = json.loads(path.read_text())
    for pod in pods["items"]:
        if pod["metadata"]["name"] == "gpu-pod":
            limits = {"volcano.sh/gpu-memory": "1024"}
            pod["spec"]["containers"][0]["resources"] = {"limits": limits, "requests": dict(limits)}
    path.write_text(json.dumps(pods))
    report = diagnose(load_bundle(root), read_node_observations)
    top = top_root_cause(report, case.node)
    assert top is not None and (top.component, top.cause) == ("volcano-device-plugin", "error_not_found")


def _extender_says(text: str) -> tuple[str, str] | None:
    return top_pair(_case(
        {"kind": "pod-state", "component": "hami-scheduler", "container": "vgpu-scheduler-extender",
         "state": "Running"},
        {"kind": "log", "component": "hami-scheduler", "container": "vgpu-scheduler-extender", "text": text}))


def test_a_server_whose_callers_reject_its_certificate_keeps_failing() -> None:
    # Project-HAMi/HAMi#1572: the webhook kept serving the certificate cert-manager had
    # replaced; the API server, its caller, rejects it on every call
    found = _extender_says("http: TLS handshake error from <IP>:<Port>: remote error: tls: bad certificate\n")
    assert found == ("hami-scheduler", "error_unreachable")


def test_a_server_whose_caller_hung_up_mid_handshake_is_healthy() -> None:
    # a TCP probe or a scanner that closes the connection: no certificate was refused
    assert _extender_says("http: TLS handshake error from 10.42.0.1:52814: EOF\n") is None


def test_a_decision_the_plugin_found_no_record_of_is_not_found() -> None:
    # Project-HAMi/HAMi#653: the plugin's answer names what it looked for and did not find
    # ("no <thing> found", a thing of one or two words)
    kb = load_kb()
    assert kb.class_of("Allocate failed due to rpc error: code = Unknown desc = no binding pod found on node "
                       "k8s-master, which is unexpected") == "error_not_found"
    # nvidia-smi's "No devices were found" says that none exist (its own catalogued failure)
    assert kb.class_of("No devices were found") != "error_not_found"
    # the same words logged at info level while it waits are no error at all
    assert severity("I0101 12:00:00.000000       1 server.go:10] no pending pod found, waiting") == 0
