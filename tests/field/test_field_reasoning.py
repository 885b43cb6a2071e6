"""Reasoning on field-shaped bundles: symptoms traced down the stack, platforms that
bring their own parts, Pending DaemonSet pods placed on their node."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
from builder import build_case
from case import CASES_DIR, Case, load_case
from scoreboard import diagnose_case, top_pair, top_root_cause

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose


def _top_without_runtime_class(tmp_path: Path, case: Case) -> tuple[str, str] | None:
    """The case's bundle with every pod's runtimeClassName dropped (operands that rely on
    the default runtime, as GPU Operator releases before 1.9 deployed them)."""
    out = build_case(case, tmp_path / case.id)
    path = out / "cluster" / "pods.json"
    doc = json.loads(path.read_text())
    for pod in doc["items"]:
        pod["spec"].pop("runtimeClassName", None)
    path.write_text(json.dumps(doc))
    top = top_root_cause(diagnose(load_bundle(out), read_node_observations), case.node)
    return (top.component, top.cause) if top else None


def test_no_nvml_in_an_operand_without_runtime_class_is_traced_to_the_default_runtime(
        tmp_path: Path) -> None:
    case = load_case(CASES_DIR / "dcgm-exporter-612-nvml-library-not-found.yaml")
    assert _top_without_runtime_class(tmp_path, case) == ("container-toolkit", "nvidia_not_default_runtime")


def test_any_operand_without_driver_user_space_and_no_runtime_class_names_the_default_runtime() -> None:
    """Operands that ask for no RuntimeClass where nvidia is not the default get no driver
    user space: Volcano's vGPU plugin finds no NVML (Project-HAMi/volcano-vgpu-device-plugin#155:
    'failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND'), the DCGM exporter's script no
    nvidia-smi (NVIDIA/gpu-monitoring-tools#2: 'nvidia-smi: command not found'), and a plugin
    that logs the default-runtime hint and then runs without a GPU (NVIDIA/k8s-device-plugin#139)."""
    for name in ("volcano-vgpu-device-plugin-155-containerd-runc-no-nvml.yaml",
                 "gpu-monitoring-tools-2-dcgm-exporter-nvidia-smi-not-found-runtime.yaml",
                 "k8s-device-plugin-139-docker-1903-native-gpus-no-nvidia-runtime.yaml",
                 "gpu-feature-discovery-36-k3s-no-labels.yaml"):
        found = top_pair(load_case(CASES_DIR / name))
        assert found == ("container-toolkit", "nvidia_not_default_runtime"), name


def test_the_same_missing_nvidia_smi_with_the_runtime_class_stays_the_operands() -> None:
    """With runtimeClassName nvidia the pod got the NVIDIA runtime, so the default is not why
    nvidia-smi is missing: the line stays the exporter's own."""
    case = load_case(CASES_DIR / "gpu-monitoring-tools-2-dcgm-exporter-nvidia-smi-not-found-runtime.yaml")
    asked = msgspec.structs.replace(case, cluster=msgspec.structs.replace(case.cluster, runtime_class=None))
    top = top_root_cause(diagnose_case(asked), asked.node)
    assert top is not None and top.cause != "nvidia_not_default_runtime"


def test_an_operand_that_asks_for_the_nvidia_runtime_is_not_blamed_on_the_default() -> None:
    """k8s-device-plugin#1805, gpu-operator#2874: the pod names runtimeClassName nvidia, so
    which runtime is the default cannot be why it has no NVML."""
    for name in ("k8s-device-plugin-1805-k8s-1-36-containerd-without-nvidia-handler.yaml",
                 "gpu-operator-2874-mig-manager-nvml-library-not-found-after-driver-restart.yaml"):
        top = top_pair(load_case(CASES_DIR / name))
        assert top is not None and top[1] != "nvidia_not_default_runtime", name


def test_no_host_nvml_on_an_image_that_brings_driver_and_runtime_is_the_drivers(tmp_path: Path) -> None:
    """awslabs/amazon-eks-ami#1744: the EKS GPU AMI lacked libnvidia-ml; the plugin, given
    the NVIDIA runtime, finds none. Without the runtime class, the default runtime is
    the first suspect again."""
    case = load_case(CASES_DIR / "amazon-eks-ami-1744-gpu-ami-libnvidia-ml-missing.yaml")
    assert top_pair(case) == ("driver", "nvml_library_missing")
    assert _top_without_runtime_class(tmp_path, case) != ("driver", "nvml_library_missing")


def test_on_gke_the_symptom_is_not_traced_to_a_toolkit_the_platform_does_not_use() -> None:
    case = load_case(CASES_DIR / "gpu-monitoring-tools-96-gke-exporter-nvml.yaml")
    assert top_pair(case) == ("dcgm-exporter", "dcgm_exporter_driver_not_ready")


def test_same_line_in_a_running_exporter_accuses_nobody() -> None:
    case = load_case(CASES_DIR / "dcgm-exporter-612-nvml-library-not-found.yaml")
    quiet = msgspec.structs.replace(
        case,
        evidence=tuple(e for e in case.evidence if type(e).__name__ != "PodStateEv"),
        expect=msgspec.convert({"healthy": True}, type(case.expect)),
    )
    assert top_pair(quiet) is None


def _pending(message: str) -> Case:
    raw = {
        "id": "x-pending",
        "source": "https://example.org/x",
        "title": "t",
        "platform": "generic",
        "evidence": [
            {"kind": "pod-state", "component": "dcgm-exporter", "state": "Pending", "message": message},
            {"kind": "event", "component": "dcgm-exporter", "reason": "FailedScheduling", "message": message},
        ],
        "expect": {"healthy": True},
    }
    return msgspec.convert(raw, Case)


def test_pending_daemonset_pod_is_judged_on_its_node_from_its_scheduling_event() -> None:
    memory = (
        "0/5 nodes are available: 1 Insufficient memory, 4 node(s) didn't match Pod's node affinity/selector."
    )
    assert top_pair(_pending(memory)) == ("dcgm-exporter", "scheduling_insufficient_resources")
    taint = (
        "0/5 nodes are available: 1 node(s) had untolerated taint {dedicated: ml}, "
        "4 node(s) didn't match Pod's node affinity/selector."
    )
    assert top_pair(_pending(taint)) == ("dcgm-exporter", "taint_not_tolerated")


def test_pending_pod_without_an_event_says_to_read_its_events() -> None:
    case = _pending("")
    case = msgspec.structs.replace(case, evidence=case.evidence[:1])
    assert top_pair(case) == ("dcgm-exporter", "pod_pending")


def test_daemonset_failed_create_event_explains_the_missing_operand_pod() -> None:
    case = load_case(CASES_DIR / "gpu-operator-185-psp-blocks-driver-ds.yaml")
    assert top_pair(case) == ("gpu-operator", "operand_pod_security_denied")


def test_openshifts_scc_refusal_of_an_operand_daemonset_is_the_operators_pod_security() -> None:
    """NVIDIA/gpu-operator#48: OpenShift refuses the chart's NFD worker pods because no
    security context constraint its service account may use allows host network and
    hostPath; the same refusal as a PodSecurityPolicy or Pod Security level, in OpenShift's words."""
    case = load_case(CASES_DIR / "gpu-operator-48-ocp-chart-nfd-worker-scc.yaml")
    assert top_pair(case) == ("gpu-operator", "operand_pod_security_denied")


def test_a_benign_daemonset_event_explains_nothing() -> None:
    case = load_case(CASES_DIR / "gpu-operator-185-psp-blocks-driver-ds.yaml")
    event = next(e for e in case.evidence if type(e).__name__ == "ClusterObjectEv")
    benign = msgspec.structs.replace(
        event,
        object={**event.object, "reason": "SuccessfulCreate", "type": "Normal",
                "message": "Created pod: nvidia-driver-daemonset-8x2kd"},
    )
    quiet = msgspec.structs.replace(case, evidence=(benign,))
    assert top_pair(quiet) is None


def test_no_nvidia_smi_in_toolkit_validation_names_the_runtime_integration() -> None:
    case = load_case(CASES_DIR / "gpu-operator-280-crio-hooks-dir.yaml")
    assert top_pair(case) == ("container-toolkit", "crio_hooks_dir_missing")


def _workload_bundle_top(tmp_path: Path, running: bool) -> tuple[str, str] | None:
    """nvidia-docker 1034: the workload pod's Failed event names the cause; the same old
    event on a workload that runs now names nothing."""
    case = load_case(CASES_DIR / "nvidia-docker-1034-toolkit-not-installed.yaml")
    out = build_case(case, tmp_path / case.id)
    if running:
        path = out / "cluster" / "pods.json"
        doc = json.loads(path.read_text())
        for pod in doc["items"]:
            if pod["metadata"]["name"] == "cuda-smoke":
                started = {"running": {"startedAt": "2025-05-20T08:26:00Z"}}
                pod["status"]["phase"] = "Running"
                for status in pod["status"]["containerStatuses"]:
                    status |= {"state": started, "ready": True, "started": True}
        path.write_text(json.dumps(doc))
    report = diagnose(load_bundle(out), read_node_observations)
    top = top_root_cause(report, case.node)
    return (top.component, top.cause) if top else None


def test_a_stuck_workload_pods_event_names_the_cause(tmp_path: Path) -> None:
    expected = ("container-toolkit", "docker_gpu_capability_unregistered")
    assert _workload_bundle_top(tmp_path / "stuck", running=False) == expected


def test_an_old_event_of_a_running_workload_names_nothing(tmp_path: Path) -> None:
    assert _workload_bundle_top(tmp_path / "running", running=True) is None


def test_an_operator_killed_at_its_memory_limit_is_named_for_that_reason() -> None:
    case = load_case(CASES_DIR / "gpu-operator-208-ocp-operator-oomkilled.yaml")
    assert top_pair(case) == ("gpu-operator", "oom_killed")
    report = diagnose_case(case)
    assert "operator.resources" in report.cluster.root_causes[0].fix
    crash = {"kind": "pod-state", "component": "gpu-operator", "state": "CrashLoopBackOff", "exit_code": 1}
    crashing = msgspec.structs.replace(case, evidence=(msgspec.convert(crash, type(case.evidence[0])),))
    assert top_pair(crashing) == ("gpu-operator", "gpu_operator_crashloop")
