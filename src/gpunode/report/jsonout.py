"""Report JSON v1: the Report struct encoded as is (docs/report-format.md); YAML is the same tree.
A validation's JSON (``gpunode.validate/v1``) is its Structs encoded the same way."""

from __future__ import annotations

from typing import IO, TYPE_CHECKING

import msgspec

from gpunode.report.options import DEFAULT, RenderOptions

if TYPE_CHECKING:  # rich is not loaded for JSON output (start-up time of `probe -o json`)
    from rich.console import Console

    from gpunode.model import Report
    from gpunode.validation import ValidationReport, Verdict


def to_json(report: Report) -> bytes:
    """Stable, indented JSON; field order follows the Struct definitions."""
    return formatted(msgspec.json.encode(report))


def formatted(encoded: bytes) -> bytes:
    """A report's compact encoding (``msgspec.json.encode``) as report JSON is written."""
    return msgspec.json.format(encoded, indent=2)


def render(report: Report, console: Console, options: RenderOptions = DEFAULT) -> None:
    write_json(console.file, to_json(report))


def write_json(stream: IO[str], data: bytes) -> None:
    """``data`` and a newline, as bytes where the stream has a binary buffer: a fleet's report
    (90 MB for 12,000 nodes) is then not copied as text and split into lines (formatted JSON
    has no trailing blanks for report/plain.py to drop)."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(data.decode() + "\n")
        return
    stream.flush()
    buffer.write(data)
    buffer.write(b"\n")
    buffer.flush()


def render_yaml(report: Report, console: Console, options: RenderOptions = DEFAULT) -> None:
    import yaml

    console.file.write(yaml.safe_dump(msgspec.to_builtins(report), sort_keys=False, allow_unicode=True))


def validation_to_json(report: ValidationReport) -> bytes:
    """Stable, indented JSON; field order follows the Struct definitions."""
    return formatted(msgspec.json.encode(report))


def render_validation(report: ValidationReport, console: Console, _fail_on: Verdict | None = None) -> None:
    write_json(console.file, validation_to_json(report))


def render_validation_yaml(report: ValidationReport, console: Console,
                           _fail_on: Verdict | None = None) -> None:
    """The validate JSON document as YAML (kubectl's ``-o yaml``)."""
    import yaml

    console.file.write(yaml.safe_dump(msgspec.to_builtins(report), sort_keys=False, allow_unicode=True))
