"""nccl-tests output (``all_reduce_perf`` and its siblings), as rank 0 prints it: a
``# Using devices`` block, then a table whose header names the columns (``size count type
redop root``, then ``time algbw busbw #wrong`` out-of-place and again in-place), one row per
message size, and ``# Out of bounds values : 0 OK`` / ``# Avg bus bandwidth : 70.742``.

Older releases print ``error`` (a float, or ``N/A`` without validation) where newer ones
print ``#wrong``, and some have no ``root`` column; MPI launchers may prefix each line
(``[1,0]<stdout>:``). The columns are found by the header, not by position. The average
bus bandwidth mixes the latency-bound small sizes in; the peak out-of-place bus bandwidth
(at the largest sizes) is what a link's rate bounds.
"""

from __future__ import annotations

import msgspec

from gpunode.relazy import lazy_compile

_PREFIX = lazy_compile(r"^(?:\[\d+,\d+\]<std(?:out|err)>:)?")
_AVG = lazy_compile(r"^#\s*Avg bus bandwidth\s*:\s*([0-9.]+)")
_WRONG = lazy_compile(r"^#\s*Out of bounds values\s*:\s*(\d+)\s*(\w+)")


class NcclRow(msgspec.Struct, frozen=True):
    """One message size, out-of-place (the in-place half is left: it measures the same)."""

    size_bytes: int
    time_us: float
    algbw_gbps: float
    busbw_gbps: float
    #: wrong values (``#wrong``), or None where the output says N/A or a float error
    wrong: int | None


class NcclTestsResult(msgspec.Struct, frozen=True):
    rows: tuple[NcclRow, ...]
    avg_busbw_gbps: float | None
    #: "OK" or "FAILED" from ``Out of bounds values``, None where not printed
    validation: str | None = None

    @property
    def peak_busbw_gbps(self) -> float | None:
        """The highest out-of-place bus bandwidth of any size."""
        return max((r.busbw_gbps for r in self.rows), default=None)

    @property
    def wrong_rows(self) -> tuple[NcclRow, ...]:
        return tuple(r for r in self.rows if r.wrong)


def parse_nccl_tests(text: str) -> NcclTestsResult | None:
    """The out-of-place rows and the averages; None where no nccl-tests table was printed."""
    columns: list[str] | None = None
    rows: list[NcclRow] = []
    avg: float | None = None
    validation: str | None = None
    for raw in text.splitlines():
        line = _PREFIX.sub("", raw).strip()
        if line.startswith("#"):
            words = line.lstrip("#").split()
            if words[:2] == ["size", "count"]:
                columns = words
            elif match := _AVG.match(line):
                avg = float(match.group(1))
            elif match := _WRONG.match(line):
                validation = match.group(2)
            continue
        if columns is not None and (row := _row(columns, line.split())) is not None:
            rows.append(row)
    if columns is None:
        return None
    return NcclTestsResult(tuple(rows), avg, validation)


def _row(columns: list[str], values: list[str]) -> NcclRow | None:
    """The first (out-of-place) time / algbw / busbw / error after the leading columns."""
    if len(values) < len(columns) or not values[0].isdigit():
        return None
    at = columns.index("time")
    try:
        wrong_text = values[at + 3]
        return NcclRow(
            size_bytes=int(values[0]),
            time_us=float(values[at]),
            algbw_gbps=float(values[at + 1]),
            busbw_gbps=float(values[at + 2]),
            wrong=int(wrong_text) if wrong_text.isdigit() else None,
        )
    except (ValueError, IndexError):
        return None
