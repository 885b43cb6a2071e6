"""CRI-O with OCI hooks is judged by its hooks: the toolkit's real oci-nvidia-hook.json on a
CRI-O node whose config names no NVIDIA runtime handler is a healthy toolkit setup, in a
bundle and through the probe; a hook whose binary is gone, a hook file CRI-O cannot read
and a node with neither hook nor handler are toolkit failures with their own cause."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from probe_check_helpers import component, host_files, judge, recorded, recorded_raw, root_causes
from realfix import REAL, Placed, assert_healthy, new_bundle, set_node_info

from gpunode.model import NodeReport, Status
from gpunode.sim import build_bundle, load_scenario

HOOK = REAL / "crio" / "hooks.d" / "oci-nvidia-hook.json"
# OpenShift's own CRI-O base drop-in: crun only, hooks_dir lists the three hook directories
OPENSHIFT_BASE = REAL / "crio" / "openshift-mco-worker-00-default"
BASE_TARGET = "etc/crio/crio.conf.d/00-default"
HOOK_TARGET = "usr/share/containers/oci/hooks.d/oci-nvidia-hook.json"
BINARY = "usr/bin/nvidia-container-toolkit"


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_bundle(load_scenario("falcon-ai"), tmp_path_factory.mktemp("falcon") / "bundle")


def _crio_node(healthy: Path, tmp_path: Path, files: dict[str, str]) -> Placed:
    """A CRI-O node: no containerd config, OpenShift's base drop-in, ``files`` beside it."""
    placed = new_bundle(healthy, tmp_path / "b")
    node_files = placed.node_dir() / "files"
    shutil.rmtree(node_files / "etc" / "containerd", ignore_errors=True)
    for rel, text in {BASE_TARGET: OPENSHIFT_BASE.read_text(), **files}.items():
        dest = node_files / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text)
    set_node_info(placed, containerRuntimeVersion="cri-o://1.31.3")
    _without_runtime_class(placed)
    return placed


def _without_runtime_class(placed: Placed) -> None:
    """In hook mode no pod names the nvidia RuntimeClass: CRI-O has no such handler."""
    path = placed.root / "cluster" / "pods.json"
    pods = json.loads(path.read_text())
    for pod in pods["items"]:
        pod["spec"].pop("runtimeClassName", None)
    path.write_text(json.dumps(pods))


def _toolkit(report: NodeReport) -> tuple[Status, str]:
    found = component(report, "container-toolkit")
    return found.status, found.summary


# ---------------------------------------------------------------- bundle node files


def test_real_hook_on_a_crio_node_without_a_handler_is_healthy(healthy: Path, tmp_path: Path) -> None:
    report = _crio_node(healthy, tmp_path, {HOOK_TARGET: HOOK.read_text()}).report()
    assert_healthy(report)
    status, summary = _toolkit(report)
    assert status == Status.OK and "OCI hook" in summary, summary


@pytest.mark.parametrize("directory", ["etc/containers/oci/hooks.d", "run/containers/oci/hooks.d"])
def test_hook_in_any_directory_hooks_dir_lists(healthy: Path, tmp_path: Path, directory: str) -> None:
    report = _crio_node(healthy, tmp_path, {f"{directory}/oci-nvidia-hook.json": HOOK.read_text()}).report()
    assert_healthy(report)


def test_malformed_hook_file_is_named(healthy: Path, tmp_path: Path) -> None:
    broken = HOOK.read_text().replace('"stages"', '"stage"')
    report = _crio_node(healthy, tmp_path, {HOOK_TARGET: broken}).report()
    assert ("container-toolkit", "oci_hook_invalid") in root_causes(report)
    assert _toolkit(report)[0] != Status.OK
    rc = next(r for r in report.root_causes if r.cause == "oci_hook_invalid")
    assert any(f"/{HOOK_TARGET}: missing required property stages" in e.excerpt for e in rc.evidence)


def test_no_hook_files_and_no_probe_is_no_alarm(healthy: Path, tmp_path: Path) -> None:
    """Nothing read the hook directories: absent data is unknown, never failed (the
    toolkit pod's own validation marker still says OK)."""
    assert_healthy(_crio_node(healthy, tmp_path, {}).report())


# ---------------------------------------------------------------- the probe on a CRI-O host


def _probe_report(tmp_path: Path, files: dict[str, str]) -> NodeReport:
    facts = recorded()
    host, raw = host_files(tmp_path, {BASE_TARGET: OPENSHIFT_BASE.read_text(), **files})
    for key in ("runtime_configs", "oci_hooks", "oci_hook_dirs"):
        facts["host"][key] = host[key]
    facts["host"]["processes"].update(kubelet=True, crio=True)
    facts["host"]["kubelet_registration_socket"] = True
    return judge(tmp_path, facts, raw={**recorded_raw(), **raw})


def test_probe_real_hook_with_its_binary_is_healthy(tmp_path: Path) -> None:
    report = _probe_report(tmp_path, {HOOK_TARGET: HOOK.read_text(), BINARY: "#!/bin/sh\n"})
    assert root_causes(report) == []
    status, summary = _toolkit(report)
    assert status == Status.OK and "OCI hook" in summary, summary


def test_probe_hook_whose_binary_is_gone(tmp_path: Path) -> None:
    report = _probe_report(tmp_path, {HOOK_TARGET: HOOK.read_text()})
    assert ("container-toolkit", "oci_hook_binary_missing") in root_causes(report)


def test_probe_no_hook_and_no_handler(tmp_path: Path) -> None:
    report = _probe_report(tmp_path, {})
    assert ("container-toolkit", "crio_no_nvidia_runtime_or_hook") in root_causes(report)


def test_probe_hook_only_at_poststop_is_no_gpu_hook(tmp_path: Path) -> None:
    late = HOOK.read_text().replace('"stages": ["prestart"]', '"stages": ["poststop"]')
    report = _probe_report(tmp_path, {HOOK_TARGET: late, BINARY: "#!/bin/sh\n"})
    assert ("container-toolkit", "crio_no_nvidia_runtime_or_hook") in root_causes(report)
