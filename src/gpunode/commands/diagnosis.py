"""From a bundle to a diagnosis: the path every diagnosing command shares (diagnose and
stack, live or offline, the probe command's node, the fleet tests).

Apart from gpunode.commands.common (the console, emitting a report) so that what only
prints a report does not sit above the whole diagnosis. Start-up matters: modules that load
bundles or diagnose are imported inside the function.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpunode.diagnose import Reuse
    from gpunode.model import Report


def build_report(bundle: Path, nodes: list[str] | None, selector: str | None = None,
                 reuse: Reuse | None = None, name: str | None = None, *, live: bool = False) -> Report:
    """Load a bundle and diagnose it (the offline path shared by several commands); ``reuse``:
    node reports a live collection already judged from the same facts. No GPU node found
    while the node or pod list could not be read is SourceUnreachable (exit 3; ``name``: the
    source as the message names it, else the bundle's path), never an empty report. Every
    evidence gets what opens it: the bundle path, or ``live`` the kubectl command."""
    import msgspec

    from gpunode.bundle.load import gc_paused, keep_facts, loaded_reading_ahead, read_node_observations
    from gpunode.diagnose import diagnose
    from gpunode.leftout import selection_of
    from gpunode.report.openref import exists_in, with_open
    from gpunode.selector import bundle_node_labels, select_nodes
    from gpunode.unread import refuse_empty

    # The facts only grow until the report is built (gc_paused: no collection pass over
    # millions of objects of a large bundle, before or after).
    with gc_paused(keep=True), loaded_reading_ahead(bundle) as loaded:
        facts = keep_facts(loaded)
        wanted = select_nodes(bundle_node_labels(facts), nodes or (), selector, str(bundle))
        report = diagnose(facts, read_node_observations, wanted, reuse=reuse)
        if not report.nodes:
            refuse_empty(name or str(bundle), facts.manifest)
        selection = selection_of(facts, wanted, nodes or (), selector)
        report = with_open(report, live=live, exists=exists_in(facts.source))
        return report if selection is None else msgspec.structs.replace(report, selection=selection)
