"""A runtime handler option set twice under names equal but for their letter case.

containerd decodes a handler's ``options`` table with Go's TOML decoders, which match a
field's name in any case and keep the last key (golang/go#11673 for encoding/json, whose
behaviour they follow: opencontainers/image-spec#1073). A second spelling written by the
runtime's installer overrides what the toolkit wrote, so the runtime's configuration is at
fault, not the toolkit's handler.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.model import NodeReport
from gpunode.parse.containerd import option_spellings, runtimes_defined
from gpunode.sim import build_bundle, load_scenario

NODE = "gpu-wk-01"
CONTAINERD = "etc/containerd/config.toml"

#: https://github.com/NVIDIA/gpu-operator/issues/1374 (trimmed): Kubespray's template adds
#: ``binaryName`` (and ``systemdCgroup``) in its own spelling under the toolkit's BinaryName.
GPU_OPERATOR_1374 = """version = 3
[plugins.'io.containerd.cri.v1.runtime'.containerd]
  default_runtime_name = 'nvidia'
  [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
    runtime_type = 'io.containerd.runc.v2'
  [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.nvidia]
    runtime_type = 'io.containerd.runc.v2'
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.nvidia.options]
      BinaryName = '/usr/local/nvidia/toolkit/nvidia-container-runtime'
      IoGid = 0
      binaryName = '/usr/local/bin/runc'
      systemdCgroup = true
"""

#: https://github.com/kubernetes-sigs/kubespray/issues/12167 ("In containerd this field is
#: `BinaryName`, but kubespray is use `binaryName`"), in config version 2: the options of
#: Kubespray's runtimes as its docs/containerd.md spells them (``binaryName``,
#: ``systemdCgroup``), rendered after the toolkit's handler options.
KUBESPRAY_12167_V2 = """version = 2
[plugins."io.containerd.grpc.v1.cri".containerd]
  default_runtime_name = "nvidia"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
    runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
      BinaryName = "/usr/bin/nvidia-container-runtime"
      binaryName = "/usr/local/bin/runc"
"""

#: containerd's own default options spelling (containerd/containerd#12101: ``SystemdCgroup``)
#: and Kubespray's defaults (``systemdCgroup: "false"``, roles/container-engine/containerd
#: defaults) in one runc table: the later, lower-case key turns the systemd driver off.
SYSTEMD_CGROUP_TWICE = """version = 2
[plugins."io.containerd.grpc.v1.cri".containerd]
  default_runtime_name = "nvidia"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
      SystemdCgroup = true
      systemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
    runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
      BinaryName = "/usr/bin/nvidia-container-runtime"
"""

#: Look-alikes: containerd's default options table in one spelling (containerd/containerd#12101)
#: with the NVIDIA handler beside it, and both spellings agreeing on the value.
ONE_SPELLING = """version = 2
[plugins."io.containerd.grpc.v1.cri".containerd]
  default_runtime_name = "nvidia"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
      BinaryName = ""
      CriuImagePath = ""
      IoGid = 0
      NoNewKeyring = false
      Root = ""
      ShimCgroup = ""
      SystemdCgroup = true
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
    runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
      BinaryName = "/usr/bin/nvidia-container-runtime"
      SystemdCgroup = true
"""
AGREEING = KUBESPRAY_12167_V2.replace('binaryName = "/usr/local/bin/runc"',
                                      'binaryName = "/usr/bin/nvidia-container-runtime"')


def test_the_later_spelling_is_found_with_the_value_that_wins() -> None:
    [clash] = option_spellings("/etc/containerd/config.toml", GPU_OPERATOR_1374)
    assert (clash.runtime, clash.first, clash.last, clash.value) == (
        "nvidia", "BinaryName", "binaryName", "/usr/local/bin/runc")
    [cgroup] = option_spellings("/etc/containerd/config.toml", SYSTEMD_CGROUP_TWICE)
    assert (cgroup.runtime, cgroup.first, cgroup.last) == ("runc", "SystemdCgroup", "systemdCgroup")


@pytest.mark.parametrize("text", [ONE_SPELLING, AGREEING], ids=["one-spelling", "same-value"])
def test_one_spelling_or_one_value_is_no_clash(text: str) -> None:
    assert option_spellings("/etc/containerd/config.toml", text) == []


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_bundle(load_scenario("falcon-ai"), tmp_path_factory.mktemp("spell") / "falcon")


def _node(healthy: Path, tmp_path: Path, text: str, runtime: str | None = None) -> NodeReport:
    """The healthy bundle with ``text`` as the node's only containerd config."""
    root = tmp_path / "b"
    shutil.copytree(healthy, root)
    files = root / "nodes" / NODE / "files"
    shutil.rmtree(files / "etc/containerd")
    (files / CONTAINERD).parent.mkdir(parents=True)
    (files / CONTAINERD).write_text(text)
    if runtime is not None:
        nodes = root / "cluster" / "nodes.json"
        nodes.write_text(nodes.read_text().replace('"containerd://1.7', f'"containerd://{runtime}'))
    report = diagnose(load_bundle(root), read_node_observations)
    return next(n for n in report.nodes if n.name == NODE)


@pytest.mark.parametrize(
    ("text", "runtime", "line"),
    [
        (GPU_OPERATOR_1374, "2.0.2", "binaryName = '/usr/local/bin/runc'"),
        (KUBESPRAY_12167_V2, None, 'binaryName = "/usr/local/bin/runc"'),
        (SYSTEMD_CGROUP_TWICE, None, "systemdCgroup = false"),
    ],
    ids=["gpu-operator-1374", "kubespray-12167", "systemd-cgroup"],
)
def test_the_runtime_config_is_at_fault(healthy: Path, tmp_path: Path, text: str, runtime: str | None,
                                        line: str) -> None:
    node = _node(healthy, tmp_path, text, runtime)
    assert [(r.component, r.cause) for r in node.root_causes][:1] == [
        ("container-runtime", "error_config_invalid")]
    assert node.root_causes[0].decisive is not None
    assert node.root_causes[0].decisive.line == line


@pytest.mark.parametrize("text", [ONE_SPELLING, AGREEING], ids=["one-spelling", "same-value"])
def test_look_alikes_stay_healthy(healthy: Path, tmp_path: Path, text: str) -> None:
    node = _node(healthy, tmp_path, text)
    assert node.root_causes == ()


#: Kubespray's own spelling alone (docs/containerd.md: ``binaryName`` under a runtime's
#: options, here the NVIDIA runtime added through containerd_additional_runtimes): containerd
#: runs the NVIDIA runtime for that handler, so it is the NVIDIA handler.
KUBESPRAY_SPELLING_ALONE = KUBESPRAY_12167_V2.replace(
    '      BinaryName = "/usr/bin/nvidia-container-runtime"\n', "").replace(
    'binaryName = "/usr/local/bin/runc"', 'binaryName = "/usr/bin/nvidia-container-runtime"')


def test_the_handler_runs_what_its_last_spelling_names() -> None:
    handlers = runtimes_defined("/etc/containerd/config.toml", GPU_OPERATOR_1374)
    assert handlers["nvidia"].binary_name == "/usr/local/bin/runc"
    alone = runtimes_defined("/etc/containerd/config.toml", KUBESPRAY_SPELLING_ALONE)
    assert alone["nvidia"].binary_name == "/usr/bin/nvidia-container-runtime"


def test_a_handler_in_the_installers_spelling_stays_healthy(healthy: Path, tmp_path: Path) -> None:
    node = _node(healthy, tmp_path, KUBESPRAY_SPELLING_ALONE)
    assert node.root_causes == ()


def test_the_text_gate_lets_every_spelling_clash_through_and_spares_the_rest() -> None:
    """The scan that spares a second parse on nodes whose config cannot clash must pass any
    file where two keys (bare, quoted or dotted) fold onto one name."""
    from gpunode.checks.host import _may_clash

    assert _may_clash('[a]\n  BinaryName = "x"\n  binaryName = "y"\n')
    assert _may_clash('options.BinaryName = "x"\noptions."binaryName" = "y"\n')
    assert not _may_clash('[a]\n  BinaryName = "x"\n[b]\n  BinaryName = "y"\n  SystemdCgroup = true\n')
