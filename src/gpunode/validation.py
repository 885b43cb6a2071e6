"""The vocabulary of ``gpunode validate``: verdicts, check results, scores.

Plain msgspec Structs, so the JSON report is the structs themselves and the
reporters (table, markdown, JUnit) read the same data.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

import msgspec

from gpunode.model import Evidence, SourceInfo

SCHEMA = "gpunode.validate/v1"
#: The check that fails when the node or pod list could not be read (gpunode.unread).
UNREAD_CHECK = "infra.api-reachable"


class Verdict(StrEnum):
    """One check's answer; ``unknown`` when the data to decide was not observed."""

    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"
    UNKNOWN = "unknown"


# Worst first: a check over several nodes, and a category, take the worst verdict.
VERDICT_RANK = {Verdict.FAIL: 0, Verdict.WARN: 1, Verdict.UNKNOWN: 2, Verdict.PASS: 3, Verdict.SKIP: 4}


def worst(verdicts: Iterable[Verdict]) -> Verdict:
    """The worst verdict; ``skip`` when there is none (nothing applied)."""
    return min(verdicts, key=VERDICT_RANK.__getitem__, default=Verdict.SKIP)


class ClusterVerdict(StrEnum):
    READY = "ready"
    READY_WITH_WARNINGS = "ready-with-warnings"
    NOT_READY = "not-ready"

    @property
    def label(self) -> str:
        labels = {"ready": "Ready", "ready-with-warnings": "Ready with warnings", "not-ready": "Not ready"}
        return labels[self.value]


class CATEGORY:
    """Category names (a contract: ``--category``, JSON, JUnit suite names)."""

    INFRASTRUCTURE = "infrastructure"
    GPU_HEALTH = "gpu-health"
    NETWORK = "network"
    STORAGE = "storage"
    SCHEDULING = "scheduling"
    OBSERVABILITY = "observability"


CATEGORIES: tuple[str, ...] = (
    CATEGORY.INFRASTRUCTURE,
    CATEGORY.GPU_HEALTH,
    CATEGORY.NETWORK,
    CATEGORY.STORAGE,
    CATEGORY.SCHEDULING,
    CATEGORY.OBSERVABILITY,
)


class Outcome(msgspec.Struct, frozen=True):
    """What a check function decided (the runner adds id, category and title)."""

    verdict: Verdict
    summary: str
    evidence: tuple[Evidence, ...] = ()
    fix: str = ""
    nodes: tuple[str, ...] = ()


class CheckResult(msgspec.Struct, frozen=True):
    """One check in the report: ``fix`` is set when the verdict is warn or fail."""

    id: str
    category: str
    title: str
    verdict: Verdict
    summary: str
    evidence: tuple[Evidence, ...] = ()
    fix: str = ""
    nodes: tuple[str, ...] = ()
    active: bool = False
    #: the reason of the waiver (``--waivers``) that accepted this result until it expires: the
    #: verdict stays as the check gave it, but no longer counts toward the category, the cluster
    #: verdict or the exit code (added in validate v1)
    waived: str | None = None

    @property
    def counted(self) -> Verdict:
        """The verdict as it counts: a waived result counts as passed."""
        return Verdict.PASS if self.waived is not None else self.verdict


class WaiverUse(msgspec.Struct, frozen=True):
    """One entry of a waiver file and what became of it: ``applied`` (to ``checks`` on
    ``nodes``), ``expired`` (ignored), or ``unused`` (no result of its check it covers wholly:
    ``note`` says why)."""

    entry: int
    check: str
    reason: str
    expires: str
    state: str
    selector: str | None = None
    names: tuple[str, ...] = ()
    nodes: tuple[str, ...] = ()
    note: str = ""


class CategoryResult(msgspec.Struct, frozen=True):
    """A category's verdict and score: share of applicable checks passed, warnings at half."""

    name: str
    verdict: Verdict
    score: float | None
    counts: dict[str, int]
    checks: tuple[CheckResult, ...]


class ValidationReport(msgspec.Struct, frozen=True, kw_only=True):
    """The validate report JSON (docs/validate.md); fields are only ever added."""

    schema: str = SCHEMA
    generated_by: str = "gpunode"
    cluster: str | None
    verdict: ClusterVerdict
    source: SourceInfo
    categories: tuple[CategoryResult, ...]
    #: the waiver file's entries, each applied, expired or unused (added in validate v1)
    waivers: tuple[WaiverUse, ...] = ()

    def checks(self) -> list[CheckResult]:
        return [c for cat in self.categories for c in cat.checks]

    @property
    def headline(self) -> str:
        """The verdict as the reports lead with it: ``Not ready: could not read the node list
        (…)`` when the lists a verdict rests on could not be read (UNREAD_CHECK says so)."""
        for check in self.checks():
            if check.id == UNREAD_CHECK and check.verdict == Verdict.FAIL \
                    and check.summary.startswith("could not read "):
                return f"{self.verdict.label}: {check.summary}"
        return self.verdict.label

    def fails_on(self, threshold: Verdict) -> bool:
        """Whether the exit code is 1 for ``--fail-on`` (unknown counts as a warning)."""
        bad = {Verdict.FAIL} if threshold == Verdict.FAIL else {Verdict.FAIL, Verdict.WARN, Verdict.UNKNOWN}
        return any(c.counted in bad for c in self.checks())


def category_score(checks: Iterable[CheckResult]) -> float | None:
    """Passed share of the checks that applied (skips excluded); ``None`` when none applied."""
    applied = [c.counted for c in checks if c.verdict != Verdict.SKIP]
    if not applied:
        return None
    points = sum(1.0 if v == Verdict.PASS else 0.5 if v == Verdict.WARN else 0.0 for v in applied)
    return round(points / len(applied), 3)


def category_result(name: str, checks: Iterable[CheckResult]) -> CategoryResult:
    """Fold a category's checks into its verdict, score and per-verdict counts."""
    ordered = tuple(checks)
    counts = {v.value: sum(1 for c in ordered if c.verdict == v) for v in Verdict}
    waived = sum(1 for c in ordered if c.waived is not None)
    if waived:
        counts["waived"] = waived
    return CategoryResult(name, worst(c.counted for c in ordered), category_score(ordered), counts, ordered)


def cluster_verdict(categories: Iterable[CategoryResult]) -> ClusterVerdict:
    """Not ready on any failure; warnings and unknowns leave it ready with warnings."""
    verdicts = {c.verdict for c in categories}
    if Verdict.FAIL in verdicts:
        return ClusterVerdict.NOT_READY
    if verdicts & {Verdict.WARN, Verdict.UNKNOWN}:
        return ClusterVerdict.READY_WITH_WARNINGS
    return ClusterVerdict.READY
