"""Collect only what is read (issue 22): the projection keeps every field a check reads.

The projection is derived from the slim Structs the loader decodes into (bundle/kube.py)
plus the paths declared beside them for open mappings; if a check read a field the
projection drops, a projected bundle would give another report. So every scenario and
fixture bundle of the reference reports is projected as ``collect`` would write it and
its diagnose and validate JSON must be the same, byte for byte. The fast projection (a
Struct made from the shape) and the reference one (``apply`` over decoded JSON) agree on
every item.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest
from projecting import project_bundle

from gpunode.bundle import kube, projection
from gpunode.bundle.load import RESOURCES
from gpunode.bundle.projection import NOT_COLLECTED, SHAPES, apply, path_shape, project, project_item

MAKE = Path(__file__).parents[1] / "golden" / "reports" / "make.py"


def _maker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("golden_reports_make_projection", MAKE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


MAKER = _maker()


def _copy(bundle: Path, dest: Path) -> Path:
    shutil.copytree(bundle, dest)
    return dest


#: The reference cases ``make check`` projects (a broken driver, an NVLink domain's objects, the
#: hand-made kubectl-shaped bundle); ``make test`` projects every one.
QUICK = frozenset({"falcon-ai-broken", "nvl-domain-tray-out", "fixture:handmade"})


@pytest.mark.parametrize("case", [pytest.param(c, marks=[] if c in QUICK else [pytest.mark.slow])
                                  for c in MAKER.cases()])
def test_projected_bundle_gives_the_same_reports(case: str, tmp_path: Path) -> None:
    original = MAKER.bundle_for(case, tmp_path / "built")
    projected = _copy(original, tmp_path / "projected")
    project_bundle(projected)
    mine = MAKER.reports(projected)
    # the original's reports are the recorded reference (tests/core/test_reports_unchanged.py
    # holds them to it); they are made again only where the projected ones differ from it
    if mine != MAKER.golden_path(case).read_bytes():
        assert mine == MAKER.reports(original), \
            f"{case}: a field the checks read is not in the projection (bundle/kube.py READ_*)"
    _fast_equals_reference(original)


def _fast_equals_reference(bundle: Path) -> None:
    for path in sorted((bundle / "cluster").glob("*.json")):
        if path.stem not in RESOURCES:
            continue
        decoder = msgspec.json.Decoder(RESOURCES[path.stem])
        for item in json.loads(path.read_text()).get("items") or []:
            fast = project_item(path.stem, json.dumps(item).encode())
            reference = msgspec.json.encode(project(path.stem, item))
            assert decoder.decode(fast) == decoder.decode(reference), (path.name, item["metadata"])


def test_every_struct_field_is_in_the_projection() -> None:
    """Derived, so a field added to a Struct is collected from then on."""
    for stem, cls in RESOURCES.items():
        _covers(cls, SHAPES[stem], stem)


def _covers(cls: type[msgspec.Struct], shape: Any, where: str) -> None:
    for field in msgspec.structs.fields(cls):
        assert field.encode_name in shape, f"{where}.{field.encode_name}"
        sub = shape[field.encode_name]
        inner = _struct_in(field.type)
        if inner is not None and sub is not None:
            _covers(inner, sub, f"{where}.{field.encode_name}")


def _struct_in(t: Any) -> type[msgspec.Struct] | None:
    import typing

    if isinstance(t, type) and issubclass(t, msgspec.Struct):
        return t
    for arg in typing.get_args(t):
        found = _struct_in(arg)
        if found is not None:
            return found
    return None


def test_what_is_not_read_is_not_kept() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "p", "namespace": "n", "annotations": {"team/db-url": "s3cr3t"},
                        "labels": {"app": "x"}, "managedFields": [{"manager": "kubectl"}]},
           "spec": {"nodeName": "gpu-1", "containers": [{
               "name": "c", "image": "i", "args": ["--anything=s3cr3t"], "command": ["sh", "-c", "x"],
               "env": [{"name": "UNKNOWN", "value": "s3cr3t"}],
               "livenessProbe": {"exec": {"command": ["s3cr3t"]}}}]},
           "status": {"phase": "Running"}}
    out = json.loads(project_item("pods", json.dumps(pod).encode()))
    assert "s3cr3t" not in json.dumps(out)
    assert out["spec"]["containers"] == [{"name": "c", "image": "i"}]
    assert out["metadata"] == {"name": "p", "namespace": "n", "labels": {"app": "x"}}
    policy = {"metadata": {"name": "cluster-policy"}, "spec": {
        "driver": {"enabled": True, "repoConfig": {"configMapName": "s3cr3t"}, "rdma": {"enabled": True},
                   "env": [{"name": "X", "value": "s3cr3t"}]},
        "toolkit": {"enabled": False, "installDir": "/usr/local/nvidia"},
        "devicePlugin": {"config": {"name": "plugin-config", "default": "any"}}}}
    spec = json.loads(project_item("clusterpolicies", json.dumps(policy).encode()))["spec"]
    assert spec == {"driver": {"enabled": True, "rdma": {"enabled": True}}, "toolkit": {"enabled": False},
                    "devicePlugin": {"config": {"name": "plugin-config", "default": "any"}}}


def test_a_malformed_item_stays_malformed() -> None:
    """The loader skips (and names) a malformed item: projected, it is still skipped."""
    bad = {"metadata": {"name": "p"}, "spec": "s3cr3t", "status": {"phase": 3}}
    out = json.loads(project_item("pods", json.dumps(bad).encode()))
    assert out["spec"] == NOT_COLLECTED and out["status"]["phase"] == 3
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(json.dumps(out), type=kube.Pod)


def test_paths() -> None:
    shape = path_shape(("*.enabled", "devicePlugin.config.name", "ofedDriver.{}"))
    doc = {"a": {"enabled": 1, "x": 2}, "devicePlugin": {"enabled": 0, "config": {"name": "n", "k": 1}},
           "ofedDriver": {"image": "i"}, "s": "t"}
    assert apply(doc, shape) == {"a": {"enabled": 1}, "devicePlugin": {"enabled": 0, "config": {"name": "n"}},
                                 "ofedDriver": {}, "s": NOT_COLLECTED}
    assert projection.UNREAD["metadata"]["labels"] is None  # type: ignore[index]


def test_the_documented_projection_is_the_projection() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "bundle-format.md").read_text()
    for stem, kept in projection.documented().items():
        assert f"| `{stem}` | {kept} |" in doc, f"docs/bundle-format.md: {stem}: {kept}"
