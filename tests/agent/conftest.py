"""Fixtures for the agent tests: running agents that are always stopped."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from agent_helpers import NODE, AgentFactory, RunningAgent

from gpunode.agent.judge import judge_probe
from gpunode.agent.loop import Agent, AgentConfig
from gpunode.agent.server import start_server
from gpunode.probe import ProbeResult


@pytest.fixture
def run_agent() -> Iterator[AgentFactory]:
    """Start agents (interval 0.05 s) and stop every one of them, threads included."""
    running: list[RunningAgent] = []

    def start(probe: Callable[[], ProbeResult], *, stale_after_s: float = 5.0, **kwargs: Any) -> RunningAgent:
        config = AgentConfig(NODE, interval_s=0.05, stale_after_s=stale_after_s)
        kwargs.setdefault("judge", judge_probe)
        agent = Agent(config, probe, **kwargs)
        handle = RunningAgent(agent, start_server(agent, "127.0.0.1", 0))
        running.append(handle)
        agent.start()
        return handle

    yield start
    for handle in running:
        handle.server.stop()
        assert handle.agent.stop(timeout_s=5.0), "probe thread did not stop"
    names = {t.name for t in threading.enumerate()}
    assert "gpunode-agent-probe" not in names
