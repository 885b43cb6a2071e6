"""A PodSecurity refusal of a DaemonSet's pods names the DaemonSet's owner: the GPU
Operator only where the DaemonSet is its operand (deployed by it, or put in its
namespace by its chart); any other agent's DaemonSet is that agent's own refusal."""

from __future__ import annotations

from case import CASES_DIR, load_case
from scoreboard import diagnose_case, top_root_cause


def _top(name: str) -> tuple[str, str] | None:
    case = load_case(CASES_DIR / f"{name}.yaml")
    top = top_root_cause(diagnose_case(case), case.node)
    return (top.component, top.cause) if top else None


def test_a_logging_agent_daemonset_refused_by_pod_security_is_the_agent_s() -> None:
    # grafana/loki#11727 on Talos: 'pods "grafana-loki-logs-748vr" is forbidden: violates
    # PodSecurity "baseline:latest": hostPath volumes ..., privileged ...'
    assert _top("loki-11727-talos-logs-agent-daemonset-podsecurity-baseline-forbidden") == (
        "logging-agent", "error_permission_denied")


def test_the_operator_s_own_operands_refused_stay_the_operator_s() -> None:
    # NVIDIA/gpu-operator#185 (its driver DaemonSet, PSP) and #48 (its chart's NFD worker, SCC)
    assert _top("gpu-operator-185-psp-blocks-driver-ds") == ("gpu-operator", "operand_pod_security_denied")
    assert _top("gpu-operator-48-ocp-chart-nfd-worker-scc") == ("gpu-operator", "operand_pod_security_denied")
