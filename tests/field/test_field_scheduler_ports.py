"""A pod the scheduler cannot place because a host port it asks for is taken is its
component's port conflict, not a bare Pending: the scheduler's NodePorts filter (the
PodFitsHostPorts predicate before it) says so in the pod's FailedScheduling event. Lines as
public reports quote them (k3s ServiceLB holding 9100, OpenShift's own node-exporter)."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import top_pair


def _case(*evidence: dict[str, Any]) -> Case:
    raw = {"id": "x-scheduler-ports", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "evidence": list(evidence), "expect": {"healthy": True}}
    return msgspec.convert(raw, Case)


def _pending(component: str, message: str) -> tuple[dict[str, Any], dict[str, Any]]:
    return ({"kind": "pod-state", "component": component, "state": "Pending"},
            {"kind": "event", "component": component, "type": "Warning", "reason": "FailedScheduling",
             "message": message})


#: k3s: ServiceLB's svclb pods expose a LoadBalancer's ports as hostPorts on every node.
K3S_PORTS = ("0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports. "
             "no new claims to deallocate, preemption: 0/1 nodes are available: 1 node(s) didn't have free "
             "ports for the requested pod ports.")
#: Newer schedulers name the other nodes' filter by plugin.
PLUGIN_FORM = ("0/2 nodes are available: 1 node(s) didn't have free ports for the requested pod ports, "
               "1 node(s) didn't satisfy plugin(s) [NodeAffinity].")


def test_a_node_exporter_refused_for_its_host_port_is_its_port_conflict() -> None:
    for message in (K3S_PORTS, PLUGIN_FORM):
        found = top_pair(_case(*_pending("node-exporter", message)))
        assert found == ("node-exporter", "node_exporter_port_conflict")


def test_an_otel_agent_refused_for_its_host_port_is_its_port_conflict() -> None:
    assert top_pair(_case(*_pending("otel-agent", PLUGIN_FORM))) == ("otel-agent", "otel_agent_port_conflict")


def test_a_node_exporter_refused_for_cpu_is_no_port_conflict() -> None:
    # look-alike: the same Pending exporter, kept off by its CPU request
    message = ("0/5 nodes are available: 1 Insufficient cpu, "
               "4 node(s) didn't match Pod's node affinity/selector. "
               "preemption: 0/5 nodes are available: 1 No preemption victims found for incoming pod, "
               "4 Preemption is not helpful for scheduling.")
    found = top_pair(_case(*_pending("node-exporter", message)))
    assert found == ("node-exporter", "scheduling_insufficient_resources")


def test_another_component_refused_for_a_host_port_is_not_the_exporter_s() -> None:
    found = top_pair(_case(*_pending("dcgm-exporter", PLUGIN_FORM)))
    assert found is not None and found[0] == "dcgm-exporter"
    assert found[1] not in {"node_exporter_port_conflict", "otel_agent_port_conflict"}


def test_an_exporter_that_runs_stays_healthy() -> None:
    assert top_pair(_case({"kind": "pod-state", "component": "node-exporter", "state": "Running"})) is None
