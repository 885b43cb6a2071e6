"""Answers that come from a node rather than from etcd: exec, logs, pod proxy.

Each function takes the bundle root and the decoded pod and returns what the
kubelet (through the API server) would: command output and exit code, log
text, an exporter's scrape or a gpunode agent's ``/facts`` — or the error a
real cluster gives when the bundle holds no such observation.
"""

from __future__ import annotations

import io
import posixpath
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from gpunode.agent.fold import AGENT_LABEL, HISTORY_FILE, PROBE_FILE
from gpunode.collect.batch import Framed, frame, parse_script
from gpunode.collect.classify import component_of
from gpunode.collect.mounts import host_path
from gpunode.collect.slim import Container, Pod
from gpunode.collect.targets import (
    METRICS_COMPONENTS,
    MOFED_COMMANDS,
    NODE_COMMANDS,
    PRIVILEGED_COMMANDS,
)


@dataclass(frozen=True)
class ExecResult:
    """What an exec produced; ``internal_error`` replaces exit code when it never started."""

    stdout: bytes = b""
    stderr: bytes = b""
    exit_code: int = 0
    internal_error: str = ""


@dataclass(frozen=True)
class HttpAnswer:
    """A pod's or kubelet's answer (logs, metrics, agent facts) or an error message.

    ``proxy_error`` marks the API server's own failure to reach the pod, which it
    answers with a Status; anything else the pod said is passed through as is.
    """

    code: int
    body: bytes
    content_type: str = "text/plain"
    proxy_error: bool = False


def node_dir(root: Path, pod: Pod) -> Path:
    return root / "nodes" / pod.spec.node_name


def run_command(root: Path, pod: Pod, container: Container, argv: list[str]) -> ExecResult:
    """Answer ``argv`` from ``nodes/<node>/`` as the container would see it."""
    program = posixpath.basename(argv[0]) if argv else ""
    if program == "sh" and len(argv) == 3 and argv[1] == "-c":
        batch = parse_script(argv[2])
        if batch is not None:
            return _batch(root, pod, container, *batch)
    if program == "cat" and len(argv) > 1:
        return _cat(root, pod, container, argv[1:])
    if program == "tar" and len(argv) == 6 and argv[1] == "-C" and argv[3:] == ["-cf", "-", "."]:
        return _tar(root, pod, container, argv[2])
    return _node_command(root, pod, container, program, argv)


def _node_command(root: Path, pod: Pod, container: Container, program: str,
                  argv: list[str]) -> ExecResult:
    """A command of targets.py answered from the node's ``cmd/`` file."""
    name = NODE_COMMANDS.get((program, *argv[1:]))
    optional = MOFED_COMMANDS.get((program, *argv[1:]))
    file = name or optional
    output = node_dir(root, pod) / "cmd" / file if file else None
    if optional and output is not None and output.parent.is_dir() and not output.is_file():
        return ExecResult()  # the command's guard: no such tool in the container, nothing printed
    if output is None or not output.is_file():
        return _not_found(program or "<empty>")
    if program in PRIVILEGED_COMMANDS and not _privileged(container):
        return ExecResult(stderr=b"dmesg: read kernel buffer failed: Operation not permitted\n",
                          exit_code=1)
    return ExecResult(stdout=output.read_bytes())


def _batch(root: Path, pod: Pod, container: Container, token: str,
           commands: list[list[str]]) -> ExecResult:
    """A collector batch script, answered as ``sh`` would run it command by command."""
    results = []
    for argv in commands:
        one = run_command(root, pod, container, argv)
        if one.internal_error:  # sh itself reports a missing program with 127
            program = posixpath.basename(argv[0]) if argv else ""
            one = ExecResult(stderr=f"sh: 1: {program}: not found\n".encode(), exit_code=127)
        results.append(Framed(one.stdout, one.stderr, one.exit_code))
    stdout, stderr = frame(results, token)
    return ExecResult(stdout=stdout, stderr=stderr, exit_code=results[-1].exit_code)


def _not_found(program: str) -> ExecResult:
    return ExecResult(internal_error=(
        "error executing command in container: failed to exec in container: failed to start "
        f'exec: OCI runtime exec failed: exec failed: unable to start container process: exec: '
        f'"{program}": executable file not found in $PATH: unknown'))


def _privileged(container: Container) -> bool:
    return bool(container.security_context and container.security_context.privileged)


def _cat(root: Path, pod: Pod, container: Container, paths: list[str]) -> ExecResult:
    out, err = bytearray(), bytearray()
    for path in paths:
        host = host_path(pod, container, path)
        target = node_dir(root, pod) / "files" / host.lstrip("/") if host else None
        if target is not None and target.is_file():
            out += target.read_bytes()
        elif target is not None and target.is_dir():
            err += f"cat: {path}: Is a directory\n".encode()
        else:
            err += f"cat: {path}: No such file or directory\n".encode()
    return ExecResult(stdout=bytes(out), stderr=bytes(err), exit_code=1 if err else 0)


def _tar(root: Path, pod: Pod, container: Container, directory: str) -> ExecResult:
    """``tar -C DIR -cf - .`` of the host directory behind DIR: its plain files."""
    host = host_path(pod, container, directory)
    source = node_dir(root, pod) / "files" / host.lstrip("/") if host else None
    if source is None or not source.is_dir():
        return ExecResult(stderr=f"tar: {directory}: Cannot open: No such file or directory\n"
                                 "tar: Error is not recoverable: exiting now\n".encode(),
                          exit_code=2)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as tar:
        tar.addfile(_tar_info("./", tarfile.DIRTYPE, 0))
        for path in sorted(p for p in source.iterdir() if p.is_file()):
            data = path.read_bytes()
            tar.addfile(_tar_info(f"./{path.name}", tarfile.REGTYPE, len(data)), io.BytesIO(data))
    return ExecResult(stdout=buffer.getvalue())


def _tar_info(name: str, kind: bytes, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.size, info.mode = kind, size, 0o755 if kind == tarfile.DIRTYPE else 0o644
    return info


def read_log(root: Path, pod: Pod, container: str, previous: bool) -> HttpAnswer:
    """The container's log text, or the 400 the API gives when there is none."""
    name = f"{container}.previous.log" if previous else f"{container}.log"
    path = root / "logs" / pod.metadata.namespace / pod.metadata.name / name
    if path.is_file():
        return HttpAnswer(200, path.read_bytes())
    if previous:
        return HttpAnswer(400, f'previous terminated container "{container}" in pod '
                               f'"{pod.metadata.name}" not found'.encode())
    waiting = _waiting_reason(pod, container)
    if waiting:
        return HttpAnswer(400, f'container "{container}" in pod "{pod.metadata.name}" is '
                               f'waiting to start: {waiting}'.encode())
    return HttpAnswer(200, b"")


def _waiting_reason(pod: Pod, container: str) -> str:
    statuses = (*pod.status.init_container_statuses, *pod.status.container_statuses)
    for status in statuses:
        if status.name == container and status.state.waiting and status.restart_count == 0:
            return status.state.waiting.reason or "ContainerCreating"
    return ""


def tail(text: bytes, lines: int | None, limit_bytes: int | None) -> bytes:
    """Apply ``tailLines`` then ``limitBytes`` the way the kubelet does."""
    if lines is not None:
        parts = text.splitlines(keepends=True)
        text = b"".join(parts[-lines:]) if lines > 0 else b""
    if limit_bytes is not None and limit_bytes >= 0:
        text = text[:limit_bytes]
    return text


def proxy(root: Path, pod: Pod, port: str, path: str, raw: bool = False) -> HttpAnswer:
    """What ``GET pods/<pod>:<port>/proxy/<path>`` returns: a gpunode agent's facts
    (``raw`` is its ``?raw=1``), else an exporter's metrics."""
    if pod.metadata.labels.get(AGENT_LABEL[0]) == AGENT_LABEL[1]:
        return agent_facts(root, pod, port, path, raw)
    return scrape(root, pod, port, path)


def _refused(pod: Pod, port: str) -> HttpAnswer | None:
    """The API server's 503 when nothing listens on that port of the pod, else None."""
    number = resolve_port(pod, port)
    if number in {p.container_port for c in pod.spec.containers for p in c.ports}:
        return None
    return _connection_refused(number)


def _connection_refused(number: int) -> HttpAnswer:
    pod_ip = "10.244.0.1"
    return HttpAnswer(503, f"error trying to reach service: dial tcp {pod_ip}:{number}: "
                           "connect: connection refused".encode(), proxy_error=True)


def agent_facts(root: Path, pod: Pod, port: str, path: str, raw: bool) -> HttpAnswer:
    """The agent's ``/facts`` from ``nodes/<node>/cmd/gpunode-probe.json`` and its ``/history``
    from ``cmd/gpunode-history.json``, answered the way the agent does (its own 404 and 503
    texts)."""
    refused = _refused(pod, port)
    if refused is not None:
        return refused
    if path.rstrip("/") == "/history":
        history = node_dir(root, pod) / HISTORY_FILE
        if not history.is_file():
            return HttpAnswer(404, b'{"error": "this agent keeps no history (--history-dir \'\')"}\n',
                              "application/json")
        return HttpAnswer(200, history.read_bytes(), "application/json")
    if path.rstrip("/") != "/facts":
        return HttpAnswer(404, b"not found; try /metrics, /healthz, /facts, /report, /history, /trends\n",
                          "text/plain; charset=utf-8")
    file = node_dir(root, pod) / PROBE_FILE
    if not file.is_file():
        return HttpAnswer(503, b'{"error": "no probe result yet"}\n', "application/json")
    body = file.read_bytes()
    return HttpAnswer(200, _with_raw(node_dir(root, pod), body) if raw else body,
                      "application/json")


def _with_raw(directory: Path, body: bytes) -> bytes:
    """``/facts?raw=1``: the facts plus the texts an agent would have read on the node.

    Those are the node's kernel log, every file under ``files/``, and nvidia-smi's
    output only where the probe says it ran nvidia-smi. A body that is not a JSON
    object is served unchanged (a broken agent).
    """
    try:
        facts: Any = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return body
    if not isinstance(facts, dict):
        return body
    names = ["dmesg.txt"]
    if facts.get("nvidia_smi", "not_run") != "not_run":
        names += ["nvidia-smi.txt", "nvidia-smi-q.xml"]
    texts = {f"cmd/{n}": directory / "cmd" / n for n in names}
    files = directory / "files"
    if files.is_dir():
        texts.update({f"files/{p.relative_to(files).as_posix()}": p
                      for p in sorted(files.rglob("*"))})
    raw = {rel: p.read_text(errors="replace") for rel, p in texts.items() if p.is_file()}
    return msgspec.json.encode({**facts, "raw": raw})


def scrape(root: Path, pod: Pod, port: str, path: str) -> HttpAnswer:
    """What ``GET pods/<pod>:<port>/proxy/<path>`` returns for an exporter: its metrics."""
    number = resolve_port(pod, port)
    refused = _connection_refused(number)
    component = component_of(pod)
    metrics = METRICS_COMPONENTS.get(component or "")
    if _refused(pod, port) is not None or metrics is None:
        return refused
    file = node_dir(root, pod) / "metrics" / metrics
    if not file.is_file():
        return refused
    if path.rstrip("/") != "/metrics":
        return HttpAnswer(404, b"404 page not found\n", "text/plain; charset=utf-8")
    body = advanced(file.read_bytes(), time.monotonic() - _SERVING_SINCE)
    return HttpAnswer(200, body, "text/plain; version=0.0.4; charset=utf-8")


#: When this server process began answering: a scrape's counters advance from then on.
_SERVING_SINCE = time.monotonic()
#: How fast a served counter grows: about a busy GPU's energy counter (mJ a second).
_COUNTER_RATE = 400_000


def advanced(metrics: bytes, seconds: float) -> bytes:
    """The bundle's scrape as a running exporter gives it ``seconds`` later: every sample of a
    family whose ``# TYPE`` is ``counter`` has grown (a live DCGM exporter's energy counter
    always does; validate's two-scrape freshness check reads that), the rest as recorded."""
    if b" counter" not in metrics:
        return metrics
    step = int(seconds * _COUNTER_RATE) + 1
    counters: set[bytes] = set()
    lines = metrics.split(b"\n")
    for i, line in enumerate(lines):
        if line.startswith(b"# TYPE "):
            parts = line.split()
            if len(parts) == 4 and parts[3] == b"counter":
                counters.add(parts[2])
            continue
        name = line.split(b"{", 1)[0].split(b" ", 1)[0]
        if name in counters:
            head, _, value = line.rpartition(b" ")
            try:
                lines[i] = head + b" " + str(int(float(value)) + step).encode()
            except ValueError:
                continue
    return b"\n".join(lines)


def resolve_port(pod: Pod, port: str) -> int:
    """A port given by number or by container-port name; no port means 80."""
    if port.isdigit():
        return int(port)
    for container in pod.spec.containers:
        for declared in container.ports:
            if port and declared.name == port:
                return declared.container_port
    return 80
