"""nvidia-smi's placeholder for a field the GPU will not report ("[Not Supported]", "[Unknown
Error]") handed to a metrics collector's number parser, which then drops the GPU's whole line:
the catalogued dcgm_field_unsupported, read in the exporter's own log. influxdata/telegraf#6073
(Telegraf's nvidia_smi input on a memory-overclocked RTX 2080 Ti, Go's strconv error); Python's
float() and int() give the same refusal in their words. The placeholder in nvidia-smi's own
output, or a parse error of another value, is no unsupported field."""

from __future__ import annotations

from typing import Any

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

#: influxdata/telegraf#6073
GO_PARSE = ('2019-07-05T09:04:30Z E! [inputs.nvidia_smi]: Error in plugin: strconv.ParseInt: '
            'parsing "[Unknown Error]": invalid syntax')
#: Python's float() over the same CSV value
PY_PARSE = "ERROR collector: ValueError: could not convert string to float: '[Not Supported]'"


def _exporter(text: str) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "pod-state", "component": "dcgm-exporter", "state": "Running"},
        {"kind": "log", "component": "dcgm-exporter", "text": text + "\n"}]
    return synthetic_case("x-smi-placeholder", evidence, healthy=False)


@pytest.mark.parametrize("text", [GO_PARSE, PY_PARSE])
def test_a_placeholder_the_parser_refused_is_the_unsupported_field(text: str) -> None:
    assert top_pair(_exporter(text)) == ("dcgm-exporter", "dcgm_field_unsupported")


@pytest.mark.parametrize(
    "text",
    [
        # the placeholder in nvidia-smi's CSV itself (a K80's fan): no error
        "GeForce RTX 2080 Ti, 00000000:01:00.0, [Unknown Error], 45, P2",
        # a parse error of an ordinary value: no field the GPU refused
        '2019-07-05T09:04:30Z E! [inputs.nvidia_smi]: Error in plugin: strconv.ParseInt: '
        'parsing "12a": invalid syntax',
    ],
)
def test_look_alikes_are_no_unsupported_field(text: str) -> None:
    top = top_pair(_exporter(text))
    assert top is None or top[1] != "dcgm_field_unsupported", top
