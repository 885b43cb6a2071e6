"""``gpunode validate`` end to end: get facts (bundle or live), run checks, keep the bundle.

I/O lives here and in ``active``/``live``; the checks themselves stay pure.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from gpunode.bounded import copy_sparse
from gpunode.bundle.load import gc_paused, keep_facts, loaded_reading_ahead, read_node_observations
from gpunode.bundle.source import copy_bundle_folder
from gpunode.errors import UsageError
from gpunode.facts import ClusterFacts
from gpunode.leftout import selection_of
from gpunode.limits import MAX_TOTAL_BYTES
from gpunode.model import Report, Selection, SourceInfo
from gpunode.report.openref import exists_in, validation_with_open, with_open
from gpunode.safety import strip_controls
from gpunode.selector import bundle_node_labels, select_nodes
from gpunode.validate.active.session import ActiveOptions, run_active
from gpunode.validate.context import LiveFacts, ValidationOptions
from gpunode.validate.defaults import DEFAULT_SCRAPE_INTERVAL_S
from gpunode.validate.runner import validate_and_diagnose
from gpunode.validate.waivers import Waiver, apply_waivers
from gpunode.validation import CATEGORIES, ValidationReport, Verdict

if TYPE_CHECKING:  # the HTTP and Kubernetes clients load only for a live run
    from gpunode.collect.access import ClusterAccess

BUNDLE_DIR = "bundle"


@dataclass(frozen=True)
class ValidateRequest:
    """Everything the command line asked for."""

    bundle: Path | None = None
    kubeconfig: Path | None = None
    context: str | None = None
    categories: tuple[str, ...] = ()
    expect_gpus: int | None = None
    rdma_rate_gbps: float | None = None
    active: ActiveOptions | None = None
    output_dir: Path | None = None
    scrape_interval_s: float = DEFAULT_SCRAPE_INTERVAL_S
    quiet: bool = False
    with_diagnosis: bool = False
    nodes: tuple[str, ...] = ()
    selector: str | None = None
    #: Live: whose node extras to fetch (``suspect``, ``deep``, ``all-nodes``; gpunode.collect.reports).
    extras: str = "suspect"
    #: Live: ``--request-timeout`` in seconds (None: the defaults; gpunode.collect.kube.Timeouts).
    request_timeout_s: float | None = None
    #: ``--waivers``: accepted findings, read before anything else (gpunode.validate.waivers)
    waivers: tuple[Waiver, ...] = ()

    def check(self) -> None:
        """Refuse impossible combinations with a one-line UsageError."""
        if self.bundle is not None and self.extras != "suspect":
            raise UsageError("--deep/--all-nodes choose what a live collection fetches; drop them "
                             "with --from")
        unknown = [c for c in self.categories if c not in CATEGORIES]
        if unknown:
            raise UsageError(f"unknown category {', '.join(unknown)} (choose from {', '.join(CATEGORIES)})")
        if self.bundle is not None and self.kubeconfig is not None and self.active is None:
            raise UsageError("--kubeconfig with --from is only used by --active")
        if self.bundle is not None and self.active is not None and self.kubeconfig is None:
            raise UsageError("--active runs pods on a live cluster: give --kubeconfig (and --context) too")
        if self.expect_gpus is not None and self.expect_gpus < 1:
            raise UsageError("--expect-gpus must be at least 1")


@dataclass(frozen=True)
class ValidateResult:
    report: ValidationReport
    bundle: Path
    diagnosis: Report | None = None
    #: how ``-l`` or node names chose the nodes, and the GPU nodes left out (gpunode.leftout)
    selection: Selection | None = None
    #: GPU nodes judged (the count the left-out ones are said against)
    gpu_nodes: int = 0


def progress(request: ValidateRequest, message: str) -> None:
    """One line on stderr per phase, so a long live run is never silent (not with --quiet)."""
    if not request.quiet and request.bundle is None:
        print(f"validate: {message}", file=sys.stderr, flush=True)


def validate(request: ValidateRequest) -> ValidateResult:
    """Run the checks the request asks for; the bundle path names what they were made from."""
    request.check()
    access = cluster_access(request)
    with _bundle_source(request, access) as (bundle, collected_at):
        progress(request, f"reading bundle {bundle}")
        with gc_paused(keep=True):  # the facts only grow until both views are built (see cli.build_report)
            report, diagnosis, chosen = _judge(request, access, bundle, collected_at)
        kept = _keep_bundle(bundle, request.output_dir, collected_at is not None)
        if request.bundle is not None and bundle != request.bundle:
            report, diagnosis = _from_must_gather(request.bundle, bundle, report, diagnosis)
    if access is not None and collected_at is not None:  # name the cluster, not the temporary bundle
        report, diagnosis = _live_source(request, access, report, diagnosis, kept)
    return ValidateResult(report, kept, diagnosis, *chosen)


def cluster_access(request: ValidateRequest) -> ClusterAccess | None:
    """The cluster a live run reads, made once for all its phases (the collection, the live
    checks, the active checks, the header naming the context): its kubeconfig is read and its
    credential plugin run the first time one needs it. None for a saved bundle (``--from``),
    where only the active checks reach a cluster, through their own options."""
    if request.bundle is not None:
        return None
    from gpunode.collect.access import ClusterAccess

    return ClusterAccess(request.kubeconfig, request.context, request.request_timeout_s)


def _from_must_gather(given: Path, copy: Path, report: ValidationReport, diagnosis: Report | None
                      ) -> tuple[ValidationReport, Report | None]:
    """A converted must-gather's reports name the directory the user gave, and their evidence
    opens in its files (never in the working copy, gone after the run)."""
    from gpunode.collect.mustgather import origins_of
    from gpunode.report.openref import validation_with_origins, with_origins

    origins, root = origins_of(copy)

    def relabel(source: SourceInfo) -> SourceInfo:
        return msgspec.structs.replace(source, location=str(given), path=str(given))

    report = validation_with_origins(report, origins, root)
    report = msgspec.structs.replace(report, source=relabel(report.source))
    if diagnosis is not None:
        diagnosis = with_origins(diagnosis, origins, root)
        diagnosis = msgspec.structs.replace(diagnosis, source=relabel(diagnosis.source))
    return report, diagnosis


def _live_source(request: ValidateRequest, access: ClusterAccess, report: ValidationReport,
                 diagnosis: Report | None, kept: Path) -> tuple[ValidationReport, Report | None]:
    """A live run's reports name the cluster and context it read (``cluster (context X)``),
    and the bundle only where ``--output-dir`` keeps it; never a deleted temporary path."""
    context = access.context_name()
    shown = f"cluster (context {context or 'current'})"
    path = str(kept) if request.output_dir is not None else None

    def relabel(source: SourceInfo) -> SourceInfo:
        return msgspec.structs.replace(source, location=shown, context=context, path=path)

    report = msgspec.structs.replace(report, source=relabel(report.source))
    if diagnosis is not None:
        diagnosis = msgspec.structs.replace(diagnosis, source=relabel(diagnosis.source))
    return report, diagnosis


def _judge(request: ValidateRequest, access: ClusterAccess | None, bundle: Path, collected_at: float | None
           ) -> tuple[ValidationReport, Report | None, tuple[Selection | None, int]]:
    """The checks' report, the stack diagnosis when the request shows it (made once: the
    diagnosis the checks made is reused when it covers the same nodes), and how the nodes
    were chosen (the GPU nodes left out, the GPU nodes judged)."""
    with loaded_reading_ahead(bundle) as loaded:  # the helper reading ahead ends with the block
        facts = keep_facts(loaded)
        labels = bundle_node_labels(facts)
        wanted = select_nodes(labels, request.nodes, request.selector, str(bundle))
        selection = selection_of(facts, wanted, request.nodes, request.selector)
        facts = only_nodes(facts, wanted)
        chosen = (selection, len(facts.gpu_nodes()))
        if collected_at is not None:
            progress(request, "live checks (API endpoints, two DCGM scrapes)")
        live = None if access is None or collected_at is None else live_facts_for(
            request, access, facts, collected_at)
        options = ValidationOptions(request.expect_gpus, request.rdma_rate_gbps, live)
        if request.active:
            progress(request, "active checks: running test pods")
        extra = run_active(facts, request.active, request.categories, access) if request.active else []
        progress(request, f"judging {len(facts.nodes)} nodes")
        report, diagnosis = validate_and_diagnose(facts, read_node_observations, options,
                                                  request.categories, extra,
                                                  with_diagnosis=request.with_diagnosis)
        report = apply_waivers(report, request.waivers, labels)
        collected, exists = collected_at is not None, exists_in(facts.source)
        if not request.with_diagnosis:
            return validation_with_open(report, live=collected, exists=exists), None, chosen
        if diagnosis is None or wanted:  # not made, or made for every GPU node rather than those asked
            from gpunode.diagnose import diagnose

            progress(request, "diagnosing root causes")
            diagnosis = diagnose(facts, read_node_observations, wanted)
        if selection is not None:
            diagnosis = msgspec.structs.replace(diagnosis, selection=selection)
        diagnosis = with_open(diagnosis, live=collected, exists=exists)
        report = validation_with_open(report, live=collected, exists=exists, diagnosis=diagnosis)
        return report, diagnosis, chosen


def only_nodes(facts: ClusterFacts, wanted: Sequence[str]) -> ClusterFacts:
    """The facts of the chosen nodes only (``[]``: every node); cluster-wide objects stay."""
    if not wanted:
        return facts
    keep = set(wanted)
    return dataclasses.replace(
        facts,
        nodes={n: node for n, node in facts.nodes.items() if n in keep},
        pods_by_node={n: pods for n, pods in facts.pods_by_node.items() if n in keep},
        csi_nodes={n: c for n, c in facts.csi_nodes.items() if n in keep},
        node_dirs=frozenset(facts.node_dirs & keep),
    )


@contextmanager
def _bundle_source(request: ValidateRequest, access: ClusterAccess | None
                   ) -> Iterator[tuple[Path, float | None]]:
    """The bundle to judge: the given one, or a fresh live collection of ``access`` (and
    when it ended)."""
    if access is None:  # a saved bundle (cluster_access)
        assert request.bundle is not None
        from gpunode.collect.mustgather import convert_must_gather, is_must_gather

        if request.bundle.is_dir() and is_must_gather(request.bundle):  # as diagnose --from reads one
            with tempfile.TemporaryDirectory(prefix="gpunode-validate-") as tmp:
                yield convert_must_gather(request.bundle, Path(tmp) / "must-gather"), None
            return
        yield request.bundle, None
        return
    from gpunode.collect.live import collect_bundle

    progress(request, "collecting from the cluster (read-only)")

    if request.output_dir is not None:
        target = request.output_dir / BUNDLE_DIR
        if target.exists():
            raise UsageError(f"{target} already exists; choose an empty --output-dir")
        result = collect_bundle(
            target, access=access, quiet=request.quiet,
            nodes=request.nodes, selector=request.selector, extras=request.extras,
        )
        yield result.path, time.monotonic()
        return
    with tempfile.TemporaryDirectory(prefix="gpunode-validate-") as tmp:
        result = collect_bundle(
            Path(tmp) / BUNDLE_DIR,
            access=access,
            quiet=request.quiet,
            nodes=request.nodes,
            selector=request.selector,
            extras=request.extras,
        )
        yield result.path, time.monotonic()


def live_facts_for(request: ValidateRequest, access: ClusterAccess, facts: ClusterFacts,
                   collected_at: float) -> LiveFacts:
    """Live-only proof (endpoint, DCGM freshness) for a bundle just collected from ``access``."""
    from gpunode.validate.live import live_facts

    return live_facts(facts, access, first_scrape_at=collected_at, interval_s=request.scrape_interval_s)


def _keep_bundle(bundle: Path, output_dir: Path | None, collected: bool) -> Path:
    """Copy the bundle the verdicts came from into ``output_dir`` (a live one is already
    there): into a staging name beside it, renamed once complete and never over an
    existing one (a second run into the same --output-dir fails naming it); the staging
    copy is removed on an error, Ctrl-C or SIGTERM. What the copy left out or cut (links
    and hard links out of the bundle, special files, sizes past the limits) is said on
    stderr, one line each."""
    if output_dir is None or (collected and bundle.parent == output_dir):
        return bundle
    output_dir.mkdir(parents=True, exist_ok=True)
    name = BUNDLE_DIR if bundle.is_dir() else "bundle.tgz" if bundle.name.endswith(".tgz") \
        else "bundle.tar.gz"
    target = output_dir / name
    if target.exists() or target.is_symlink():
        raise UsageError(f"{target} already exists; choose an empty --output-dir")
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.", suffix=".gpunode-staging", dir=output_dir))
    try:
        kept = _copy_into(bundle, staging / name)
        try:
            if bundle.is_dir():
                kept.rename(target)  # fails on a folder another run put there meanwhile
            else:
                os.link(kept, target)  # never replaces an archive another run put there
        except OSError:
            raise UsageError(f"{target}: written by another run meanwhile; choose an empty "
                             "--output-dir") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _copy_into(bundle: Path, dest: Path) -> Path:
    if bundle.is_dir():
        copied = copy_bundle_folder(bundle, dest)
        notes = copied.notes
    else:
        _data, cut = copy_sparse(bundle, dest, MAX_TOTAL_BYTES)
        notes = [f"{bundle}: cut at {MAX_TOTAL_BYTES} bytes (docs/limits.md)"] if cut else []
    for note in notes[:20]:
        print(f"warning: --output-dir: {strip_controls(note)}", file=sys.stderr)
    if len(notes) > 20:
        print(f"warning: --output-dir: {len(notes) - 20} more files left out or cut", file=sys.stderr)
    return dest


def write_outputs(result: ValidateResult, output_dir: Path, fail_on: Verdict) -> list[Path]:
    """The report in every format, next to the bundle it was made from."""
    from rich.console import Console

    from gpunode.report import VALIDATE_FILE_NAMES, VALIDATE_REPORTERS

    output_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, file_name in VALIDATE_FILE_NAMES.items():  # one file per format (wide, yaml: on stdout)
        reporter = VALIDATE_REPORTERS[name]
        path = output_dir / file_name
        with path.open("w", encoding="utf-8") as handle:
            console = Console(file=handle, width=120, soft_wrap=False, highlight=False, color_system=None)
            reporter(result.report, console, fail_on)
        written.append(path)
    if result.diagnosis is not None:
        from gpunode.report.html import render_html

        path = output_dir / "report.html"
        path.write_text(render_html(result.diagnosis, result.report), encoding="utf-8")
        written.append(path)
    return written
