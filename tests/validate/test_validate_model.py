"""Scores and verdicts: share of applicable checks passed, warnings at half, skips left out."""

from __future__ import annotations

from gpunode.model import SourceInfo
from gpunode.validation import (
    CheckResult,
    ClusterVerdict,
    ValidationReport,
    Verdict,
    category_result,
    category_score,
    cluster_verdict,
)


def checks(*verdicts: Verdict, category: str = "storage") -> list[CheckResult]:
    return [CheckResult(f"c{i}", category, "t", v, "s") for i, v in enumerate(verdicts)]


def test_score_counts_warnings_half_and_ignores_skips() -> None:
    cs = checks(Verdict.PASS, Verdict.WARN, Verdict.FAIL, Verdict.SKIP, Verdict.UNKNOWN)
    assert category_score(cs) == round(1.5 / 4, 3)


def test_score_is_none_when_nothing_applied() -> None:
    assert category_score(checks(Verdict.SKIP, Verdict.SKIP)) is None


def test_category_takes_the_worst_verdict_and_counts_each() -> None:
    cat = category_result("network", checks(Verdict.PASS, Verdict.UNKNOWN, Verdict.WARN, Verdict.SKIP))
    assert cat.verdict == Verdict.WARN
    assert cat.counts == {"pass": 1, "warn": 1, "fail": 0, "skip": 1, "unknown": 1}


def test_cluster_verdicts() -> None:
    ok = category_result("a", checks(Verdict.PASS, Verdict.SKIP))
    unsure = category_result("b", checks(Verdict.PASS, Verdict.UNKNOWN))
    broken = category_result("c", checks(Verdict.WARN, Verdict.FAIL))
    assert cluster_verdict([ok]) == ClusterVerdict.READY
    assert cluster_verdict([ok, unsure]) == ClusterVerdict.READY_WITH_WARNINGS
    assert cluster_verdict([ok, unsure, broken]) == ClusterVerdict.NOT_READY


def test_fail_on_threshold() -> None:
    cat = category_result("a", checks(Verdict.PASS, Verdict.UNKNOWN))
    report = ValidationReport(
        cluster="x", verdict=cluster_verdict([cat]), source=SourceInfo("sim", "/b"), categories=(cat,)
    )
    assert not report.fails_on(Verdict.FAIL)
    assert report.fails_on(Verdict.WARN)
