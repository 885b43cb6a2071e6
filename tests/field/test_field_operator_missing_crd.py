"""The operator's own log naming a custom resource kind whose definition the cluster lacks
(the Prometheus Operator's ServiceMonitor that dcgmExporter.serviceMonitor asks for) is why
the ClusterPolicy is not ready and why the operands it has not reached yet have no pod: the
GPU Operator 23.3.0 release notes (GFD not started; the operator logs "Couldn't find
ServiceMonitor CRD"). The look-alike is an operator that found the CRD and created the
ServiceMonitor: nothing to say. controller-runtime's reconciler error naming an add-on kind
('no matches for kind "ServiceMonitor" in version "monitoring.coreos.com/v1"', rancher/opni#186)
is not read alone: an operator probing for an optional kind logs the same words and stays
healthy (tests/field/test_field_running_logs.py)."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair


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


def test_an_operator_that_found_the_crd_says_nothing() -> None:
    log = ('INFO\tcontrollers.ClusterPolicy\tFound ServiceMonitor CRD\n'
           'INFO\tcontrollers.ClusterPolicy\tFound Resource, creating...\t'
           '{"ServiceMonitor": "nvidia-dcgm-exporter"}\n')
    assert _top(log, healthy=True, missing=False) is None
