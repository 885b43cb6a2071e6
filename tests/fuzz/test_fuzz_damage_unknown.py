"""Fuzzing: damaged or removed node data never becomes a verdict of its own.

What "damaged" means, per input (docs/limits.md, "Damaged input"):

- nvidia-smi XML, probe JSON, containerd TOML, DCGM metrics: the file no longer parses
  with the parser gpunode uses for it (a cut or garbled file). A damaged file is no
  evidence: every component's status is what it is with the file removed, or
  ``unknown`` (the unreadable file is named) -- never ``ok`` or a problem that removal
  does not give. With the file removed, the components that had it as their only
  evidence are ``unknown``. A file that still parses is evidence like any other and
  is judged on its content.
- A container log: text never fails to parse. Damage may only change its component's
  status to what it is with the log removed, or to a problem whose cause is a known
  failure signature found in the damaged text: a real failure signal, whatever
  brought it there.
- A must-gather folder: a damaged YAML listing is read like a removed one (or leaves
  components ``unknown``), or is refused with one line naming the file (exit 2);
  never a traceback.

Bounded for CI (``FUZZ_EXAMPLES``, default 40 per target); a longer run:
``FUZZ_EXAMPLES=2000 .venv/bin/pytest tests/fuzz -q``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from fuzzdamage import HOWS, damage
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.collect.mustgather import convert_must_gather
from gpunode.diagnose import diagnose
from gpunode.errors import GpunodeError
from gpunode.explain import explain_lines
from gpunode.limits import bounded_yaml
from gpunode.model import Report, Status
from gpunode.parse._toml import load_toml
from gpunode.parse.nvidia_smi import parse_nvidia_smi_xml
from gpunode.parse.prom import parse_prometheus_text
from gpunode.probe import load_probe_json

TESTS = Path(__file__).parents[1]
MINI = TESTS / "live" / "fixtures" / "mini"
H200 = TESTS / "fixtures" / "node" / "h200-device" / "bundle"
MUST_GATHER = TESTS / "live" / "fixtures" / "must-gather"
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
HOW = st.sampled_from(HOWS)

Statuses = dict[tuple[str, str], Status]


def _parses(parse: Callable[[str], object], data: bytes) -> bool:
    try:
        parse(data.decode("utf-8", errors="replace"))
    except Exception:  # any refusal of the parser is what "damaged" means
        return False
    return True


# name: (bundle, node, file, parser, components judged from the file alone on that bundle)
INPUTS: dict[str, tuple[Path, str, str, Callable[[str], object], tuple[str, ...]]] = {
    "nvidia-smi": (MINI, "gpu-wk-01", "cmd/nvidia-smi-q.xml", parse_nvidia_smi_xml,
                   ("gpu-hardware",)),
    "probe-json": (H200, "h200-device", "cmd/gpunode-probe.json", load_probe_json, ()),
    "containerd": (MINI, "gpu-wk-01", "files/etc/containerd/config.toml",
                   lambda text: load_toml("config.toml", text), ()),
    "dcgm-metrics": (MINI, "gpu-wk-01", "metrics/dcgm-exporter.prom", parse_prometheus_text, ()),
}


def _report(bundle: Path) -> Report:
    return diagnose(load_bundle(bundle), read_node_observations)


def statuses(report: Report) -> Statuses:
    return {(n.name, c.component): c.status for n in report.nodes for c in n.components}


def _with(source: Path, rel: str, data: bytes | None) -> Report:
    """The report of a copy of ``source`` whose ``rel`` holds ``data`` (None: removed)."""
    with tempfile.TemporaryDirectory() as tmp:
        bundle = Path(tmp) / "b"
        shutil.copytree(source, bundle)
        if data is None:
            (bundle / rel).unlink()
        else:
            (bundle / rel).write_bytes(data)
        return _report(bundle)


_REMOVED: dict[str, Statuses] = {}


def removed(name: str) -> Statuses:
    if name not in _REMOVED:
        source, node, rel, _, _ = INPUTS[name]
        _REMOVED[name] = statuses(_with(source, f"nodes/{node}/{rel}", None))
    return _REMOVED[name]


@pytest.mark.parametrize("name", list(INPUTS))
def test_a_removed_input_leaves_what_it_alone_decides_unknown(name: str) -> None:
    source, node, _rel, _, alone = INPUTS[name]
    intact = statuses(_report(source))
    gone = removed(name)
    for component in alone:
        assert intact[(node, component)] == Status.OK, component  # it decided something
        assert gone[(node, component)] == Status.UNKNOWN, component
    for key, status in gone.items():  # less data never adds a problem
        if status.is_problem:
            assert intact[key] == status, key


@FUZZ
@given(name=st.sampled_from(list(INPUTS)), how=HOW, at=st.integers(min_value=0),
       junk=st.binary(max_size=60))
def test_a_damaged_input_counts_as_removed(name: str, how: str, at: int, junk: bytes) -> None:
    source, node, rel, parse, _ = INPUTS[name]
    data = damage((source / "nodes" / node / rel).read_bytes(), how, at, junk)
    report = _with(source, f"nodes/{node}/{rel}", data)
    if _parses(parse, data):
        return  # still well-formed: evidence judged on its content
    gone = removed(name)
    for key, status in statuses(report).items():
        assert status in (gone[key], Status.UNKNOWN), f"{name} damaged ({how} at {at}): {key} {status}"


LOG = "logs/gpu-operator/nvidia-device-plugin-daemonset-z8c3x/nvidia-device-plugin.log"
LOG_COMPONENT = ("gpu-wk-02", "device-plugin")


@FUZZ
@given(how=HOW, at=st.integers(min_value=0),
       junk=st.binary(max_size=80) | st.sampled_from([b"\x00" * 40, b"\n" * 10, b"\x1b[2J"]))
def test_a_damaged_log_changes_a_verdict_only_by_a_known_signature(how: str, at: int,
                                                                   junk: bytes) -> None:
    data = damage((MINI / LOG).read_bytes(), how, at, junk)
    report = _with(MINI, LOG, data)
    without = _removed_log()
    now = statuses(report)
    for key, status in now.items():
        if key == LOG_COMPONENT or status == without[key]:
            continue
        raise AssertionError(f"{key}: {without[key]} -> {status} from damage to another file")
    comp = next(c for n in report.nodes if n.name == LOG_COMPONENT[0]
                for c in n.components if c.component == LOG_COMPONENT[1])
    if comp.status == without[LOG_COMPONENT]:
        return
    assert comp.status.is_problem, f"{LOG_COMPONENT}: {without[LOG_COMPONENT]} -> {comp.status}"
    text = data.decode("utf-8", errors="replace")
    found = {m.cause.code for m in explain_lines(text.splitlines()).matches}
    assert comp.cause in found, f"{comp.cause} not signalled by the damaged log"


_LOGLESS: list[Statuses] = []


def _removed_log() -> Statuses:
    if not _LOGLESS:
        _LOGLESS.append(statuses(_with(MINI, LOG, None)))
    return _LOGLESS[0]


def _must_gather_root(tmp: Path) -> Path:
    shutil.copytree(MUST_GATHER, tmp / "mg")
    return next(p.parent for p in (tmp / "mg").rglob("gpu_operand_pods.yaml"))


MG_FILES = ["gpu_operand_pods.yaml", "cluster_policy.yaml", "gpu_operand_ds.yaml",
            "gpu_operator_pod.yaml", "gpu_nodes.status", "gpu_nodes.labels"]


def _must_gather_report(mutate: Callable[[Path], None]) -> Report | GpunodeError:
    with tempfile.TemporaryDirectory() as tmp:
        root = _must_gather_root(Path(tmp))
        mutate(root)
        try:
            return _report(convert_must_gather(Path(tmp) / "mg", Path(tmp) / "out"))
        except GpunodeError as exc:
            return exc


@FUZZ
@given(rel=st.sampled_from(MG_FILES), how=HOW, at=st.integers(min_value=0),
       junk=st.binary(max_size=60))
def test_a_damaged_must_gather_reads_as_removed_or_is_one_line(rel: str, how: str, at: int,
                                                               junk: bytes) -> None:
    data = damage((next(MUST_GATHER.rglob(rel))).read_bytes(), how, at, junk)
    outcome = _must_gather_report(lambda root: (root / rel).write_bytes(data))
    if isinstance(outcome, GpunodeError):
        assert outcome.exit_code == 2 and "\n" not in str(outcome).strip(), outcome
        assert rel in str(outcome), outcome
        return
    if rel.endswith(".yaml") and not _parses(lambda t: bounded_yaml(t, rel), data):
        gone = _must_gather_report(lambda root: (root / rel).unlink())
        assert isinstance(gone, Report), gone
        before = statuses(gone)
        for key, status in statuses(outcome).items():
            assert status in (before.get(key), Status.UNKNOWN), f"{rel} damaged ({how} at {at}): {key}"
