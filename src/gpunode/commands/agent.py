"""``gpunode agent``: probe this node continuously and serve the verdict (DaemonSet mode)."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gpunode.commands.extras import request_timeout
from gpunode.errors import UsageError

if TYPE_CHECKING:
    import logging

    from gpunode.agent.loop import Agent, AgentConfig
    from gpunode.agent.nodeapi import LightkubeNodeApi
    from gpunode.probe import ProbeResult


def _log() -> logging.Logger:
    """The agent's logger; logging is imported only by the agent (start-up of other commands)."""
    import logging

    return logging.getLogger("gpunode.agent")


#: The agent's wait for one API request (read the Node, patch its condition, the report).
NODE_API_TIMEOUT_S = 10.0


def register(app: typer.Typer) -> None:
    """Add the ``agent`` command to the CLI."""
    app.command("agent")(agent_cmd)


def agent_cmd(
    *,
    interval: Annotated[float, typer.Option(help="Seconds between probes.")] = 30.0,
    port: Annotated[int, typer.Option(help="Port for /metrics, /healthz, /facts, /report.")] = 9808,
    address: Annotated[str, typer.Option(help="Address to listen on ('::' for IPv6).")] = "0.0.0.0",
    host_root: Annotated[
        Path, typer.Option(help="Where the host's file system is mounted (/host in the DaemonSet).")
    ] = Path("/"),
    node_name: Annotated[
        str | None, typer.Option(envvar="NODE_NAME", help="This node's name (default: $NODE_NAME, hostname).")
    ] = None,
    node_condition: Annotated[
        bool, typer.Option("--node-condition", help="Set the GPUStackHealthy node condition.")
    ] = False,
    nvidia_smi: Annotated[
        bool, typer.Option("--nvidia-smi", help="Also run nvidia-smi -q -x each probe (for the XML checks).")
    ] = False,
    stale_after: Annotated[
        float | None, typer.Option(help="Seconds after which facts are stale (default 3 intervals).")
    ] = None,
    node_report: Annotated[
        bool,
        typer.Option(
            "--node-report/--no-node-report",
            help="Publish this node's GPUNodeReport (verdict and compact facts) when API access allows.",
        ),
    ] = True,
    report_interval: Annotated[
        float, typer.Option(help="Republish an unchanged GPUNodeReport at least this often (seconds).")
    ] = 300.0,
    history_dir: Annotated[
        str,
        typer.Option(help="Host directory for this node's history file (at most 64 KiB; '' keeps none). The "
                     "DaemonSet mounts it from the host so the history survives restarts."),
    ] = "/var/lib/gpunode",
    log_level: Annotated[str, typer.Option(help="debug, info, warning or error.")] = "info",
    request_timeout_text: Annotated[
        str | None,
        typer.Option(
            "--request-timeout",
            metavar="DURATION",
            help="Give up on one API request (the Node, its condition, the GPUNodeReport) after this long "
            "(seconds, or 30s, 1m); 0 or absent: 10 s.",
        ),
    ] = None,
) -> None:
    """Probe this node every interval and serve metrics, health, facts and the node condition."""
    from gpunode.agent.loop import AgentConfig

    _setup_logging(log_level)
    timeout_s = request_timeout(request_timeout_text) or NODE_API_TIMEOUT_S
    if interval <= 0 or (stale_after is not None and stale_after <= 0):
        raise UsageError("--interval and --stale-after must be more than 0 seconds")
    if report_interval <= 0:
        raise UsageError("--report-interval must be more than 0 seconds")
    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port}: not a TCP port (0-65535)")
    if not host_root.is_dir():
        raise UsageError(f"--host-root {host_root}: no such directory")
    name = node_name or _hostname(host_root)
    config = AgentConfig(node_name=name, interval_s=interval, stale_after_s=stale_after)
    agent = _build_agent(config, str(host_root), nvidia_smi, node_condition,
                         report_interval if node_report else None, timeout_s=timeout_s,
                         history_dir=Path(history_dir) if history_dir else None)
    _serve(agent, address, port)


def _build_agent(config: AgentConfig, host_root: str, nvidia_smi: bool, node_condition: bool,
                 report_interval: float | None = None, *, timeout_s: float = NODE_API_TIMEOUT_S,
                 history_dir: Path | None = None) -> Agent:
    """The agent; it publishes a GPUNodeReport every ``report_interval`` if given and API access exists,
    and keeps the node's history under ``history_dir`` if given."""
    import time

    from gpunode.agent.history import HistoryStore
    from gpunode.agent.judge import judge_probe
    from gpunode.agent.loop import Agent
    from gpunode.agent.nodereport import ReportPublisher
    from gpunode.probe import run_probe

    def probe() -> ProbeResult:
        return run_probe(host_root, config.node_name, run_nvidia_smi=nvidia_smi)

    api = _node_api(node_condition, timeout_s)
    reports = None
    if api is not None and report_interval is not None:
        reports = ReportPublisher(api, config.node_name, report_interval, clock=time.monotonic)
    history = HistoryStore(history_dir, config.node_name) if history_dir is not None else None
    return Agent(config, probe, judge=judge_probe, node_api=api, set_condition=node_condition,
                 reports=reports, history=history)


def _serve(agent: Agent, address: str, port: int) -> None:
    """Serve until SIGTERM/SIGINT, then stop the server and the probe loop."""
    from gpunode.agent.server import start_server

    try:
        server = start_server(agent, address, port)
    except OSError as exc:
        raise UsageError(f"cannot listen on {address}:{port}: {exc.strerror or exc}") from None
    config = agent.config
    _log().info(
        "gpunode agent for node %s listening on %s:%d, probing every %gs",
        config.node_name, address, server.port, config.interval_s,
    )
    agent.start()
    _wait_for_signal()
    _log().info("stopping")
    server.stop()
    if not agent.stop(timeout_s=min(10.0, config.interval_s + 5.0)):
        _log().warning("a probe was still running at shutdown")


def _setup_logging(level: str) -> None:
    import logging

    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        raise UsageError(f"--log-level {level}: not a logging level")
    logging.basicConfig(level=numeric, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def _hostname(host_root: Path) -> str:
    try:
        text = (host_root / "proc/sys/kernel/hostname").read_text().strip()
    except OSError:
        text = ""
    return text or os.uname().nodename


def _node_api(required: bool, timeout_s: float) -> LightkubeNodeApi | None:
    """Kubernetes access (in-cluster service account, else kubeconfig), if there is any."""
    from lightkube import KubeConfig
    from lightkube.core.exceptions import ConfigError

    from gpunode.agent.nodeapi import LightkubeNodeApi

    try:
        config = KubeConfig.from_env().get()
        if config is None:
            raise ConfigError("kubeconfig has no current context")
        return LightkubeNodeApi.from_config(config, timeout_s)
    except (ConfigError, KeyError, OSError, ValueError) as exc:
        if required:
            raise UsageError(f"--node-condition needs Kubernetes API access: {exc}") from None
        _log().info("no Kubernetes API configuration (%s); judging without the Node object", exc)
        return None


def _wait_for_signal() -> None:
    """Block until SIGTERM (pod deletion) or SIGINT."""
    stop = threading.Event()

    def handler(signum: int, _frame: object) -> None:
        _log().info("received %s", signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    while not stop.wait(1.0):
        pass
