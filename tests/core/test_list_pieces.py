"""Large cluster lists read in pieces give exactly the items of the whole document."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import msgspec
import pytest

from gpunode import limits
from gpunode.bundle import load
from gpunode.bundle.load import load_bundle
from gpunode.bundle.pieces import PIECE_BYTES, ListFile
from gpunode.errors import BundleError

MINI = Path(__file__).parents[1] / "live" / "fixtures" / "mini"
TRICKY = ['}, {"apiVersion": "v1"', '},{"apiVersion":"v1","kind":"Pod"', "]]]}}}", '\\"{', "[[[{{{"]


def _pods(count: int) -> list[dict[str, Any]]:
    """``count`` pods from the fixture's, renamed; some hold separators and brackets in
    strings, and owner references shaped like the list's own items (a cut there is wrong)."""
    base = json.loads((MINI / "cluster" / "pods.json").read_text())["items"]
    pods = []
    for i in range(count):
        pod = copy.deepcopy(base[i % len(base)])
        pod["metadata"]["name"] = f"{pod['metadata']['name']}-{i}"
        pod["metadata"].setdefault("annotations", {})["note"] = TRICKY[i % len(TRICKY)] * (i % 3)
        pod["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": f"o{j}"}
                                              for j in range(i % 3)]
        pod["metadata"] = {"zz": [{"apiVersion": "v1"}, {"apiVersion": "v1"}], **pod["metadata"]}
        pods.append(pod)
    return pods


def _bundle(tmp_path: Path, text: str) -> Path:
    bundle = tmp_path / "b"
    shutil.copytree(MINI, bundle)
    (bundle / "cluster" / "pods.json").write_text(text)
    return bundle


def _whole(bundle: Path) -> tuple[Any, ...]:
    data = (bundle / "cluster" / "pods.json").read_bytes()
    return tuple(load._LIST_DECODERS["pods"].decode(data).items)


@pytest.mark.parametrize("indent", [None, 4])
def test_a_large_list_read_in_pieces_equals_the_whole_document(tmp_path: Path, indent: int | None,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    doc = {"apiVersion": "v1", "items": _pods(1500), "kind": "List", "metadata": {"resourceVersion": ""}}
    bundle = _bundle(tmp_path, json.dumps(doc, indent=indent))
    assert (bundle / "cluster" / "pods.json").stat().st_size > 3 * PIECE_BYTES
    cuts: list[bool] = []
    piece = ListFile.piece
    monkeypatch.setattr(ListFile, "piece", lambda self, pos, exact=False: cuts.append(exact) or
                        piece(self, pos, exact))
    facts = load_bundle(bundle)
    assert any(cuts) == (indent is None)  # compact: a separator inside an item was tried, then cut exactly
    pods = tuple(p for pods in facts.pods_by_node.values() for group in pods.values() for p in group)
    assert pods  # the fixture's stack pods are placed on their nodes
    assert load._load_list(facts.source, "pods", [], load._Budget()) == _whole(bundle)


def test_a_malformed_item_in_a_later_piece_is_named_by_its_index_in_the_file(tmp_path: Path) -> None:
    pods = _pods(1500)
    pods[1234]["spec"]["nodeName"] = 7
    bundle = _bundle(tmp_path, json.dumps({"kind": "PodList", "items": pods}))
    warnings: list[str] = []
    facts = load_bundle(bundle)
    items = load._load_list(facts.source, "pods", warnings, load._Budget())
    assert warnings == [
        "cluster/pods.json: item 1234 skipped: Expected `str`, got `int` - at `$.spec.nodeName`"]
    assert items is not None and len(items) == 1499
    assert facts.damaged == {"pods"}


def _stray(text: str) -> str:
    at = text.index('"phase"', len(text) // 2)  # in a later piece
    return text[:at] + '"phase" x' + text[at + len('"phase"'):]


@pytest.mark.parametrize(("damage", "message"), [
    (_stray, "JSON is malformed"),
    (lambda text: text[:-2] + ",]}", "JSON is malformed"),
    (lambda text: text[: len(text) * 2 // 3], "cut short"),
    (lambda text: text.replace('"kind": "PodList"', '"kind": "Pod"'), "expected a List"),
])
def test_a_damaged_large_list_is_one_line_naming_the_file(tmp_path: Path, damage: Any, message: str) -> None:
    bundle = _bundle(tmp_path, damage(json.dumps({"kind": "PodList", "items": _pods(1500)})))
    with pytest.raises(BundleError, match=message) as caught:
        load_bundle(bundle)
    assert "cluster/pods.json" in str(caught.value) and "\n" not in str(caught.value)
    if damage is _stray:  # the byte named is the file's, as the whole document's decoder says
        data = (bundle / "cluster" / "pods.json").read_bytes()
        with pytest.raises(msgspec.DecodeError) as whole:
            msgspec.json.decode(data)
        assert str(caught.value).endswith(str(whole.value))


def test_lists_that_grow_memory_past_the_limit_stop_with_one_line(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = _bundle(tmp_path, '{"kind":"List","items":[' + ",".join(["{}"] * 1_000_000) + "]}")
    monkeypatch.setattr(limits, "MAX_MEMORY_GROWTH", 16 * 1024 * 1024)
    with pytest.raises(BundleError, match=r"cluster/pods\.json: reading stopped at item [\d,]+: "
                                          r"the bundle would take more than 16 MiB"):
        load_bundle(bundle)
    monkeypatch.setattr(load, "MAX_LIST_ITEMS", 100_000)
    monkeypatch.setattr(limits, "MAX_MEMORY_GROWTH", 1 << 40)
    with pytest.raises(BundleError, match=r"cluster/pods\.json: more than 100,000 items"):
        load_bundle(bundle)


@pytest.mark.slow
def test_the_memory_limit_is_set_by_the_environment_and_a_bad_value_is_a_usage_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpunode.errors import UsageError

    bundle = _bundle(tmp_path, '{"kind":"List","items":[' + ",".join(["{}"] * 1_000_000) + "]}")
    monkeypatch.setenv(limits.MEMORY_ENV, "16")
    with pytest.raises(BundleError, match=r"cluster/pods\.json: reading stopped at item [\d,]+: the "
                                          r"bundle would take more than 16 MiB \(the limit; "
                                          r"GPUNODE_MAX_MEMORY_MIB raises it\)"):
        load_bundle(bundle)
    monkeypatch.setenv(limits.MEMORY_ENV, "4096")
    facts = load_bundle(bundle)  # the same items, read within the raised limit
    assert not facts.workload_pods and facts.memory is not None and facts.memory.limit == 4096 << 20
    for bad in ("lots", "0", "-5"):
        monkeypatch.setenv(limits.MEMORY_ENV, bad)
        with pytest.raises(UsageError, match=rf"^GPUNODE_MAX_MEMORY_MIB='{bad}': "):
            load_bundle(bundle)


def test_judging_stops_at_the_memory_limit_counting_the_reports_to_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpunode.bundle.load import read_node_observations
    from gpunode.diagnose import diagnose
    from gpunode.errors import GpunodeError

    bundle = _bundle(tmp_path, (MINI / "cluster" / "pods.json").read_text())
    for i in range(40):
        folder = bundle / "nodes" / f"n{i:02d}" / "cmd"
        folder.mkdir(parents=True)
        (folder / "nvidia-smi-q.xml").write_text("x\n")
    facts = load_bundle(bundle)
    assert len(diagnose(facts, read_node_observations).nodes) > 40
    monkeypatch.setattr(limits, "MAX_MEMORY_GROWTH", 16 * limits.REPORT_BYTES_PER_NODE)
    monkeypatch.setenv("GPUNODE_JOBS", "1")
    facts = load_bundle(bundle)
    facts.memory.start = limits.resident_bytes()  # type: ignore[union-attr]  # nothing grown yet
    with pytest.raises(GpunodeError, match=r"^stopped after judging (16|32) of 42 GPU nodes: memory "
                                           r"grew by more than \d+ MiB \(the limit; "
                                           r"GPUNODE_MAX_MEMORY_MIB raises it\); or judge fewer"):
        diagnose(facts, read_node_observations)  # 16 reports to write reach the limit (memory may shrink)

