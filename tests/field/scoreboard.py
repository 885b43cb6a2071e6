"""The field scoreboard: every case rebuilt into a bundle and diagnosed.

    python tests/field/scoreboard.py [CASE_ID_OR_SUBSTRING ...]   (make accuracy)

Per case: expected and reported top root cause (the first of the cluster's root
causes, else the first of the affected node's). Before the last line, the cold
scores: what a frozen engine reported for each case before any change was made
for it (its ``cold:`` record, tests/field/cold.py), over every case that has one
and over the 50 most recently scored; before them, per item of issue 21 that a case
``covers`` (gpu-nodes, workloads, dependencies, flavours), its cold score and today's
(``covers ITEM cold component N/M cause N/M today component N/M cause N/M``), then the
newest 50's cold score split into failures and healthy look-alikes; before
those, how many failure cases' decisive
text ``gpunode explain`` answers with a decisive line and its class. Last line:
``component N/M cause N/M healthy-misses N crashed N``. A healthy look-alike
scores when nothing is reported; a failure case reported healthy is a
healthy-miss; a case that cannot be built or diagnosed is crashed.
"""

from __future__ import annotations

import hashlib
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).parent))

from builder import build_case
from case import CASES_DIR, COVERS, Case, CaseError, load_cases

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.explain import Explanation, explain_lines
from gpunode.kb import load_kb
from gpunode.model import Report, RootCause

BAR_COMPONENT = 0.97
BAR_CAUSE = 0.95
MIN_CASES = 250
#: How many of the most recently scored cases measure how well the reasoning generalises.
NEWEST = 50
BAR_COLD_NEWEST_COMPONENT = 0.95
BAR_COLD_NEWEST_CAUSE = 0.80
_SCRATCH = "/dev/shm" if Path("/dev/shm").is_dir() else None  # many small files: memory is faster


@dataclass(frozen=True)
class Outcome:
    """What the tool said about one case."""

    case_id: str
    expected: str
    reported: str
    component_ok: bool
    cause_ok: bool
    healthy_miss: bool = False
    false_alarm: bool = False
    crashed: str = ""


def top_root_cause(report: Report, node: str) -> RootCause | None:
    """The first of the cluster's root causes, else the first of the node's."""
    if report.cluster.root_causes:
        return report.cluster.root_causes[0]
    for entry in report.nodes:
        if entry.name == node and entry.root_causes:
            return entry.root_causes[0]
    return None


def top_pair(case: Case) -> tuple[str, str] | None:
    """The (component, cause) of the case's top root cause, None where it has none: the
    answer rule tests compare."""
    top = top_root_cause(diagnose_case(case), case.node)
    return (top.component, top.cause) if top else None


#: Reports already made in this process, by the case as encoded: the scoreboard, the floors
#: and several corpus-wide tests diagnose the same cases (0.06 s of CPU each, 383 cases);
#: a case changed in any field is a new key. Reports are read, never changed.
_DIAGNOSED: dict[bytes, Report] = {}


#: A folder the test worker processes of one session share (tests/field/conftest.py sets it
#: under xdist): the corpus-wide tests of several workers would each diagnose every case
#: (about 40 s of CPU a pass); with it, each case is diagnosed by one worker and read back by
#: the others. None outside a test session: the scoreboard diagnoses in its own process.
SHARED: Path | None = None
#: How long a worker waits for a case another worker claimed before diagnosing it itself.
_CLAIM_PATIENCE_S = 120.0


def diagnose_case(case: Case) -> Report:
    """Build the case's bundle in a temporary folder and diagnose it (once per process, and
    once per test session where ``SHARED`` is set)."""
    key = msgspec.json.encode(case)
    if key not in _DIAGNOSED:
        _DIAGNOSED[key] = _diagnosed(case) if SHARED is None else _shared(SHARED, key, case)
    return _DIAGNOSED[key]


def _diagnosed(case: Case) -> Report:
    with tempfile.TemporaryDirectory(dir=_SCRATCH) as tmp:
        out = build_case(case, Path(tmp) / case.id)
        facts = load_bundle(out)
        return diagnose(facts, read_node_observations)


def _shared(folder: Path, key: bytes, case: Case) -> Report:
    """The case's report from the shared folder: made here when this worker claims the case
    first, else read back once the worker that claimed it wrote it. A claimer that could not
    build or diagnose the case leaves a ``.failed`` mark, and the others raise the same error
    by trying themselves."""
    stem = folder / hashlib.sha256(key).hexdigest()
    done, failed = stem.with_suffix(".report"), stem.with_suffix(".failed")
    if not done.exists() and _claim(stem):
        try:
            report = _diagnosed(case)
        except Exception:
            failed.touch()
            raise
        part = stem.with_suffix(".part")
        part.write_bytes(msgspec.msgpack.encode(report))
        part.replace(done)
        return report
    deadline = time.monotonic() + _CLAIM_PATIENCE_S
    while not done.exists():
        if failed.exists() or time.monotonic() > deadline:
            return _diagnosed(case)
        time.sleep(0.02)
    return msgspec.msgpack.decode(done.read_bytes(), type=Report)


def _claim(stem: Path) -> bool:
    """True for the one worker that creates the case's claim mark."""
    try:
        stem.with_suffix(".claim").touch(exist_ok=False)
    except FileExistsError:
        return False
    return True


def share_out(cases: Iterable[Case]) -> None:
    """Diagnose, in order, the cases no other worker has claimed, without waiting for those it
    has: two workers that reach the corpus at once split it instead of taking turns."""
    if SHARED is None:
        return
    for case in cases:
        key = msgspec.json.encode(case)
        stem = SHARED / hashlib.sha256(key).hexdigest()
        if key in _DIAGNOSED or stem.with_suffix(".claim").exists():
            continue
        try:
            diagnose_case(case)
        except Exception:  # score() reports this case's crash where it reads it
            continue


#: Cases loaded by the last ``run`` (for the cold scores).
LOADED: list[Case] = []


def score(case: Case) -> Outcome:
    """Judge one case against its expectation."""
    exp = case.expect
    expected = "healthy" if exp.healthy else f"{exp.component}/{exp.cause}"
    try:
        top = top_root_cause(diagnose_case(case), case.node)
    except (CaseError, Exception) as exc:  # a crash is a result the scoreboard reports
        message = " ".join(str(exc).split())[:200]
        return Outcome(
            case.id, expected, f"CRASH {type(exc).__name__}: {message}", False, False, crashed=message
        )
    reported = "healthy" if top is None else f"{top.component}/{top.cause}"
    if exp.healthy:
        ok = top is None
        return Outcome(case.id, expected, reported, ok, ok, false_alarm=not ok)
    if top is None:
        return Outcome(case.id, expected, reported, False, False, healthy_miss=True)
    return Outcome(case.id, expected, reported, top.component == exp.component, top.cause == exp.cause)


@dataclass(frozen=True)
class ColdScore:
    """How the cold records of some cases compare with their expectations."""

    component: int
    cause: int
    total: int

    def line(self, label: str) -> str:
        return f"{label} component {self.component}/{self.total} cause {self.cause}/{self.total}"


def cold_ok(case: Case) -> tuple[bool, bool]:
    """Whether the case's cold record named the expected component, and the cause too."""
    assert case.cold is not None
    reported, exp = case.cold.reported, case.expect
    if exp.healthy:
        return (reported == "healthy",) * 2
    component, _, cause = reported.partition("/")
    return component == exp.component, component == exp.component and cause == exp.cause


def cold_scores(cases: list[Case]) -> tuple[ColdScore, ColdScore]:
    """Over every case with a cold record, and over the ``NEWEST`` most recently scored."""
    scored = sorted((c for c in cases if c.cold is not None), key=lambda c: (c.cold.scored, c.id))  # type: ignore[union-attr]

    def over(group: list[Case]) -> ColdScore:
        marks = [cold_ok(c) for c in group]
        return ColdScore(sum(m[0] for m in marks), sum(m[1] for m in marks), len(group))

    return over(scored), over(scored[-NEWEST:])


def newest_split(cases: list[Case]) -> tuple[ColdScore, ColdScore]:
    """The newest ``NEWEST`` cold records split into failure cases and healthy look-alikes: a
    look-alike scores when the engine reports nothing, so the share of them in a batch moves
    the cold score, and the failures' own score is printed beside it."""
    scored = sorted((c for c in cases if c.cold is not None), key=lambda c: (c.cold.scored, c.id))  # type: ignore[union-attr]
    newest = scored[-NEWEST:]
    failures = [cold_ok(c) for c in newest if not c.expect.healthy]
    healthy = [cold_ok(c) for c in newest if c.expect.healthy]
    return (ColdScore(sum(m[0] for m in failures), sum(m[1] for m in failures), len(failures)),
            ColdScore(sum(m[0] for m in healthy), sum(m[1] for m in healthy), len(healthy)))


def split_line(failures: ColdScore, healthy: ColdScore) -> str:
    """``cold-newest-50 failures component N/M cause N/M healthy-look-alikes N/M``."""
    return (f"{failures.line(f'cold-newest-{NEWEST} failures')} "
            f"healthy-look-alikes {healthy.component}/{healthy.total}")


@dataclass(frozen=True)
class ItemScore:
    """One item of issue 21 (a case's ``covers``): cold over its cases with a cold record,
    today over all its cases."""

    item: str
    cold: ColdScore
    today: ColdScore

    def line(self) -> str:
        return (f"covers {self.item} {self.cold.line('cold')} {self.today.line('today')}"
                + (f" (fewer than {MIN_ITEM_COLD} cold)" if self.cold.total < MIN_ITEM_COLD else ""))


#: Issue 21 asks for at least this many public cases per item; the scoreboard says when the
#: cold records of an item fall short.
MIN_ITEM_COLD = 5


def item_scores(cases: list[Case], outcomes: list[Outcome]) -> list[ItemScore]:
    """Per item that some case covers: its cold score and today's, both component/cause."""
    today = {o.case_id: o for o in outcomes}
    scores = []
    for item in COVERS:
        group = [c for c in cases if item in c.covers]
        if not group:
            continue
        marks = [cold_ok(c) for c in group if c.cold is not None]
        now = [today[c.id] for c in group if c.id in today]
        scores.append(ItemScore(
            item,
            ColdScore(sum(m[0] for m in marks), sum(m[1] for m in marks), len(marks)),
            ColdScore(sum(o.component_ok for o in now), sum(o.cause_ok for o in now), len(now)),
        ))
    return scores


def run(filters: list[str]) -> tuple[list[Outcome], list[str]]:
    """Score every case (or those whose id contains one of ``filters``); schema errors apart."""
    outcomes, errors = [], []
    LOADED.clear()
    loaded_cases = list(load_cases(CASES_DIR))
    share_out(c for p, c in loaded_cases
              if isinstance(c, Case) and (not filters or any(f in p.stem for f in filters)))
    for path, loaded in loaded_cases:
        if filters and not any(f in path.stem for f in filters):
            continue
        if not isinstance(loaded, CaseError):
            LOADED.append(loaded)
        if isinstance(loaded, CaseError):
            errors.append(str(loaded))
            continue
        outcomes.append(score(loaded))
    return outcomes, errors


def summary(outcomes: list[Outcome], errors: list[str]) -> str:
    total = len(outcomes) + len(errors)
    comp = sum(o.component_ok for o in outcomes)
    cause = sum(o.cause_ok for o in outcomes)
    misses = sum(o.healthy_miss for o in outcomes)
    crashed = sum(bool(o.crashed) for o in outcomes) + len(errors)
    return f"component {comp}/{total} cause {cause}/{total} healthy-misses {misses} crashed {crashed}"


@cache
def explained(decisive: str) -> Explanation:
    """``gpunode explain`` on a case's decisive text, once per process: the scoreboard and four
    corpus-wide tests read the same texts (about 1.5 ms of CPU each, 720 failure cases).
    Explanations are frozen; the knowledge base is the package's own."""
    return explain_lines(decisive.splitlines(), load_kb())


def explain_given(cases: list[Case]) -> tuple[int, int]:
    """Failure cases whose decisive text ``gpunode explain`` answers with a decisive line and
    its class, and how many failure cases there are."""
    failing = [c for c in cases if not c.expect.healthy]
    given = sum(explained(c.decisive).decisive_class is not None for c in failing)
    return given, len(failing)


def main(argv: list[str]) -> int:
    outcomes, errors = run(argv)
    width = max((len(o.case_id) for o in outcomes), default=10)
    for o in outcomes:
        mark = "ok" if o.component_ok and o.cause_ok else ("cause" if o.component_ok else "MISS")
        print(f"{mark:5} {o.case_id:{width}}  expected {o.expected:45}  reported {o.reported}")
    for line in errors:
        print(f"ERROR {line}")
    given, failing = explain_given(LOADED)
    print(f"explain decisive line and class {given}/{failing}")
    for item in item_scores(LOADED, outcomes):
        print(item.line())
    print(split_line(*newest_split(LOADED)))
    every, newest = cold_scores(LOADED)
    print(every.line("cold"))
    print(newest.line(f"cold-newest-{NEWEST}"))
    print(summary(outcomes, errors))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
