"""Options of every live collection (collect, diagnose, stack, validate): whose node extras it
fetches, how long it waits for the API, and the whole run's deadline (``--timeout``)."""

from __future__ import annotations

import re
from contextlib import AbstractContextManager, nullcontext
from typing import Annotated

import typer

from gpunode.errors import UsageError
from gpunode.relazy import lazy_compile

DeepOpt = Annotated[
    bool,
    typer.Option(
        "--deep",
        help="Live: fetch every chosen GPU node's extras (execs, scrapes, agent facts), "
        "not only those the cluster lists and GPUNodeReports leave in doubt.",
    ),
]
AllNodesOpt = Annotated[
    bool,
    typer.Option("--all-nodes", help="Live: fetch every GPU node's extras (the full sweep)."),
]


def extras_policy(deep: bool, all_nodes: bool) -> str:
    """``suspect`` (default), ``deep`` or ``all-nodes`` (gpunode.collect.reports.ExtrasPolicy)."""
    if deep and all_nodes:
        raise UsageError("--deep and --all-nodes: choose one")
    return "all-nodes" if all_nodes else "deep" if deep else "suspect"


RequestTimeoutOpt = Annotated[
    str | None,
    typer.Option(
        "--request-timeout",
        metavar="DURATION",
        help="Live: give up on one API request or exec after this long (seconds, or 30s, 1m, 1m30s, "
        "500ms), and on a call with its retries after three times it. 0 or absent: the defaults "
        "(15 s a request, 60 s an exec, 60 s a call).",
    ),
]

_DURATION = lazy_compile(r"(?:(\d+(?:\.\d+)?)(ms|s|m|h))+")
_UNIT_PART = lazy_compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
#: Longer than anyone waits for one request; beyond it a typo (``--request-timeout 30000``).
MAX_REQUEST_TIMEOUT_S = 24 * 3600.0


def request_timeout(text: str | None, flag: str = "--request-timeout",
                    zero: str = "the defaults") -> float | None:
    """``--request-timeout`` as seconds (kubectl's forms: ``30``, ``30s``, ``1m30s``, ``500ms``);
    None for absent or 0 (the defaults); a UsageError (exit 2) for anything else."""
    if text is None:
        return None
    value = text.strip().lower()
    if re.fullmatch(r"\d+(?:\.\d+)?", value):
        seconds = float(value)
    elif _DURATION.fullmatch(value):
        seconds = sum(float(n) * _UNIT_S[unit] for n, unit in _UNIT_PART.findall(value))
    else:
        raise UsageError(f"{flag} {text!r}: expected seconds or a duration such as 30s, "
                         f"1m or 1m30s (0: {zero})")
    if seconds > MAX_REQUEST_TIMEOUT_S:
        raise UsageError(f"{flag} {text!r}: longer than {MAX_REQUEST_TIMEOUT_S / 3600:g} h")
    return seconds or None


RunTimeoutOpt = Annotated[
    str | None,
    typer.Option(
        "--timeout",
        metavar="DURATION",
        help="Live: a deadline for the whole run (seconds, or 30s, 5m, 1m30s): every list, exec, "
        "scrape and retry ends by it; past it the run stops, names what it had not read and exits "
        "3. 0 or absent: none.",
    ),
]


def whole_run(seconds: float | None) -> AbstractContextManager[object]:
    """The run inside ends by ``seconds`` (gpunode.deadline.whole_run); without a deadline
    nothing is imported, so an offline command loads no HTTP client."""
    if seconds is None:
        return nullcontext()
    from gpunode.deadline import whole_run as bounded

    return bounded(seconds)


def run_timeout(text: str | None, offline: bool = False) -> float | None:
    """``--timeout`` as seconds (``request_timeout``'s forms); None when absent or 0. A
    deadline bounds a live run: with ``--from`` it is bad usage (exit 2)."""
    seconds = request_timeout(text, "--timeout", "no deadline")
    if seconds is not None and offline:
        raise UsageError("--timeout bounds a live run; drop it with --from")
    return seconds
