"""Signatures that decide while the pod runs (kb.Match ``while_running``/``unless``):
validated data, and the last line counts only while no later line cancels it."""

from __future__ import annotations

import pytest

from gpunode.errors import BundleError
from gpunode.kb import decisive_hit, load_kb, parse_kb

_HEAD = '[[cause]]\ncode="x"\ncomponent="device-plugin"\ntitle="t"\nexplanation="e"\nfix="f"\n'


def _kb(match: str) -> str:
    return _HEAD + "[[cause.match]]\n" + match


@pytest.mark.parametrize(
    ("match", "error"),
    [
        ('source="event"\npattern="boom"\nwhile_running=true\n', "while_running needs a log match"),
        ('source="log"\npattern="boom"\nunless="fine"\n', "unless needs while_running"),
        ('source="log"\npattern="boom"\nwhile_running=true\nunless="a.*b"\n', "unbounded"),
        ('source="log"\npattern="boom"\nwhile_running=true\nunless="(oops"\n', "invalid knowledge base"),
        ('source="log"\npattern="boom"\nexample="boom"\n', "example needs while_running"),
    ],
)
def test_bad_decisive_signatures_are_rejected(match: str, error: str) -> None:
    with pytest.raises(BundleError, match=error):
        parse_kb({"causes/x.toml": _kb(match)})


def _registration() -> tuple[object, object]:
    kb = parse_kb({"causes/x.toml": _kb(
        'source="log"\npattern="Could not register"\nwhile_running=true\nunless="Registered"\n')})
    cause = kb.get("x")
    return cause, cause.match[0]


def test_the_last_decisive_line_counts_with_its_line_number() -> None:
    cause, m = _registration()
    lines = ["Could not register: 1", "Registered", "starting", "Could not register: 2", "retrying"]
    hit = decisive_hit(lines, cause, m)  # type: ignore[arg-type]
    assert hit is not None and (hit.line_no, hit.line) == (4, "Could not register: 2")


def test_a_later_success_cancels_the_error_and_an_earlier_one_does_not() -> None:
    cause, m = _registration()
    assert decisive_hit(["Could not register", "Registered"], cause, m) is None  # type: ignore[arg-type]
    assert decisive_hit(["Registered", "Could not register"], cause, m) is not None  # type: ignore[arg-type]
    assert decisive_hit(["all good"], cause, m) is None  # type: ignore[arg-type]


def test_shipped_decisive_signatures_decide_on_their_example_and_not_their_near_miss() -> None:
    causes = [c for c in load_kb().causes if any(m.while_running for m in c.match)]
    assert len(causes) >= 5
    for cause in causes:
        decisive = [m for m in cause.match if m.while_running]
        assert any(decisive_hit([m.example or cause.example], cause, m) for m in decisive), cause.code
        assert not any(decisive_hit([cause.near_miss], cause, m) for m in decisive), cause.code
