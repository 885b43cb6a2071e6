"""Shared words and colours for statuses and verdicts, so every reporter says the same thing."""

from __future__ import annotations

import textwrap

from rich import box
from rich.console import Console
from rich.text import Text

from gpunode.model import LAYER_NAMES, NotGpuNode, Status
from gpunode.validation import ClusterVerdict, Verdict

STATUS_STYLE = {
    Status.OK: "green",
    Status.DEGRADED: "yellow",
    Status.FAILED: "bold red",
    Status.NOT_DEPLOYED: "dim",
    Status.UNKNOWN: "magenta",
}

STATUS_MARK = {
    Status.OK: "✓",
    Status.DEGRADED: "!",
    Status.FAILED: "✗",
    Status.NOT_DEPLOYED: "·",
    Status.UNKNOWN: "?",
}

VERDICT_STYLE = {
    Verdict.PASS: "green",
    Verdict.WARN: "yellow",
    Verdict.FAIL: "bold red",
    Verdict.SKIP: "dim",
    Verdict.UNKNOWN: "magenta",
}

VERDICT_MARK = {
    Verdict.PASS: "✓",
    Verdict.WARN: "!",
    Verdict.FAIL: "✗",
    Verdict.SKIP: "·",
    Verdict.UNKNOWN: "?",
}

CLUSTER_STYLE = {
    ClusterVerdict.READY: "bold green",
    ClusterVerdict.READY_WITH_WARNINGS: "bold yellow",
    ClusterVerdict.NOT_READY: "bold red",
}


def score_text(score: float | None) -> str:
    return "n/a" if score is None else f"{round(score * 100)}%"


def layer_label(layer: int) -> str:
    return f"L{layer} {LAYER_NAMES[layer]}" if layer < 5 else LAYER_NAMES[layer]


def not_gpu_line(node: NotGpuNode) -> Text:
    """A node asked for by name that is not a GPU node, and the evidence that is absent."""
    return Text.assemble((f"{node.name}: not a GPU node", "bold"), f" — {node.reason}")


def table_box(console: Console) -> box.Box | None:
    """Box drawing on a terminal; plain columns when piped (greppable, no line art)."""
    return box.SIMPLE_HEAD if console.is_terminal else None


def paragraph(console: Console, text: str, indent: int, style: str = "", lead: Text | None = None) -> None:
    """Print ``text`` wrapped at word boundaries only (never inside a pod, kernel or
    component name), indented, with no padding to the right margin."""
    pad = " " * indent
    width = max(console.width - indent, 30)
    head = lead.plain if lead is not None else ""
    lines = textwrap.wrap(
        head + text, width=width, break_long_words=False, break_on_hyphens=False
    ) or [""]
    for i, line in enumerate(lines):
        out = Text(pad)
        body = line
        if i == 0 and lead is not None:
            out.append_text(lead)
            body = line[len(head) :]
        out.append(body, style=style)
        console.print(out, soft_wrap=True)
