"""``gpunode causes``: browse the knowledge base; also renders docs/knowledge-base.md.

``python -m gpunode.commands.causes docs/knowledge-base.md`` regenerates the
document from the data, so it can never drift (a test compares them).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import msgspec
import typer

from gpunode.commands.output import DocFormat, DocFormatOpt, write_json, write_yaml

if TYPE_CHECKING:
    from rich.console import Console

    from gpunode.catalog import Catalog
    from gpunode.kb import Cause, KnowledgeBase, Match
    from gpunode.xid import XidCatalog

GENERIC = "*"
GENERIC_LAYER = -1  # generic pod states belong to no layer; listed first


class SignatureOut(msgspec.Struct, frozen=True, omit_defaults=True):
    source: str
    pattern: str
    containers: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    name: str | None = None


class CauseOut(msgspec.Struct, frozen=True):
    """One knowledge-base entry as ``gpunode causes -o json`` prints it."""

    code: str
    component: str
    layer: int | None
    title: str
    status: str
    standalone: bool
    specificity: int
    explanation: str
    fix: str
    next_steps: tuple[str, ...]
    references: tuple[str, ...]
    signatures: tuple[SignatureOut, ...]
    example: str
    fix_for: dict[str, str] = {}


def register(app: typer.Typer) -> None:
    @app.command("causes")
    def causes_cmd(
        layer: Annotated[int | None, typer.Option("--layer", help="Only this layer (0-5).")] = None,
        component: Annotated[
            str | None, typer.Option("--component", help="Only this component (catalog id).")
        ] = None,
        output: DocFormatOpt = DocFormat.table,
    ) -> None:
        """List every cause gpunode recognises: code, component, layer, title and fix."""
        from gpunode.catalog import load_catalog
        from gpunode.commands.common import console as stdout_console
        from gpunode.kb import load_kb

        catalog = load_catalog()
        causes = select_causes(load_kb(), catalog, layer, component)
        RENDERERS[output.value](causes, catalog, stdout_console())


def select_causes(
    kb: KnowledgeBase, catalog: Catalog, layer: int | None, component: str | None
) -> list[Cause]:
    """Causes filtered by layer and component, ordered by layer then catalog order."""
    from gpunode.errors import UsageError

    if component is not None and component not in catalog.ids:
        raise UsageError(f"unknown component {component!r}; known: {', '.join(catalog.ids)}")
    if layer is not None and layer not in {c.layer for c in catalog.components}:
        raise UsageError(f"unknown layer {layer}; layers are 0 to 5")
    chosen = [
        c
        for c in kb.causes
        if (component is None or c.component == component)
        and (layer is None or cause_layer(c, catalog) == layer)
    ]
    return sorted(chosen, key=lambda c: _order(c, catalog))


def cause_layer(cause: Cause, catalog: Catalog) -> int:
    return GENERIC_LAYER if cause.component == GENERIC else catalog.get(cause.component).layer


def _order(cause: Cause, catalog: Catalog) -> tuple[int, int, int, str]:
    position = catalog.ids.index(cause.component) if cause.component != GENERIC else -1
    return (cause_layer(cause, catalog), position, -cause.specificity, cause.code)


def cause_out(cause: Cause, catalog: Catalog) -> CauseOut:
    layer = cause_layer(cause, catalog)
    return CauseOut(
        code=cause.code,
        component=cause.component,
        layer=None if layer == GENERIC_LAYER else layer,
        title=cause.title,
        status=cause.status,
        standalone=cause.standalone,
        specificity=cause.specificity,
        explanation=cause.explanation,
        fix=cause.fix,
        next_steps=cause.next_steps,
        references=cause.references,
        signatures=tuple(
            SignatureOut(m.source, m.pattern, m.containers, m.reasons, m.name) for m in cause.match
        ),
        example=cause.example,
        fix_for=cause.fix_for,
    )


# -- rendering ------------------------------------------------------------------------


def render_json(causes: Sequence[Cause], catalog: Catalog, console: Console) -> None:
    data = [cause_out(c, catalog) for c in causes]
    write_json(console, data)


def render_yaml(causes: Sequence[Cause], catalog: Catalog, console: Console) -> None:
    write_yaml(console, [cause_out(c, catalog) for c in causes])


def render_table(causes: Sequence[Cause], catalog: Catalog, console: Console) -> None:
    """Two columns so it reads at 80 characters: where the cause lives, and what to do."""
    from rich.table import Table
    from rich.text import Text

    from gpunode.report.style import table_box

    table = Table(
        title=f"{len(causes)} known causes",
        title_justify="left",
        box=table_box(console),
        show_lines=console.is_terminal,
        pad_edge=False,
    )
    table.add_column("cause", no_wrap=True)
    table.add_column("title and fix", ratio=1)
    for c in causes:
        layer = cause_layer(c, catalog)
        where = "any component" if layer == GENERIC_LAYER else f"{c.component} · layer {layer}"
        table.add_row(
            Text.assemble((c.code, "bold"), "\n", (where, "dim")),
            Text.assemble(c.title, "\n", ("fix: ", "dim"), c.fix),
        )
    console.print(table)


def render_markdown(causes: Sequence[Cause], catalog: Catalog, console: Console) -> None:
    console.file.write(causes_markdown(causes, catalog))


def causes_markdown(causes: Sequence[Cause], catalog: Catalog, heading: str = "##") -> str:
    """Causes grouped by layer, one section each (also the body of the KB document)."""
    from gpunode.model import LAYER_NAMES

    parts: list[str] = []
    for layer in sorted({cause_layer(c, catalog) for c in causes}):
        name = "Generic pod states (any component)" if layer == GENERIC_LAYER else LAYER_NAMES[layer]
        title = name if layer == GENERIC_LAYER else f"Layer {layer}: {name}"
        parts.append(f"{heading} {title}\n")
        parts.extend(_cause_markdown(c, heading + "#") for c in causes if cause_layer(c, catalog) == layer)
    return "\n".join(parts)


def _cause_markdown(cause: Cause, heading: str) -> str:
    kind = "standalone" if cause.standalone else "refines a failing component"
    if not cause.standalone and any(m.while_running for m in cause.match):
        kind = "decides while running where marked, otherwise refines a failing component"
    lines = [
        f"{heading} `{cause.code}` — {cause.title}\n",
        f"Component `{cause.component}` · {cause.status} · specificity {cause.specificity}"
        + (f" · {kind}" if cause.match else " · emitted by a check")
        + "\n",
        f"{cause.explanation}\n",
        f"**Fix:** {cause.fix}\n",
        *(f"**Fix for `{comp}`:** {text}\n" for comp, text in sorted(cause.fix_for.items())),
    ]
    if cause.match:
        lines.append("Signatures:\n")
        lines.extend(
            f"- {_signature_scope(m.source, m.containers, m.reasons, m.name)}: `{m.pattern}`{_decisive(m)}"
            for m in cause.match
        )
        lines.append("")
    if cause.example:
        lines.append(f"Example: `{cause.example}`\n")
    if cause.references:
        lines.append("References: " + ", ".join(_reference(r) for r in cause.references) + "\n")
    if cause.reports:
        lines.append("Field reports: " + ", ".join(_reference(r) for r in cause.reports) + "\n")
    return "\n".join(lines)


def _signature_scope(source: str, containers: Iterable[str], reasons: Iterable[str], name: str | None) -> str:
    scope = {"log": "log", "event": "event", "waiting": "container state", "node_cmd": "node command"}
    text = scope.get(source, source.replace("_", " "))
    extra = [*(f"container {c}" for c in containers), *(f"reason {r}" for r in reasons)]
    if name:
        extra.append(name)
    return text + (f" ({', '.join(extra)})" if extra else "")


def _decisive(m: Match) -> str:
    """How a ``while_running`` signature decides (kb.Match): on its own, in a running pod."""
    if not m.while_running:
        return ""
    where = f" (read in {', '.join(m.seen_in)})" if m.seen_in else ""
    unless = f", unless a later line matches `{m.unless}`" if m.unless else ""
    return f" — decisive while running{where}{unless}"


def _reference(ref: str) -> str:
    if ref.startswith("http"):
        return f"<{ref}>"
    repo, _, number = ref.partition("#")
    return f"[{ref}](https://github.com/{repo}/issues/{number})" if number else ref


RENDERERS = {"table": render_table, "json": render_json, "yaml": render_yaml, "markdown": render_markdown}


# -- docs/knowledge-base.md ---------------------------------------------------------------

DOC_INTRO = """\
# Knowledge base

<!-- Generated by `python -m gpunode.commands.causes docs/knowledge-base.md` from
src/gpunode/data/causes/*.toml and src/gpunode/data/xid.toml. Do not edit by hand:
tests/kb/test_kb_doc.py fails when this file is out of date. -->

gpunode names causes, not symptoms. Every cause code it can report is one entry in
`src/gpunode/data/causes/*.toml`: what it means, how to fix it, the next commands to
run (filled with the real node, pod and namespace names) and, for most entries, the
real text that identifies it. `gpunode causes` lists them; `gpunode explain FILE`
finds their signatures in any text; `gpunode diagnose` names them per node.

## How matching works

- **Scoped signatures.** A `log` signature is searched only in the logs of its own
  component's containers (optionally only the named containers); an `event`
  signature in events about the node and its stack pods (optionally only some
  reasons); `waiting` in container waiting/terminated messages; `node_cmd` and
  `node_file` in the named command output or file collected from the node;
  `node_condition` in the node's conditions; `text` only in `gpunode explain`.
  A line in an unrelated container never names a cause.
- **Standalone or refining.** A standalone signature proves a problem on its own
  (an Xid 79, a fatal NIC error). Any other signature only refines a component that
  a check already sees failing (a crash-looping driver pod whose log says why), so
  a stale or stray line cannot invent a root cause.
- **Decisive while running.** A `log` signature marked so decides on its own in the
  current log of a running pod (the operator's, nfd-master's, one read in another
  component's pods), because the pod runs but does not do its job; it counts only
  while no later line of that log matches its `unless` pattern (a retry that worked).
- **The decisive line, always.** A component whose only problem is a state (crash
  loop, init container failing, no pod, no GPUs advertised, NotReady, policy not
  ready: entries marked `state`) is explained by what it said itself: the previous
  log of the container that ended, the init container's log, the terminated and
  waiting messages, warning events, its cluster-side pods (nfd-master) and, for the
  kubelet and the container runtime, their journals (`cmd/journal-*.txt`). The
  decisive line is picked by general rules (`gpunode.decisive`: logrus, zap and klog
  levels, `Error:`/`FATAL`/`panic:` prefixes, error words, HTTP 4xx/5xx, non-zero
  exits; retries, warnings and noise skipped; a fuller or classified line just
  before a fatal that repeats it, or before a bare "exit status 1", preferred) and
  put in the first **class** whose `decisive` pattern it matches (the `error_*`
  entries below, most specific first). The class is the cause; the root cause's
  title quotes the line, and report JSON carries it as `decisive`. A catalogued
  cause (a signature or a structural check of the component) always wins. An error
  raised while creating a container belongs to the component it names (the
  catalog's `named_by`: the toolkit's hook, the driver's version mismatch), not to
  the pod that suffered it. The kernel's own vocabulary counts too: an `NVRM:` line
  that reads as a failure, or a module the loader refused, is evidence against the
  driver, the GPU hardware or MOFED even without an Xid.
- **Catalogued cause or class.** A catalogued cause names a line only where its
  own meaning fits the line and the node. Its class is the class its `example` falls
  in: a line of a more specific class (earlier in `classes.toml`: module load,
  permission denied, version mismatch, device, config invalid, file state, resource
  exhausted, unreachable, not found) that holds none of that class's words is its
  class's (a config the toolkit could not parse is
  `error_config_invalid`, not `containerd_not_patched`, whose example is a config it
  could not open). A cause that is also a fact of the node, with a signature in a
  snapshot of state (`lsmod`, `nvidia-smi -q`), does not stand on words where the
  bundle holds that snapshot and it does not show the fact (`nouveau_loaded` from the
  installer's generic hint, with no nouveau in `lsmod`); a log such as dmesg is a
  window in time and contradicts nothing. A cause's `also_for` names the other
  components whose own words carry it (Fabric Manager in the driver container or as
  a host unit). A class matching the line is never promoted to a catalogued cause
  by its class alone. The module loader's own failure (`modprobe: FATAL: ...`) is
  read by the class order over the whole line; other lines from their innermost
  error out.
- **Precedence.** When several causes match the same component, the highest
  `specificity` wins and the others are kept as supporting evidence; across
  components, the lowest failing layer is the root cause and everything above it
  is reported as blocked by it.
- **Xids** are classified by the Xid catalog below. Hardware-class Xids found in
  the kernel log, the driver and device-plugin logs or DCGM's Xid metrics become
  their cause; application Xids (the ones the device plugin ignores) are only
  evidence and never make a node look broken.
- `gpunode explain` reads any text (pod logs, `kubectl describe`, dmesg, a pasted
  mix) in one streaming pass with bounded memory; without `--component` every
  signature of the `log`, `event`, `waiting`, `node_cmd`, `node_condition` and
  `text` sources is a candidate. It exits 1 when it recognised something. The
  input is read as bytes in 8 MiB chunks and searched by one RE2 program (the
  `google-re2` package) holding every signature, widened to Python's Unicode
  classes so it can stop on too many lines but never skip a matching one; only the
  lines it stops on are decoded and checked signature by signature with Python's
  `re`. Lines are numbered as text mode with universal newlines numbers them.
  The end of each input (its last 256 KiB) is also searched for its decisive
  line; where no problem cause was recognised, that line's class is the answer
  (exit 1), so text holding an error line is never met with silence.
  Next steps are filled with what the input names (`gpunode.parse.pasted`):
  namespace and pod from the file's path (a bundle's `logs/<ns>/<pod>/…`,
  `/var/log/pods/…`, `/var/log/containers/…`) or from `kubectl describe pod`
  (only when the text describes one pod), the node from that describe or from a
  syslog kernel line's host, the GPU from the Xid's PCI address, as the index of
  `nvidia-smi` output in the same text where there is one. Commands that run on
  the node are marked `# on the node`.
- `gpunode explain A B …` reads several files in turn (lines numbered and quoted
  per file). containerd configs among them (a path under a directory `diagnose`
  reads them from, such as `…/etc/containerd/`, or TOML with `imports` or a
  containerd `plugins` table) are also judged together, root config and drop-ins,
  by the functions the toolkit checks use (`gpunode.checks.runtime_config`), so a
  cause that follows from a pair of files is named with each file and key:
  `containerd_config_wrong_path` for an NVIDIA drop-in the root config does not
  import, `containerd_config_version_mismatch` for an imported drop-in of a higher
  config version when the text also shows the runtime down.
- In bundles, a component's signatures are searched in each log and node file with
  one combined regex per set of signatures (`kb.scan_split_lines`); only the lines
  it matches are tried one signature at a time.

## How to add a cause

1. Add one `[[cause]]` entry to the file of its layer in `src/gpunode/data/causes/`:
   a snake_case `code`, the catalog `component`, `title`, `explanation`, `fix`,
   `next_steps` (templates may use `{node}`, `{namespace}`, `{pod}`, `{container}`,
   `{daemonset}`, `{operator_namespace}`; double literal braces), `references`
   (documentation URLs or `owner/repo#issue`), `status`, `specificity` and
   `standalone`.
2. Add one or more `[[cause.match]]` entries with the real text, as printed by the
   component (check `/work/shared/reference/gpu-stack-facts.md` and the upstream
   issue), scoped as narrowly as the source allows.
3. Give it an `example` (a real line that must match) and a `near_miss` (a similar,
   healthy line that must not).
4. Run `pytest tests/core/test_kb.py tests/kb`: the data is validated (unique
   codes, known components, patterns compile, templates use known names,
   references present), the example must match and the near miss must not,
   `gpunode explain` must find the example buried in 10,000 lines of unrelated log,
   and log signatures are injected into the simulated Falcon AI cluster and must be
   named by `gpunode diagnose`.
5. Regenerate this document: `python -m gpunode.commands.causes docs/knowledge-base.md`.
"""


def xid_markdown(catalog: XidCatalog) -> str:
    rows = [
        f"| {x.code} | {x.mnemonic} | {x.cause_class} | {x.action} | "
        f"{'yes' if x.device_plugin_ignores else 'no'} | {f'`{x.cause}`' if x.cause else '(evidence only)'} |"
        for x in sorted(catalog.entries.values(), key=lambda x: x.code)
    ]
    head = (
        "## Xid catalog\n\n"
        "From NVIDIA's Xid catalog (<https://docs.nvidia.com/deploy/xid-errors/index.html>), "
        "normalised to a class and an action. Xid 154 takes its action from its message.\n\n"
        "| Xid | name | class | action | ignored by device plugin | reported as |\n"
        "|---|---|---|---|---|---|"
    )
    return head + "\n" + "\n".join(rows) + "\n"


def render_kb_doc() -> str:
    """The whole docs/knowledge-base.md, from the shipped data."""
    from gpunode.catalog import load_catalog
    from gpunode.kb import load_kb
    from gpunode.xid import load_xid_catalog

    catalog, kb = load_catalog(), load_kb()
    causes = select_causes(kb, catalog, None, None)
    count = (
        f"## Causes by layer\n\n{len(causes)} causes, {sum(1 for c in causes if c.match)} with signatures.\n"
    )
    return "\n".join(
        [DOC_INTRO, xid_markdown(load_xid_catalog()), count, causes_markdown(causes, catalog, "###")]
    )


def main(argv: Sequence[str]) -> int:
    """Write the KB document to the path given (stdout without one)."""
    text = render_kb_doc()
    if argv:
        Path(argv[0]).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
