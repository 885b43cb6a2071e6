"""``diagnose --since``: what changed on each node, from the agent histories in the bundle.

Live, the collector saves each agent's ``/history`` beside the facts it fetched from that
agent (``nodes/<node>/cmd/gpunode-history.json``); offline, a bundle holds the same file
where it was collected, or where someone copied an agent's history file. The changes are
read by ``gpunode.fleet.history``. (``gpunode.since`` is another thing: when a root cause
started, from the API's own timestamps.)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

import msgspec

from gpunode.agent.fold import HISTORY_FILE, node_dir_name
from gpunode.errors import ParseError, UsageError
from gpunode.fleet.history import History, decode_history, node_changes, rfc3339
from gpunode.fleet.model import ChangesSince
from gpunode.model import Report
from gpunode.relazy import lazy_compile
from gpunode.report.changes import node_lines, since_title

_PART = lazy_compile(r"(\d+(?:\.\d+)?)(d|h|m|s)")
_UNIT_S = {"d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0}
#: A history file larger than this is not one (the agent keeps it under 64 KiB).
_MAX_HISTORY_BYTES = 1024 * 1024


def since_time(text: str, now: float) -> float:
    """``--since`` as Unix seconds: a duration back from now (``24h``, ``7d``, ``1h30m``) or an
    RFC 3339 time (``2026-12-01T08:00:00Z``); a UsageError (exit 2) for anything else."""
    value = text.strip().lower()
    if value and re.fullmatch(rf"(?:{_PART.pattern})+", value):
        return now - sum(float(n) * _UNIT_S[unit] for n, unit in _PART.findall(value))
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--since {text!r}: expected a duration such as 24h, 7d or 1h30m, or an "
                         "RFC 3339 time such as 2026-12-01T08:00:00Z") from None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


def read_history(bundle: Path, node: str) -> tuple[History | None, str | None]:
    """The node's history in the bundle, or None and why there is none."""
    path = bundle / "nodes" / node_dir_name(node) / HISTORY_FILE
    try:
        if path.stat().st_size > _MAX_HISTORY_BYTES:
            return None, f"{HISTORY_FILE} is larger than a history can be; not read"
        data = path.read_bytes()
    except FileNotFoundError:
        return None, "no agent history in this bundle"
    except OSError as exc:
        return None, f"{HISTORY_FILE}: cannot read ({exc.strerror or exc})"
    try:
        return decode_history(data), None
    except ParseError as exc:
        return None, f"{HISTORY_FILE}: {exc}"


def changes_since(bundle: Path, nodes: Iterable[str], since: float) -> ChangesSince:
    """Each node's changes since ``since`` from the histories in ``bundle``."""
    out = []
    for node in nodes:
        history, why = read_history(bundle, node)
        out.append(node_changes(node, history, since, why))
    return ChangesSince(rfc3339(since), tuple(out))


def with_changes(report: Report, bundle: Path, since: float) -> Report:
    """The report with its ``changes_since`` section for the reported nodes."""
    section = changes_since(bundle, [n.name for n in report.nodes], since)
    return msgspec.structs.replace(report, changes_since=section)


def render_changes(section: ChangesSince, out: TextIO, markdown: bool = False) -> None:
    """The section under the report: per node, its changes, ``no changes`` or ``no history``."""
    title = since_title(section)
    out.write(f"\n## {title}\n\n" if markdown else f"\n{title}\n")
    if not section.nodes:
        out.write("  no nodes reported\n")
    for node in section.nodes:
        lines = node_lines(node)
        if markdown:
            out.write(f"- **{node.node}**\n" + "".join(f"  - {line}\n" for line in lines))
        else:
            out.write(f"  {node.node}\n" + "".join(f"    {line}\n" for line in lines))


def show_changes(report: Report, output: str) -> None:
    """Under a table or Markdown report, its ``changes_since`` section (JSON holds it as a field,
    the HTML page as a section of its own)."""
    section = report.changes_since
    if isinstance(section, msgspec.UnsetType) or output not in ("table", "wide", "markdown"):
        return
    from gpunode.commands.common import stdout
    from gpunode.safety import safe_struct

    out = stdout()
    render_changes(safe_struct(section, ChangesSince), out, markdown=output == "markdown")
    out.flush()
