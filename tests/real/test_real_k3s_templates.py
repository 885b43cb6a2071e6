"""k3s/RKE2 containerd templates judged on a GPU node (tests/fixtures/real/containerd).

k3s renders config.toml from config.toml.tmpl at start, adding the NVIDIA runtimes it finds
on the host where the template renders its base or ranges over ``.ExtraRuntimes``; read
without the rendered file, such a template's missing NVIDIA runtime is not known to be
missing. A template that writes every table itself is judged like any containerd config.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from realfix import REAL, assert_healthy, new_bundle, set_node_info

from gpunode.model import NodeReport
from gpunode.sim import build_bundle, load_scenario

TEMPLATE = "var/lib/rancher/k3s/agent/etc/containerd/config.toml.tmpl"
K3S_BASE_COPY = (REAL / "containerd" / "k3s-config.toml.tmpl").read_text()


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_bundle(load_scenario("falcon-ai"), tmp_path_factory.mktemp("falcon") / "bundle")


def _report_with_template(healthy: Path, dest: Path, text: str, drop: str = "") -> NodeReport:
    """The healthy bundle with ``text`` as the k3s node's only containerd config (and the
    cluster list ``drop`` emptied)."""
    placed = new_bundle(healthy, dest)
    if drop:
        listed = dest / "cluster" / drop
        listed.write_text(json.dumps({**json.loads(listed.read_text()), "items": []}))
    files = placed.node_dir() / "files"
    for old in (files / "etc" / "containerd").glob("**/*"):
        if old.is_file():
            old.unlink()
    (files / TEMPLATE).parent.mkdir(parents=True, exist_ok=True)
    (files / TEMPLATE).write_text(text)
    set_node_info(placed, kubeletVersion="v1.31.4+k3s1", containerRuntimeVersion="containerd://1.7.23-k3s1")
    return placed.report()


def test_a_base_copy_without_a_literal_nvidia_runtime_is_not_called_unpatched(
    healthy: Path, tmp_path: Path
) -> None:
    text = K3S_BASE_COPY.replace('  default_runtime_name = "nvidia"\n', "")
    assert_healthy(_report_with_template(healthy, tmp_path / "b", text))


def test_a_template_writing_every_runtime_itself_without_nvidia_is_unpatched(
    healthy: Path, tmp_path: Path
) -> None:
    own_tables = K3S_BASE_COPY[: K3S_BASE_COPY.index("{{range $k, $v := .ExtraRuntimes}}")]
    classes = healthy / "cluster" / "runtimeclasses.json"  # no pod proves which config runs
    report = _report_with_template(healthy, tmp_path / "b", own_tables, drop=classes.name)
    causes = [(rc.component, rc.cause) for rc in report.root_causes]
    assert ("container-toolkit", "containerd_not_patched") in causes, causes
