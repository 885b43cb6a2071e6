"""``gpunode agent``: the node probe, run continuously on every GPU node (a DaemonSet).

It probes the node every interval, judges the result with the same engine the
CLI uses, and serves ``/metrics``, ``/healthz``, ``/facts`` and ``/report`` on one
port; with ``--node-condition`` it also sets the ``GPUStackHealthy`` node
condition. ``fold`` is the cluster side: it puts the agents' facts into a bundle.
"""

from gpunode.agent.condition import CONDITION_TYPE, ConditionValue, camel_case, condition_for
from gpunode.agent.fold import FoldResult, agent_pods_by_node, facts_proxy_path, fold_agent_facts
from gpunode.agent.judge import judge_probe
from gpunode.agent.loop import Agent, AgentConfig
from gpunode.agent.server import start_server

__all__ = [
    "CONDITION_TYPE",
    "Agent",
    "AgentConfig",
    "ConditionValue",
    "FoldResult",
    "agent_pods_by_node",
    "camel_case",
    "condition_for",
    "facts_proxy_path",
    "fold_agent_facts",
    "judge_probe",
    "start_server",
]
