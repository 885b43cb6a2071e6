"""Real runtime configs in a probe host root: the node probe judges them as the bundle does.

The probe facts recorded on a real H200 get the host's runtime configs from the
probe's own collector run over a fake host root holding the real file at the path
its distribution uses, with that distribution's kubelet and containerd running.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from probe_check_helpers import component, host_files, judge, recorded, recorded_raw
from realfix import BAD, REAL, fixture_files
from test_real_healthy import DISTRIBUTIONS, crio_files

from gpunode.model import NodeReport, Status

# the process that runs the kubelet for each distribution (what the probe sees in /proc)
KUBELET_PROCESS = {"k3s": "k3s-agent", "rke2": "rke2", "microk8s": "kubelite"}


def _probe_report(tmp_path: Path, path: Path, runtime: str = "containerd") -> NodeReport:
    """The probe node's report with this config on its host."""
    flavour = path.name.split("-")[0]
    target = DISTRIBUTIONS.get(flavour, ("/etc/containerd/config.toml",))[0]
    placed = {target: path.read_text()} if runtime == "containerd" else crio_files(path)
    facts = recorded()
    host, raw = host_files(tmp_path, {p.lstrip("/"): text for p, text in placed.items()})
    facts["host"]["runtime_configs"] = host["runtime_configs"]
    for name in (KUBELET_PROCESS.get(flavour, "kubelet"), runtime):
        facts["host"]["processes"][name] = True
    facts["host"]["kubelet_registration_socket"] = True
    return judge(tmp_path, facts, raw={**recorded_raw(), **raw})


def _judge_config(
    tmp_path: Path, path: Path, runtime: str = "containerd"
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Root causes and failed/degraded components of the probe node holding this config."""
    report = _probe_report(tmp_path, path, runtime)
    causes = [(rc.component, rc.cause) for rc in report.root_causes]
    bad = [(c.component, c.status.value) for c in report.components if c.status in BAD]
    return causes, bad


@pytest.mark.parametrize("path", [pytest.param(p, id=p.name) for p in fixture_files("containerd")])
def test_healthy_config_in_probe_host_root(path: Path, tmp_path: Path) -> None:
    assert _judge_config(tmp_path, path) == ([], [])


@pytest.mark.parametrize("path", [pytest.param(p, id=p.name) for p in fixture_files("crio")])
def test_healthy_crio_drop_in_in_probe_host_root(path: Path, tmp_path: Path) -> None:
    assert _judge_config(tmp_path, path, "crio") == ([], [])
    toolkit = component(_probe_report(tmp_path / "again", path, "crio"), "container-toolkit")
    assert toolkit.status != Status.UNKNOWN, toolkit.summary


@pytest.mark.parametrize(
    "path", [pytest.param(p, id=p.name) for p in sorted((REAL / "broken" / "containerd").iterdir())]
)
def test_broken_config_in_probe_host_root(path: Path, tmp_path: Path) -> None:
    causes, _bad = _judge_config(tmp_path, path)
    assert ("container-toolkit", "containerd_not_patched") in causes


def test_containerd_2_tables_in_a_version_2_file_are_unknown_to_the_probe(tmp_path: Path) -> None:
    """AKS's file for containerd 2.x: only a containerd 2.x reads its runtimes, and the probe
    does not know the containerd version, so it says so instead of failing the node."""
    report = _probe_report(tmp_path, REAL / "containerd" / "aks-nodeconfig-gpu-containerd2.toml")
    toolkit = component(report, "container-toolkit")
    assert toolkit.status == Status.UNKNOWN
    assert "only some containerd versions read" in toolkit.summary
