"""Runtime configs as the runtime reads them: an NVIDIA runtime is recognised by the
binary it runs, whatever it is called; Docker nodes are judged by daemon.json; a
config that does not parse is shown as evidence, never dropped."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.model import ComponentReport, NodeReport, Status
from gpunode.parse.containerd import parse_containerd_config
from gpunode.parse.runtime_handler import RuntimeHandler
from gpunode.runtimes import is_nvidia_runtime
from gpunode.sim import build_bundle, load_scenario

NODE = "gpu-wk-01"
CONTAINERD = "etc/containerd/config.toml"

AKS_V2 = """version = 2
oom_score = 0
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "mcr.microsoft.com/oss/kubernetes/pause:3.6"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "nvidia-container-runtime"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia-container-runtime]
      runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia-container-runtime.options]
      BinaryName = "/usr/bin/nvidia-container-runtime"
      SystemdCgroup = true
"""

MICROK8S_TEMPLATE = """version = 2
[plugins."io.containerd.grpc.v1.cri".containerd]
  snapshotter = "${SNAPSHOTTER}"
  default_runtime_name = "${RUNTIME}"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia-container-runtime]
    runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia-container-runtime.options]
      BinaryName = "nvidia-container-runtime"
"""

LEGACY_V1_OPTIONS_RUNTIME = """[plugins.cri.containerd]
  snapshotter = "overlayfs"
  [plugins.cri.containerd.default_runtime]
    runtime_type = "io.containerd.runtime.v1.linux"
    [plugins.cri.containerd.default_runtime.options]
      Runtime = "/usr/bin/nvidia-container-runtime"
"""

LEGACY_V1_LINUX_PLUGIN = """[plugins.linux]
  runtime = "nvidia-container-runtime"
[plugins.cri.containerd.default_runtime]
  runtime_type = "io.containerd.runtime.v1.linux"
"""

V3_CDI_ONLY = """version = 3
[plugins."io.containerd.cri.v1.runtime".containerd]
  default_runtime_name = "gpu"
  [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.gpu]
    runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.gpu.options]
      BinaryName = "/opt/nvidia/toolkit/nvidia-container-runtime.cdi"
"""

UNPATCHED_V2 = """version = 2
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
"""

DOCKER_PATCHED = json.dumps(
    {
        "default-runtime": "nvidia",
        "runtimes": {"nvidia": {"path": "nvidia-container-runtime", "runtimeArgs": []}},
    }
)


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_bundle(load_scenario("falcon-ai"), tmp_path_factory.mktemp("rt") / "falcon")


def _bundle(healthy: Path, tmp_path: Path, files: dict[str, str | None]) -> Path:
    """The healthy bundle with node files replaced (None removes one)."""
    root = tmp_path / "b"
    shutil.copytree(healthy, root)
    node_files = root / "nodes" / NODE / "files"
    shutil.rmtree(node_files / "etc/containerd")
    for rel, text in files.items():
        path = node_files / rel
        if text is None:
            path.unlink(missing_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _set_handler(root: Path, handler: str) -> None:
    """RuntimeClass nvidia points at ``handler`` (as AKS and MicroK8s name it)."""
    path = root / "cluster" / "runtimeclasses.json"
    doc = json.loads(path.read_text())
    for item in doc["items"]:
        if item["metadata"]["name"] == "nvidia":
            item["handler"] = handler
    path.write_text(json.dumps(doc))


def _set_runtime_version(root: Path, version: str) -> None:
    path = root / "cluster" / "nodes.json"
    doc = json.loads(path.read_text())
    for item in doc["items"]:
        if item["metadata"]["name"] == NODE:
            item["status"]["nodeInfo"]["containerRuntimeVersion"] = version
    path.write_text(json.dumps(doc))


def _node(root: Path) -> NodeReport:
    report = diagnose(load_bundle(root), read_node_observations)
    return next(n for n in report.nodes if n.name == NODE)


def _toolkit(node: NodeReport) -> ComponentReport:
    return next(c for c in node.components if c.component == "container-toolkit")


@pytest.mark.parametrize(
    ("text", "handler"),
    [
        (AKS_V2, "nvidia-container-runtime"),
        (MICROK8S_TEMPLATE, "nvidia-container-runtime"),
        (LEGACY_V1_OPTIONS_RUNTIME, "default_runtime"),
        (LEGACY_V1_LINUX_PLUGIN, "default_runtime"),
        (V3_CDI_ONLY, "gpu"),
    ],
    ids=["aks", "microk8s-template", "v1-options-runtime", "v1-linux-plugin", "v3-cdi-any-name"],
)
def test_nvidia_runtime_recognised_by_its_binary(
    healthy: Path, tmp_path: Path, text: str, handler: str
) -> None:
    root = _bundle(healthy, tmp_path, {CONTAINERD: text})
    _set_handler(root, handler)
    if "version = 3" in text:
        _set_runtime_version(root, "containerd://2.0.2")
    node = _node(root)
    assert node.root_causes == ()
    assert _toolkit(node).status == Status.OK, _toolkit(node).summary


def test_unpatched_config_is_still_a_root_cause(healthy: Path, tmp_path: Path) -> None:
    root = _bundle(healthy, tmp_path, {CONTAINERD: UNPATCHED_V2})
    _set_handler(root, "")  # no RuntimeClass handler to prove anything
    node = _node(root)
    assert [(r.component, r.cause) for r in node.root_causes] == [
        ("container-toolkit", "containerd_not_patched")
    ]


def test_config_lacking_a_handler_running_pods_use_is_not_judged(healthy: Path, tmp_path: Path) -> None:
    """Running pods with RuntimeClass nvidia prove containerd loaded that handler."""
    node = _node(_bundle(healthy, tmp_path, {CONTAINERD: UNPATCHED_V2}))
    assert node.root_causes == ()
    assert _toolkit(node).status == Status.OK


@pytest.mark.parametrize(
    ("name", "binary", "expected"),
    [
        ("nvidia", "/usr/local/nvidia/toolkit/nvidia-container-runtime", True),
        ("anything", "/usr/bin/nvidia-container-runtime.legacy", True),
        ("nvidia", "/usr/bin/runc", False),
        ("runc", None, False),
        ("nvidia", None, True),
    ],
)
def test_nvidia_runtime_is_the_binary_not_the_name(name: str, binary: str | None, expected: bool) -> None:
    handler = RuntimeHandler(name=name, runtime_type="io.containerd.runc.v2", binary_name=binary)
    assert is_nvidia_runtime(handler) is expected


def test_invalid_toml_is_evidence(healthy: Path, tmp_path: Path) -> None:
    """A host-installed toolkit (no pod, no marker) with a config that does not parse, on a node
    whose runtime runs: the copy in the bundle may be damaged, so nothing is judged from it."""
    files = {CONTAINERD: "version = 2\n[plugins\n", "run/nvidia/validations/toolkit-ready": None}
    root = _bundle(healthy, tmp_path, files)
    for resource in ("pods", "daemonsets"):
        path = root / "cluster" / f"{resource}.json"
        doc = json.loads(path.read_text())
        doc["items"] = [
            i for i in doc["items"] if not i["metadata"]["name"].startswith("nvidia-container-tool")
        ]
        path.write_text(json.dumps(doc))
    node = _node(root)
    toolkit = _toolkit(node)
    assert node.root_causes == ()
    assert toolkit.status == Status.UNKNOWN
    assert "could not be read" in toolkit.summary and "invalid TOML" in toolkit.summary


def test_docker_node_is_judged_by_daemon_json(healthy: Path, tmp_path: Path) -> None:
    """A stale unpatched containerd config on a Docker node does not matter."""
    files = {CONTAINERD: UNPATCHED_V2, "etc/docker/daemon.json": DOCKER_PATCHED}
    root = _bundle(healthy, tmp_path, files)
    _set_runtime_version(root, "docker://24.0.7")
    _set_handler(root, "docker-has-no-handlers")
    node = _node(root)
    assert node.root_causes == ()
    toolkit = _toolkit(node)
    assert toolkit.status == Status.OK and toolkit.summary.startswith("docker patched")


def test_docker_without_nvidia_runtime(healthy: Path, tmp_path: Path) -> None:
    root = _bundle(healthy, tmp_path, {"etc/docker/daemon.json": '{"log-driver": "json-file"}'})
    _set_runtime_version(root, "docker://24.0.7")
    node = _node(root)
    assert [(r.component, r.cause) for r in node.root_causes] == [
        ("container-toolkit", "containerd_not_patched")
    ]


V2_FILE_V3_TABLES = """version = 2
[plugins."io.containerd.cri.v1.runtime".containerd]
  default_runtime_name = "nvidia-container-runtime"
  [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.nvidia-container-runtime.options]
    BinaryName = "/usr/bin/nvidia-container-runtime"
"""


def test_containerd2_reads_its_table_names_in_a_version_2_file() -> None:
    """AKS writes version 2 files with 2.x table names; only containerd 2.x reads them."""
    files = {"/" + CONTAINERD: V2_FILE_V3_TABLES}
    on_2 = parse_containerd_config(files, "/" + CONTAINERD, containerd_major=2)
    assert list(on_2.runtimes) == ["nvidia-container-runtime"] and on_2.ignored_cri_tables == ()
    on_1 = parse_containerd_config(files, "/" + CONTAINERD, containerd_major=1)
    assert on_1.runtimes == {} and len(on_1.ignored_cri_tables) == 1
