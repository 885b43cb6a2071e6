"""What changed, as every reporter shows it: a report's ``changes_since`` section (the agents'
histories, ``diagnose --since``) and the ``gpunode diff`` page.

Pure rendering: the lines come from the report or the diff, never from a file or the API."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from gpunode.fleet.model import ChangesSince, DiffReport, NodeHistoryChanges, RootCauseChange


def since_title(section: ChangesSince) -> str:
    return f"What changed since {section.since} (agent history)"


def node_lines(node: NodeHistoryChanges) -> list[str]:
    """A node's changes, oldest first, or why there are none to tell."""
    if node.status == "no_history":
        return [f"no history: {node.note}" if node.note else "no history"]
    if node.status == "unchanged":
        return [f"no changes (history from {node.history_from})"]
    return list(node.changes)


def since_html(section: ChangesSince | msgspec.UnsetType) -> str:
    """The HTML section under the fleet analysis, or an empty string without ``--since``."""
    if isinstance(section, msgspec.UnsetType):
        return ""
    items = "".join(
        f'<li data-nodes="{escape(node.node)}" class="since-{escape(node.status)}"><b>{escape(node.node)}</b>'
        f"<ul>{''.join(f'<li>{escape(line)}</li>' for line in node_lines(node))}</ul></li>"
        for node in section.nodes)
    body = f"<ul>{items}</ul>" if items else "<p>no nodes reported</p>"
    return f'<section id="changes-since"><h2>{escape(since_title(section))}</h2>{body}</section>'


def _root_cause_items(label: str, causes: tuple[RootCauseChange, ...]) -> str:
    return "".join(
        f"<li>{label} <code>{escape(rc.cause)}</code> ({escape(rc.component)}) — {escape(rc.title)} "
        f"on {escape(', '.join(rc.nodes))}</li>" for rc in causes)


def diff_html(result: DiffReport, css: str) -> str:
    """``gpunode diff -o html``: one self-contained page, every change ranked (the page is
    read, not scrolled past, so nothing is cut)."""
    title = f"gpunode diff — {result.old.location} → {result.new.location}"
    causes = (_root_cause_items("✗ new", result.new_root_causes)
              + _root_cause_items("✓ resolved", result.resolved_root_causes))
    verdict = (f"<b>{len(result.new_root_causes)} new root causes</b> on {len(result.began_failing)} nodes"
               if result.new_root_causes else "No new root cause.")
    rows = "".join(
        f'<tr class="change-{escape(c.kind)}"><td>{escape(c.what)}</td><td>{escape(c.before)}</td>'
        f"<td>{escape(c.after)}</td><td>{escape(', '.join(c.nodes))}</td><td>{escape(c.kind)}</td>"
        f"<td>{c.explains} of {len(result.began_failing)} ({c.score:g})</td></tr>"
        for c in result.changes)
    table = ("<table><thead><tr><th>what</th><th>before</th><th>after</th><th>nodes</th><th>kind</th>"
             f"<th>explains</th></tr></thead><tbody>{rows}</tbody></table>"
             if rows else "<p>No change in what gpunode compares.</p>")
    sides = (f"{escape(result.old.location)} ({escape(result.old.collected_at or '?')}, "
             f"{result.old.gpu_nodes} GPU nodes) → {escape(result.new.location)} "
             f"({escape(result.new.collected_at or '?')}, {result.new.gpu_nodes} GPU nodes)")
    return "\n".join([
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{css}</style></head><body>",
        f'<header><h1>{escape(title)}</h1><p class="meta">{sides}</p>'
        f'<p class="verdict" id="verdict">{verdict}</p></header>',
        f'<section id="root-causes"><h2>Root causes</h2><ul>{causes}</ul></section>' if causes else "",
        f'<section id="changes"><h2>Changes, best explanation of the new failures first '
        f"({len(result.changes)})</h2>{table}</section>",
        "</body></html>", "",
    ])
