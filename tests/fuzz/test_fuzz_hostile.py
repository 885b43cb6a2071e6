"""Fuzzing hostile shapes (issue 23): alias bombs and deep nesting in YAML, endless bodies.

- YAML built from random values, nested to a random depth (flow sequences, flow
  mappings, block sequences on one line, up to 200,000 deep) or fanned out by aliases
  (up to 12 levels of up to 12 aliases each), then perhaps damaged: the bounded loader
  gives ``yaml.safe_load``'s values or refuses in one line naming the file (YamlRefused,
  or a YAMLError for malformed text), never another exception; a must-gather holding it
  converts or is a one-line BundleError.
- Endless bodies of random chunks under a random limit: the bounded reader keeps exactly
  the limit and names the cut; an exec sink does the same.

``FUZZ_EXAMPLES`` (default 40 per target) as in test_fuzz_bundles.py.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from fuzzdamage import HOWS, damage
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpunode.bounded import Capped, CappedSink, OutputCut
from gpunode.boundedyaml import YamlRefused
from gpunode.collect import kube
from gpunode.collect.mustgather import convert_must_gather
from gpunode.errors import BundleError
from gpunode.limits import MAX_YAML_DEPTH, MAX_YAML_NODES, bounded_yaml

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=10)


def nested(kind: str, depth: int, leaf: str) -> str:
    if kind == "flow-seq":
        return "a: " + "[" * depth + leaf + "]" * depth + "\n"
    if kind == "flow-map":
        return "a: " + "{k: " * depth + leaf + "}" * depth + "\n"
    return "- " * depth + leaf + "\n"


def bomb(levels: int, fanout: int) -> str:
    lines = ["a0: &a0 [" + ",".join(['"x"'] * fanout) + "]"]
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * fanout) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def expanded(levels: int, fanout: int) -> int:
    """Values the bomb holds once expanded (each level's list and its members)."""
    total, size = 1, fanout + 1  # the mapping; a0 is a list of ``fanout`` scalars
    for _ in range(levels - 1):
        total += size + 1  # the key, and the anchored value
        size = 1 + fanout * size
    return total + size + 1


def c_load(text: str) -> object:
    """``safe_load`` on libyaml's parser, which gpunode reads with (PyYAML's own scanner
    refuses some text libyaml reads: a tab inside a plain key)."""
    return yaml.load(text, Loader=yaml.CSafeLoader)


def check(text: str) -> object:
    """The loader's outcome: a value or a one-line refusal naming the file."""
    try:
        return bounded_yaml(text, "fuzz.yaml")
    except YamlRefused as exc:
        assert str(exc).startswith("fuzz.yaml: ") and "\n" not in str(exc)
        return exc
    except yaml.YAMLError as exc:
        return exc


@FUZZ
@given(kind=st.sampled_from(["flow-seq", "flow-map", "block-seq"]),
       depth=st.integers(min_value=1, max_value=200_000), leaf=st.sampled_from(["1", "x", "null"]))
def test_deep_yaml_is_refused_past_the_limit_and_equal_below(kind: str, depth: int, leaf: str) -> None:
    text = nested(kind, depth, leaf)
    outcome = check(text)
    if depth + 1 < MAX_YAML_DEPTH:
        assert repr(outcome) == repr(c_load(text))  # safe_load only where it survives
    elif depth > MAX_YAML_DEPTH:
        assert isinstance(outcome, YamlRefused) and "levels deep" in str(outcome)


@FUZZ
@given(levels=st.integers(min_value=1, max_value=12), fanout=st.integers(min_value=1, max_value=12))
def test_alias_fan_out_is_refused_past_the_limit(levels: int, fanout: int) -> None:
    outcome = check(bomb(levels, fanout))
    if expanded(levels, fanout) > MAX_YAML_NODES * 1.01:
        assert isinstance(outcome, YamlRefused) and "alias bomb" in str(outcome)
    elif expanded(levels, fanout) < MAX_YAML_NODES * 0.99:
        assert isinstance(outcome, dict) and len(outcome) == levels


@FUZZ
@given(doc=values, how=st.sampled_from(HOWS), at=st.integers(min_value=0), junk=st.binary(max_size=40))
def test_damaged_yaml_gives_safe_loads_values_or_an_error(doc: object, how: str, at: int,
                                                          junk: bytes) -> None:
    text = damage(yaml.safe_dump({"items": [doc]}).encode(), how, at, junk).decode(errors="replace")
    outcome = check(text)
    try:
        want: object = c_load(text)
    except yaml.YAMLError:
        assert isinstance(outcome, yaml.YAMLError | YamlRefused), outcome
        return
    assert repr(outcome) == repr(want) or isinstance(outcome, YamlRefused)


@FUZZ
@given(piece=st.sampled_from(["bomb", "deep", "values"]), doc=values,
       depth=st.integers(min_value=1, max_value=100_000))
def test_a_must_gather_of_hostile_yaml_converts_or_is_one_line(piece: str, doc: object, depth: int) -> None:
    text = bomb(9, 10) if piece == "bomb" else nested("flow-seq", depth, "1") if piece == "deep" \
        else yaml.safe_dump({"kind": "List", "items": [doc]})
    with tempfile.TemporaryDirectory() as tmp:
        mg = Path(tmp) / "mg"
        mg.mkdir()
        (mg / "gpu_operand_pods.yaml").write_text(text)
        try:
            convert_must_gather(mg, Path(tmp) / "out")
        except BundleError as exc:
            assert "gpu_operand_pods.yaml" in str(exc) and "\n" not in str(exc)


class _Endless:
    """An httpx2 response whose body never ends, in chunks of the given sizes."""

    status_code = 200

    def __init__(self, sizes: list[int]) -> None:
        self.sizes = sizes

    def iter_bytes(self) -> Iterator[bytes]:
        while True:
            for size in self.sizes:
                yield b"x" * size


@FUZZ
@given(sizes=st.lists(st.integers(min_value=0, max_value=1 << 16), min_size=1, max_size=5).filter(any),
       limit=st.integers(min_value=1, max_value=4 << 20))
def test_an_endless_body_is_cut_at_its_limit(sizes: list[int], limit: int) -> None:
    with pytest.raises(kube.BodyCut) as cut:
        kube._read_by(_Endless(sizes), float("inf"), 1.0, limit, "the answer to GET /metrics")  # type: ignore[arg-type]
    assert len(cut.value.head) == limit
    assert cut.value.message.startswith("the answer to GET /metrics: cut at ")


@FUZZ
@given(sizes=st.lists(st.integers(min_value=1, max_value=1 << 16), min_size=1, max_size=5),
       limit=st.integers(min_value=1, max_value=1 << 20))
def test_an_endless_exec_output_is_cut_at_its_limit(sizes: list[int], limit: int) -> None:
    sink = CappedSink(Capped(limit, "the output of dmesg"))
    with pytest.raises(OutputCut, match="the output of dmesg: cut at"):
        while True:
            for size in sizes:
                sink.write(b"y" * size)
    assert len(sink.capped.value()) == limit
