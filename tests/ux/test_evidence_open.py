"""Every evidence reference can be opened: from a bundle, a path in that bundle that exists
(every scenario, diagnose and validate); live, the kubectl command that shows it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpunode.bundle.source import open_bundle
from gpunode.commands.diagnosis import build_report
from gpunode.model import Evidence
from gpunode.report.openref import bundle_path, exists_in, live_command
from gpunode.sim import build_bundle, list_scenarios, load_scenario
from inprocess import run_cli

GPUNODE = str(Path(sys.executable).parent / "gpunode")
SCENARIOS = [name for name, _ in list_scenarios() if name != "scale-5000"]
KUBECTL = re.compile(r"^kubectl (logs|describe|get|debug|cluster-info|version)\b")


def _evidence(value: object) -> Iterator[dict[str, str | None]]:
    if isinstance(value, dict):
        if {"source", "excerpt"} <= value.keys():
            yield value
        for item in value.values():
            yield from _evidence(item)
    elif isinstance(value, list):
        for item in value:
            yield from _evidence(item)


#: The scenarios ``make check`` opens the evidence of; ``make test`` opens every one's.
QUICK = frozenset({"falcon-ai-broken", "nvl-domain-tray-out"})


@pytest.mark.parametrize("scenario", [pytest.param(n, marks=[] if n in QUICK else [pytest.mark.slow])
                                      for n in SCENARIOS])
def test_every_evidence_path_exists_in_its_bundle(scenario: str, tmp_path: Path) -> None:
    import msgspec

    bundle = build_bundle(load_scenario(scenario), tmp_path / "b")
    report = msgspec.to_builtins(build_report(bundle, None))
    for ev in _evidence(report):
        assert ev["open"] is not None, ev["source"]
        assert (bundle / ev["open"]).exists(), (ev["source"], ev["open"])


def test_validate_evidence_opens_in_the_bundle_through_the_console_script(tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    subprocess.run([GPUNODE, "sim", "falcon-ai-broken", "-o", str(bundle)], check=True, capture_output=True)
    done = subprocess.run([GPUNODE, "validate", "--from", str(bundle), "-o", "json"],
                          check=False, capture_output=True, text=True, timeout=120)
    found = list(_evidence(json.loads(done.stdout)))
    assert found
    for ev in found:
        opened = ev["open"]
        assert opened is not None, ev["source"]
        if opened.startswith("gpunode diagnose"):  # the stack check: the command on this bundle
            assert opened.endswith(f"--from {bundle}")
        else:
            assert (bundle / opened).exists(), (ev["source"], opened)


@pytest.mark.parametrize("scenario", ["falcon-ai-broken", "fault-driver-library-mismatch"])
def test_live_evidence_is_the_kubectl_command_that_shows_it(scenario: str) -> None:
    done = run_cli("demo", "--live", "--scenario", scenario, "-o", "json")
    assert done.returncode == 1, done.stderr
    found = list(_evidence(json.loads(done.stdout)))
    assert found
    for ev in found:
        assert ev["open"] is not None and KUBECTL.match(ev["open"]), ev
    table = run_cli("demo", "--live", "--scenario", scenario)
    assert "open: kubectl " in table.stdout


@pytest.mark.parametrize(("source", "command"), [
    ("logs/gpu-operator/nvidia-driver-daemonset-x/nvidia-driver-ctr.log:22",
     "kubectl logs -n gpu-operator nvidia-driver-daemonset-x -c nvidia-driver-ctr"),
    ("logs/gpu-operator/dcgm-x/nvidia-dcgm-exporter.previous.log:3",
     "kubectl logs -n gpu-operator dcgm-x -c nvidia-dcgm-exporter --previous"),
    ("pod gpu-operator/gfd-x status.containerStatuses[gfd]", "kubectl describe pod -n gpu-operator gfd-x"),
    ("node/gpu-wk-02 status.conditions[Ready]", "kubectl describe node gpu-wk-02"),
    ("event pod gpu-operator/gfd-x reason=FailedCreatePodSandBox count=255",
     "kubectl get events -n gpu-operator --field-selector involvedObject.name=gfd-x"),
    ("nodes/gpu-wk-02/cmd/nvidia-smi-q.xml:1295",
     "kubectl debug node/gpu-wk-02 -it --profile=sysadmin --image=busybox -- chroot /host nvidia-smi -q -x"),
    ("nodes/gpu-wk-02/files/etc/containerd/config.toml",
     "kubectl debug node/gpu-wk-02 -it --profile=sysadmin --image=busybox -- chroot /host "
     "cat /etc/containerd/config.toml"),
    ("nicclusterpolicy/nic-cluster-policy status.state",
     "kubectl get nicclusterpolicies.mellanox.com nic-cluster-policy -o yaml"),
    ("cluster/storageclasses.json", "kubectl get storageclasses -o yaml"),
    ("cluster/pods.json", "kubectl get pods -A -o yaml"),
    ("two scrapes of dcgm-exporter on gpu-wk-01",
     "kubectl debug node/gpu-wk-01 -it --image=busybox -- wget -qO- localhost:9400/metrics"),
    ("something no rule knows", None),
])
def test_live_commands(source: str, command: str | None) -> None:
    assert live_command(source, {}) == command


def test_a_missing_file_opens_the_nearest_folder_that_exists(tmp_path: Path) -> None:
    (tmp_path / "nodes" / "n1" / "cmd").mkdir(parents=True)
    (tmp_path / "nodes" / "n1" / "cmd" / "dmesg.txt").write_text("x\n")
    (tmp_path / "manifest.json").write_text("{}")
    exists = exists_in(open_bundle(tmp_path))
    assert bundle_path("nodes/n1/cmd/nvidia-smi-q.xml", exists) == "nodes/n1/cmd/"
    assert bundle_path("nodes/n1/cmd/dmesg.txt:4", exists) == "nodes/n1/cmd/dmesg.txt"
    assert bundle_path("nodes/n2/cmd/dmesg.txt", exists) == "nodes/"
    assert Evidence("a", "b").open is None
