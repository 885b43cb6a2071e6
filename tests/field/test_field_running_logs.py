"""Evidence before state in running pods: decisive lines (kb.Match ``while_running``) in
the current log of a running operator, plugin, MIG manager, exporter or cluster-wide
nfd-master name the cause; the same pods stay healthy when a later line shows the
error was transient, or when the line is not one declared decisive."""

from __future__ import annotations

import tempfile
from pathlib import Path

import msgspec
from builder import build_case
from case import CASES_DIR, Case, Expect, LogEv, NodeLabelsEv, load_case
from scoreboard import diagnose_case, top_pair

from gpunode.bundle.load import load_bundle

HEALTHY = Expect(healthy=True)


def _case(name: str) -> Case:
    return load_case(CASES_DIR / f"{name}.yaml")


def _edit_log(case: Case, old: str = "", new: str = "", append: str = "") -> Case:
    """The case with its log text edited (``old`` → ``new``, ``append`` at the end), expected healthy."""
    evidence = tuple(
        msgspec.structs.replace(e, text=e.text.replace(old, new) + append)
        if isinstance(e, LogEv) and old in e.text else e
        for e in case.evidence
    )
    return msgspec.structs.replace(case, evidence=evidence, expect=HEALTHY)


OPERATOR = "gpu-operator-409-k8s125-runtimeclass-v1beta1"


def test_a_running_operator_whose_reconcile_fails_on_a_removed_api_is_the_cluster_root_cause() -> None:
    case = _case(OPERATOR)
    report = diagnose_case(case)
    assert [(rc.component, rc.cause) for rc in report.cluster.root_causes] == [
        ("gpu-operator", "operator_k8s_api_removed")]
    assert "gpu-operator.log" in report.cluster.root_causes[0].evidence[0].source


def test_an_operator_that_reconciled_after_the_error_is_healthy() -> None:
    ready = ('{"level":"info","logger":"controllers.ClusterPolicy",'
             '"msg":"ClusterPolicy is ready as all resources have been successfully reconciled"}\n')
    assert top_pair(_edit_log(_case(OPERATOR), append=ready)) is None


def test_a_missing_optional_crd_is_not_a_removed_kubernetes_api() -> None:
    # The NFD rule CRD absent (NFD not installed yet) is an alpha API, but not one Kubernetes removed.
    case = _edit_log(_case(OPERATOR), 'RuntimeClass\\" in version \\"node.k8s.io/v1beta1',
                     'NodeFeatureRule\\" in version \\"nfd.k8s-sigs.io/v1alpha1')
    assert "nfd.k8s-sigs.io" in next(e.text for e in case.evidence if isinstance(e, LogEv))
    assert top_pair(case) is None


def test_an_api_version_an_older_cluster_does_not_serve_yet_is_the_same_cause() -> None:
    """NVIDIA/gpu-operator#2508: v1 RuntimeClass asked of Kubernetes 1.19, quoted without the
    controller's prefix: a served-version mismatch of a Kubernetes group, either way."""
    assert top_pair(_case("gpu-operator-2508-runtimeclass-delete-v1-on-k8s-119")) == (
        "gpu-operator", "operator_k8s_api_removed")


def test_a_missing_optional_monitoring_crd_at_v1_is_not_an_api_mismatch() -> None:
    # An operator that probes for ServiceMonitor (Prometheus operator not installed) stays healthy.
    case = _edit_log(_case(OPERATOR), 'RuntimeClass\\" in version \\"node.k8s.io/v1beta1',
                     'ServiceMonitor\\" in version \\"monitoring.coreos.com/v1')
    assert "monitoring.coreos.com/v1" in next(e.text for e in case.evidence if isinstance(e, LogEv))
    assert top_pair(case) is None


def test_a_running_exporter_whose_dcgm_has_no_nvml_is_the_driver_not_ready() -> None:
    """NVIDIA/dcgm-exporter#744: DCGM's NVML-not-loaded status text in a Ready exporter's log."""
    case = _case("dcgm-exporter-744-hostengine-started-before-driver-no-gpu-collector")
    assert top_pair(case) == ("dcgm-exporter", "dcgm_exporter_driver_not_ready")
    line = ("Not collecting GPU metrics; error retrieving DCGM MIG hierarchy: Cannot perform "
            "the requested operation because NVML doesn't exist on this system.")
    healthy = _edit_log(case, line, "Initializing system entities of type 'GPU'")
    assert top_pair(healthy) is None


def test_a_plugin_that_registered_on_a_retry_is_healthy() -> None:
    case = _case("k8s-device-plugin-10-deviceplugins-feature-gate-off")
    assert top_pair(case) == ("device-plugin", "device_plugin_registration_failed")
    registered = ("I0611 10:02:51.774120       1 server.go:195] "
                  "Registered device plugin for 'nvidia.com/gpu' with Kubelet\n")
    assert top_pair(_edit_log(case, append=registered)) is None


def test_a_mig_mode_change_followed_by_the_reset_is_healthy() -> None:
    case = _case("gpu-operator-668-gke-a100-mig-pending-reboot")
    assert top_pair(case) == ("gpu-hardware", "mig_mode_change_pending")
    done = ('time="2024-02-13T10:21:14Z" level=debug msg="Resetting GPUs..."\n'
            'time="2024-02-13T10:21:40Z" level=info msg="Successfully updated to MIG config: all-disabled"\n')
    healthy = _edit_log(case, append=done)
    healthy = msgspec.structs.replace(
        healthy, evidence=tuple(e for e in healthy.evidence if not isinstance(e, NodeLabelsEv)))
    assert top_pair(healthy) is None


def test_a_gpu_that_cannot_be_reset_keeps_the_mode_change_pending() -> None:
    case = _case("gpu-operator-1606-a100-passthrough-mig-reset-unsupported")
    assert top_pair(case) == ("gpu-hardware", "mig_mode_change_pending")
    error = ('time="2025-08-19T11:17:47Z" level=error '
             'msg="\\nResetting GPU 00000000:00:04.0 is not supported.\\n"\n')
    # the reset went on: the pending line alone is transient
    assert top_pair(_edit_log(case, error, "")) is None


def test_an_exporter_that_lost_its_hostengine_is_not_called_profiling_unsupported() -> None:
    case = _case("dcgm-exporter-337-pascal-no-dcp")
    assert top_pair(case) == ("dcgm-exporter", "dcgm_profiling_unsupported")
    other = _edit_log(case, "This request is serviced by a module of DCGM that is not currently loaded",
                      "Error getting supported metrics: Host engine connection invalid/disconnected")
    assert top_pair(other) is None


def test_nfd_master_runs_elsewhere_and_its_log_speaks_for_the_gpu_node() -> None:
    case = _case("nfd-424-label-namespace-not-allowed")
    with tempfile.TemporaryDirectory() as tmp:
        facts = load_bundle(build_case(case, Path(tmp) / case.id))
    shared = facts.cluster_side["nfd"]
    assert shared and all(sp.pod.spec.target_node != case.node for sp in shared)  # nfd-master, nfd-gc
    master = next(sp for sp in shared if "master" in sp.pod.metadata.name)
    assert facts.cluster_logs[master.key]  # read once at load: diagnose stays pure
    workers = [sp for pods in facts.pods_by_node.values() for sp in pods.get("nfd", []) if sp not in shared]
    assert workers and not {sp.key for sp in workers} & set(facts.cluster_logs)
    assert top_pair(case) == ("nfd", "nfd_label_namespace_denied")


def test_an_exporter_that_wraps_dcgm_s_error_in_its_own_still_runs_without_dcp() -> None:
    # NVIDIA/dcgm-exporter#158 (Tesla P40): "Not collecting DCP metrics: Error getting supported
    # metrics: This request is serviced by a module of DCGM that is not currently loaded"
    case = _case("dcgm-exporter-158-tesla-p40-no-dcp-metrics")
    assert top_pair(case) == ("dcgm-exporter", "dcgm_profiling_unsupported")
    said = _edit_log(case, 'msg="Not collecting DCP metrics', 'msg="Collecting DCP metrics')
    assert top_pair(said) is None


def test_a_running_dra_plugin_refusing_a_device_prepared_for_another_claim_fails_prepare() -> None:
    # kubernetes-sigs/dra-driver-nvidia-gpu#1162: "requested device channel-0 is already allocated
    # to different claim 4914da61-..." (the driver's check of any device against its checkpoint)
    case = _case("dra-driver-nvidia-gpu-1162-stale-prepare-leaves-channel0-allocated")
    assert top_pair(case) == ("dra-kubelet-plugin", "dra_prepare_failed")
    retried = _edit_log(case, "requested device channel-0 is already allocated to different claim",
                        "prepared device channel-0 for claim")
    assert top_pair(retried) is None
