"""Node files read ahead by a helper process while the cluster lists are decoded
(bundle/ahead.py): the same listing, the same parses, the same reports; anything the
helper did not finish or got wrong is done as without it; no process is left behind."""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from goldenmaker import MAKER

from gpunode import nodepool
from gpunode.bundle import ahead, source
from gpunode.bundle.load import load_bundle, loaded_reading_ahead, read_node_observations
from gpunode.bundle.source import DirSource
from gpunode.cli import build_report
from gpunode.errors import BundleError, ParseError
from gpunode.facts import ClusterFacts
from gpunode.parse.nvidia_smi import parse_nvidia_smi_xml

CASES = [c for c in MAKER.cases() if not c.startswith("fixture:")]
Loader = Callable[[Path], ClusterFacts]
#: How long ``forced`` lets the helper finish before its first parse is asked for.
HELPER_WAIT_S = 30.0


@pytest.fixture
def loaded() -> Iterator[Loader]:
    """``loaded(bundle)``: the facts with their node files read ahead; the helper ends with
    the test."""
    with contextlib.ExitStack() as stack:
        yield lambda bundle: stack.enter_context(loaded_reading_ahead(bundle))


@pytest.fixture
def forced(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    """Read-ahead on for any bundle folder, nodes judged in 2 workers; the helper is let
    finish before its first parse is asked for (so a test can count on its parses), and
    the parses this process used are recorded."""
    monkeypatch.setenv(ahead.ENV, "1")
    monkeypatch.setenv(nodepool.JOBS_ENV, "2")
    used: list[dict[str, Any]] = []
    real = ahead.ReadAhead.parsed

    def parsed(self: ahead.ReadAhead, node: str, cmd: Any) -> dict[str, Any]:
        if self._index is None and not self._ended:
            select.select([self._ready], [], [], HELPER_WAIT_S)  # readable at its end: it closed its side
        found = real(self, node, cmd)
        used.append(found)
        return found

    monkeypatch.setattr(ahead.ReadAhead, "parsed", parsed)
    yield used
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # every helper and worker was waited for


def _report(bundle: Path) -> bytes:
    return msgspec.json.encode(build_report(bundle, None))


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_reports_with_read_ahead_are_the_reference(case: str, tmp_path: Path,
                                                    forced: list[dict[str, Any]]) -> None:
    bundle = MAKER.bundle_for(case, tmp_path)
    assert MAKER.reports(bundle) == MAKER.golden_path(case).read_bytes()
    has_xml = any(bundle.glob(f"nodes/*/{ahead.NVIDIA_SMI_KEY}"))
    assert any(forced) == has_xml, "the first node's nvidia-smi parse was not taken from the helper"


@pytest.mark.slow
def test_validate_with_read_ahead_is_validate_without(tmp_path: Path, forced: list[dict[str, Any]],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = MAKER.bundle_for("falcon-ai-broken", tmp_path)
    args = [sys.executable, "-m", "gpunode", "validate", "--from", str(bundle), "-o", "json"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    with_helper = subprocess.run(args, capture_output=True, env=env, timeout=120, check=False)
    without = subprocess.run(args, capture_output=True, env={**env, ahead.ENV: "0"}, timeout=120,
                             check=False)
    assert with_helper.returncode == without.returncode == 1, with_helper.stderr
    assert with_helper.stdout == without.stdout
    assert b'"checks"' in with_helper.stdout


def _without_helper(bundle: Path, monkeypatch: pytest.MonkeyPatch) -> bytes:
    monkeypatch.setenv(ahead.ENV, "0")
    try:
        return _report(bundle)
    finally:
        monkeypatch.setenv(ahead.ENV, "1")


def test_a_parse_error_comes_back_as_the_node_pass_would_say_it(
        tmp_path: Path, forced: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch,
        loaded: Loader) -> None:
    bundle = MAKER.bundle_for("falcon-ai", tmp_path)
    xml = bundle / "nodes" / "gpu-wk-01" / ahead.NVIDIA_SMI_KEY
    cut = xml.read_text()[:5000]
    xml.write_text(cut)
    with pytest.raises(ParseError) as caught:
        parse_nvidia_smi_xml(cut)
    facts = loaded(bundle)
    obs = read_node_observations(facts, "gpu-wk-01")
    assert obs.parsed == {ahead.NVIDIA_SMI_KEY: (None, str(caught.value))}
    with_helper = _report(bundle)
    assert with_helper == _without_helper(bundle, monkeypatch)
    assert "nvidia-smi" in with_helper.decode()


def test_a_text_other_than_the_one_parsed_is_parsed_again(
        tmp_path: Path, forced: list[dict[str, Any]], loaded: Loader) -> None:
    bundle = MAKER.bundle_for("falcon-ai", tmp_path)
    facts = loaded(bundle)
    assert facts.ahead is not None
    text = (bundle / "nodes" / "gpu-wk-01" / ahead.NVIDIA_SMI_KEY).read_text()
    assert facts.ahead.parsed("gpu-wk-01", {ahead.NVIDIA_SMI_XML: text})
    changed = text.replace("<product_name>", "<product_name>X", 1)
    assert facts.ahead.parsed("gpu-wk-01", {ahead.NVIDIA_SMI_XML: changed}) == {}
    assert facts.ahead.parsed("gpu-wk-01", {ahead.NVIDIA_SMI_XML: text + " "}) == {}
    assert facts.ahead.parsed("no-such-node", {ahead.NVIDIA_SMI_XML: text}) == {}
    assert facts.ahead.parsed("gpu-wk-01", {}) == {}


def test_a_text_cut_shorter_by_the_node_pass_is_parsed_from_what_it_read(
        tmp_path: Path, forced: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch,
        loaded: Loader) -> None:
    """The node's files share one budget: when the files before it used most of it, the node
    pass reads a cut XML (a parse error) where the helper read it whole."""
    from gpunode.bundle import load

    bundle = MAKER.bundle_for("falcon-ai", tmp_path)
    cmd = bundle / "nodes" / "gpu-wk-01" / "cmd"
    monkeypatch.setattr(load, "MAX_NODE_BYTES", (cmd / "dmesg.txt").stat().st_size + 4000)
    expected = _without_helper(bundle, monkeypatch)
    facts = loaded(bundle)
    obs = read_node_observations(facts, "gpu-wk-01")
    assert len(obs.cmd[ahead.NVIDIA_SMI_XML]) < (cmd / ahead.NVIDIA_SMI_XML).stat().st_size
    assert not obs.parsed
    assert _report(bundle) == expected


def test_the_helpers_listing_is_the_walks_listing_odd_names_included(
        tmp_path: Path, forced: list[dict[str, Any]]) -> None:
    node = tmp_path / "nodes" / "gpu-1"
    (node / "cmd").mkdir(parents=True)
    names = ["a b.txt", "new\nline.txt", "ünï.txt", "tab\t.txt"]
    for name in names:
        (node / "cmd" / name).write_text("x")
    (node / "cmd" / os.fsdecode(b"bad-\xff.txt")).write_text("x")
    (node / "files").symlink_to(node / "cmd", target_is_directory=True)
    os.mkfifo(node / "cmd" / "fifo")
    walked = DirSource(tmp_path).list("nodes")
    helped = DirSource(tmp_path)
    started = ahead.start_read_ahead(helped)
    assert started is not None
    assert helped.list("nodes") == walked
    assert len(walked) == len(names) + 1
    started.close()


def test_a_listing_error_is_the_walks_error(tmp_path: Path, forced: list[dict[str, Any]],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = MAKER.bundle_for("falcon-ai", tmp_path)
    monkeypatch.setattr(source, "MAX_FILES", 5)
    with pytest.raises(BundleError, match="more than 5 files") as walked:
        load_bundle(bundle)
    with pytest.raises(BundleError) as helped, loaded_reading_ahead(bundle):
        pass
    assert str(helped.value) == str(walked.value)


def _dies(*_args: Any) -> int:
    os._exit(3)


def _hangs(*_args: Any) -> Any:
    import time

    time.sleep(60)


@pytest.mark.parametrize(("where", "replacement"), [("_helper", _dies), ("_helper", _hangs),
                                                    ("_parsed_entry", _dies), ("_parsed_entry", _hangs)])
def test_a_helper_that_dies_or_hangs_changes_nothing(where: str, replacement: Any, tmp_path: Path,
                                                     forced: list[dict[str, Any]],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Before its listing (the loader walks) or while parsing (the node pass parses)."""
    bundle = MAKER.bundle_for("falcon-ai-broken", tmp_path)
    expected = _without_helper(bundle, monkeypatch)
    monkeypatch.setattr(ahead, where, replacement)
    monkeypatch.setattr(ahead, "FINISH_TIMEOUT_S", 0.2)
    if replacement is _hangs:  # a hung helper never ends: waiting for it only costs time
        monkeypatch.setitem(globals(), "HELPER_WAIT_S", 0.0)
    if where == "_helper" and replacement is _hangs:  # a loader that gave up waiting for it
        monkeypatch.setattr(ahead.ReadAhead, "listing", lambda self: self.close())
    assert _report(bundle) == expected
    assert not any(forced)


@pytest.mark.parametrize("room", ["listing only", "nothing"])
def test_what_does_not_fit_in_the_shared_memory_is_left_to_this_process(
        room: str, tmp_path: Path, forced: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = MAKER.bundle_for("falcon-ai", tmp_path)
    expected = _without_helper(bundle, monkeypatch)
    listing = "\0".join(DirSource(bundle).list("nodes")).encode()
    size = ahead._DATA_AT + len(listing) + 64 if room == "listing only" else ahead._DATA_AT + 8
    monkeypatch.setattr(ahead, "REGION_BYTES", size)
    taken: list[list[str] | None] = []

    def listing(self: ahead.ReadAhead, real: Any = ahead.ReadAhead.listing) -> list[str] | None:
        taken.append(real(self))
        return taken[-1]

    monkeypatch.setattr(ahead.ReadAhead, "listing", listing)
    assert _report(bundle) == expected
    assert not any(forced), "no parse fits"
    assert len(taken) == 1 and (taken[0] is not None) == (room == "listing only")


def test_a_helper_stopped_midway_leaves_the_rest_to_the_node_pass(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loaded: Loader) -> None:
    """Asked to stop at once: whatever it did not parse is parsed by the node pass."""
    monkeypatch.setenv(ahead.ENV, "1")
    monkeypatch.setenv(nodepool.JOBS_ENV, "2")
    bundle = MAKER.bundle_for("falcon-ai", tmp_path)
    facts = loaded(bundle)
    assert facts.ahead is not None
    for obs in (read_node_observations(facts, n) for n in ("gpu-wk-01", "gpu-wk-02")):
        assert not obs.parsed or obs.parsed[ahead.NVIDIA_SMI_KEY][0] == parse_nvidia_smi_xml(
            obs.cmd[ahead.NVIDIA_SMI_XML])


@pytest.mark.parametrize(("env", "jobs"), [("0", "2"), ("", "1"), ("", "2")])
def test_not_started_when_off_serial_or_small(env: str, jobs: str, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Off, serial (GPUNODE_JOBS=1) and a bundle of fewer node folders than a pool needs."""
    monkeypatch.setenv(ahead.ENV, env)
    monkeypatch.setenv(nodepool.JOBS_ENV, jobs)
    bundle = MAKER.bundle_for("falcon-ai", tmp_path)
    assert ahead.start_read_ahead(DirSource(bundle)) is None


def test_not_started_for_an_archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ahead.ENV, "1")
    bundle = MAKER.bundle_for("falcon-ai", tmp_path)
    archive = Path(shutil.make_archive(str(tmp_path / "b"), "gztar", bundle))
    with loaded_reading_ahead(archive) as facts:
        assert facts.ahead is None


def test_started_for_a_folder_of_pool_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ahead.ENV, raising=False)
    monkeypatch.setenv(nodepool.JOBS_ENV, "2")
    for i in range(nodepool.MIN_NODES):
        (tmp_path / "nodes" / f"gpu-{i:03d}").mkdir(parents=True)
    started = ahead.start_read_ahead(DirSource(tmp_path))
    assert started is not None
    started.close()
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)
