"""The JSON Schema of report JSON v1, generated from the msgspec types (docs/report.schema.json).

    python -m gpunode.schema > docs/report.schema.json
"""

from __future__ import annotations

import msgspec

from gpunode.model import DIFF_REPORT, Report


def report_schema() -> bytes:
    """Indented JSON Schema of ``Report``, stable across runs; ``$defs/DiffReport`` is the
    output of ``gpunode diff -o json``."""
    (ref, _), defs = msgspec.json.schema_components([Report, DIFF_REPORT], ref_template="#/$defs/{name}")
    schema: dict[str, object] = {"$ref": ref["$ref"], "$defs": defs}
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "gpunode report JSON v1"
    return msgspec.json.format(msgspec.json.encode(schema, order="sorted"), indent=2) + b"\n"


if __name__ == "__main__":
    import sys

    sys.stdout.buffer.write(report_schema())
