"""The operator's own log naming a custom resource kind whose definition the cluster lacks
(the Prometheus Operator's ServiceMonitor that dcgmExporter.serviceMonitor asks for) is why
the ClusterPolicy is not ready and why the operands it has not reached yet have no pod: the
GPU Operator 23.3.0 release notes (GFD not started; the operator logs "Couldn't find
ServiceMonitor CRD"), and controller-runtime's reconciler error in a GPU operator's
clusterpolicy controller, https://github.com/rancher/opni/issues/186 ('no matches for kind
"ServiceMonitor" in version "monitoring.coreos.com/v1"'). The look-alike is an operator that
found the CRD and created the ServiceMonitor: nothing to say."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

_OPNI = ('[21:25:16] ERROR controller.clusterpolicy-controller Reconciler error {"name": "gpu", '
         '"namespace": "", "error": "no matches for kind \\"ServiceMonitor\\" in version '
         '\\"monitoring.coreos.com/v1\\""}')


def _top(log: str, *, healthy: bool, missing: bool = True) -> tuple[str, str] | None:
    evidence: list[dict[str, Any]] = [
        {"kind": "log", "component": "gpu-operator", "container": "gpu-operator", "text": log},
    ]
    if missing:
        evidence.append({"kind": "pod-missing", "component": "gfd"})
    return top_pair(synthetic_case("x-missing-crd", evidence, healthy=healthy))


def test_the_release_notes_line_blames_the_operator_not_gfd() -> None:
    log = ("Couldn't find ServiceMonitor CRD\n"
           "Install Prometheus and necessary CRDs for gathering GPU metrics\n")
    assert _top(log, healthy=False) == ("gpu-operator", "clusterpolicy_not_ready")


def test_the_reconciler_error_for_an_add_on_kind_is_the_operator_s() -> None:
    assert _top(_OPNI + "\n", healthy=False) == ("gpu-operator", "clusterpolicy_not_ready")


def test_an_operator_that_found_the_crd_says_nothing() -> None:
    log = ('INFO\tcontrollers.ClusterPolicy\tFound ServiceMonitor CRD\n'
           'INFO\tcontrollers.ClusterPolicy\tFound Resource, creating...\t'
           '{"ServiceMonitor": "nvidia-dcgm-exporter"}\n')
    assert _top(log, healthy=True, missing=False) is None
