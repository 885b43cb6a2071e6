"""Fuzzing: mutated bundles, node files, logs, configs and metrics never crash gpunode.

Each example copies a small real-shaped bundle, damages one file and diagnoses it.
The outcome is a report (exit 0/1) or a one-line GpunodeError naming the file
(exit 2) -- never another exception. Damaged node data is never fatal.

Bounded for CI (``FUZZ_EXAMPLES``, default 40 per target); a longer run:
``FUZZ_EXAMPLES=2000 .venv/bin/pytest tests/fuzz -q``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from fuzzdamage import HOWS, damage
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.errors import GpunodeError
from gpunode.model import Report, Status

MINI = Path(__file__).parents[1] / "live" / "fixtures" / "mini"
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])
CLUSTER_FILES = ["cluster/pods.json", "cluster/nodes.json", "cluster/daemonsets.json",
                 "cluster/events.json", "cluster/clusterpolicies.json", "cluster/version.json",
                 "manifest.json"]
NODE_FILES = ["nodes/gpu-wk-01/cmd/nvidia-smi-q.xml", "nodes/gpu-wk-01/cmd/dmesg.txt",
              "nodes/gpu-wk-01/cmd/lsmod.txt", "nodes/gpu-wk-01/files/etc/containerd/config.toml",
              "nodes/gpu-wk-01/metrics/dcgm-exporter.prom",
              "nodes/gpu-wk-01/files/proc/driver/nvidia/version",
              "logs/gpu-operator/nvidia-device-plugin-daemonset-z8c3x/nvidia-device-plugin.log"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8)


def _json_mutation(data: bytes, path: list[int], value: object) -> bytes:
    """Set one value somewhere in the JSON document to an arbitrary JSON value."""
    doc = json.loads(data)
    node = doc
    for step in path:
        children = list(node.items()) if isinstance(node, dict) else list(enumerate(node)) \
            if isinstance(node, list) else []
        if not children:
            break
        key, child = children[step % len(children)]
        if not isinstance(child, dict | list):
            node[key] = value
            return json.dumps(doc).encode()
        node = child
    if isinstance(node, dict):
        node["fuzz"] = value
    elif isinstance(node, list):
        node.append(value)
    return json.dumps(doc).encode()


def _diagnose_copy(rel: str, mutate: object) -> Report | GpunodeError:
    with tempfile.TemporaryDirectory() as tmp:
        bundle = Path(tmp) / "b"
        shutil.copytree(MINI, bundle)
        target = bundle / rel
        target.write_bytes(mutate(target.read_bytes()))  # type: ignore[operator]
        try:
            return diagnose(load_bundle(bundle), read_node_observations)
        except GpunodeError as exc:
            return exc


def _one_line_naming(error: GpunodeError, rel: str) -> None:
    text = str(error)
    assert "\n" not in text.strip(), text
    assert rel.rsplit("/", maxsplit=1)[-1] in text or "b:" in text or "/b" in text, text


@FUZZ
@given(rel=st.sampled_from(CLUSTER_FILES),
       how=st.sampled_from(HOWS),
       at=st.integers(min_value=0), junk=st.binary(max_size=40))
def test_damaged_cluster_files_give_a_report_or_one_line(rel: str, how: str, at: int, junk: bytes) -> None:
    outcome = _diagnose_copy(rel, lambda data: damage(data, how, at, junk))
    if isinstance(outcome, GpunodeError):
        assert outcome.exit_code == 2
        _one_line_naming(outcome, rel)


@FUZZ
@given(rel=st.sampled_from([r for r in CLUSTER_FILES if r != "cluster/version.json"]),
       path=st.lists(st.integers(min_value=0, max_value=50), max_size=6), value=json_values)
def test_mutated_cluster_objects_give_a_report_or_one_line(rel: str, path: list[int], value: object) -> None:
    outcome = _diagnose_copy(rel, lambda data: _json_mutation(data, path, value))
    if isinstance(outcome, GpunodeError):
        assert outcome.exit_code == 2
        _one_line_naming(outcome, rel)


@FUZZ
@given(rel=st.sampled_from(NODE_FILES), how=st.sampled_from(HOWS),
       at=st.integers(min_value=0), junk=st.binary(max_size=60))
def test_damaged_node_data_is_never_fatal(rel: str, how: str, at: int, junk: bytes) -> None:
    outcome = _diagnose_copy(rel, lambda data: damage(data, how, at, junk))
    assert isinstance(outcome, Report), outcome


@FUZZ
@given(junk=st.binary(min_size=1, max_size=200))
def test_garbage_nvidia_smi_never_makes_gpus_ok(junk: bytes) -> None:
    """With nvidia-smi -q -x replaced by garbage, GPU hardware is not judged ok from it."""
    outcome = _diagnose_copy("nodes/gpu-wk-01/cmd/nvidia-smi-q.xml", lambda _data: b"<" + junk)
    assert isinstance(outcome, Report)
    node = next(n for n in outcome.nodes if n.name == "gpu-wk-01")
    hardware = next(c for c in node.components if c.component == "gpu-hardware")
    assert hardware.status != Status.OK
