"""Label and field selector parsing and matching, as the API server does it."""

from __future__ import annotations

import pytest

from gpunode.apiserver.selectors import (
    SelectorError,
    matches_all,
    parse_field_selector,
    parse_label_selector,
)

LABELS = {"app": "nvidia-driver-daemonset", "tier": "gpu", "shard": "3"}


@pytest.mark.parametrize(("selector", "expected"), [
    ("app=nvidia-driver-daemonset", True),
    ("app==nvidia-driver-daemonset", True),
    ("app!=nvidia-driver-daemonset", False),
    ("app!=other", True),
    ("missing!=x", True),
    ("app in (a, nvidia-driver-daemonset)", True),
    ("app notin (a,b)", True),
    ("app notin (nvidia-driver-daemonset)", False),
    ("tier", True),
    ("!tier", False),
    ("!missing", True),
    ("tier=gpu,app in (x)", False),
    ("shard>2", True),
    ("shard<3", False),
    ("", True),
])
def test_label_selector_matches_like_the_api(selector: str, expected: bool) -> None:
    assert matches_all(parse_label_selector(selector), LABELS) is expected


@pytest.mark.parametrize("selector", ["app in a,b", "=x", "a b", "!app=x", "app in (x"])
def test_malformed_label_selector_is_rejected(selector: str) -> None:
    with pytest.raises(SelectorError):
        parse_label_selector(selector)


def test_field_selector_handles_operators_and_escapes() -> None:
    reqs = parse_field_selector(r"spec.nodeName=gpu-wk-01,status.phase!=Running,metadata.name==a\,b")
    assert [(r.key, r.op, r.values) for r in reqs] == [
        ("spec.nodeName", "=", ("gpu-wk-01",)),
        ("status.phase", "!=", ("Running",)),
        ("metadata.name", "=", ("a,b",)),
    ]
    assert matches_all(reqs, {"spec.nodeName": "gpu-wk-01", "status.phase": "Pending",
                              "metadata.name": "a,b"})
    assert not matches_all(reqs, {"spec.nodeName": "gpu-wk-01", "status.phase": "Running",
                                  "metadata.name": "a,b"})


def test_field_selector_without_operator_is_rejected() -> None:
    with pytest.raises(SelectorError):
        parse_field_selector("spec.nodeName")
