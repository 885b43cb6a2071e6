"""Words and colours for verdicts, shared by the table and markdown reporters."""

from __future__ import annotations

from gpunode.validate.model import ClusterVerdict, Verdict

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
