"""A distribution's containerd config that only imports the toolkit's drop-in folder.

The toolkit, told to configure a file that does not exist, creates it with its ``imports``
line alone (NVIDIA/nvidia-docker#1788: nvidia-ctk writes a missing config with only its own
runtime). Where the distribution builds containerd's config from that file (a k3s/RKE2
template, a k0s drop-in), containerd loses the distribution's settings and the node's runtime
never serves the kubelet: the toolkit's file is at fault, not the runtime or the kubelet.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.model import NodeReport
from gpunode.sim import build_bundle, load_scenario

NODE = "gpu-wk-01"

#: https://github.com/rancher/rke2/issues/10293: the 56-byte template RKE2 rendered its config from.
RKE2_10293 = ("var/lib/rancher/rke2/agent/etc/containerd/config-v3.toml.tmpl",
              'imports = ["/etc/containerd/conf.d/*.toml"]\nversion = 3\n')
#: https://github.com/k0sproject/k0s/issues/6547: what the toolkit wrote to k0s's drop-in folder.
K0S_6547 = ("etc/k0s/containerd.d/nvidia.toml", 'imports = ["/etc/containerd/conf.d/*.toml"]\nversion = 2\n')
#: The same stub under k3s's own template name (k3s reads config.toml.tmpl as RKE2 does).
K3S_TEMPLATE = ("var/lib/rancher/k3s/agent/etc/containerd/config.toml.tmpl",
                'imports = ["/etc/containerd/conf.d/*.toml"]\nversion = 2\n')

#: Look-alikes: a template that renders k3s's base first and adds the NVIDIA runtime (k3s's
#: documented way, NVIDIA/gpu-feature-discovery#36), a template holding a whole config of its
#: own (the form NVIDIA/gpu-operator#992's toolkit wrote, judged elsewhere), and the toolkit's
#: own drop-in, which is no distribution's config.
BASE_TEMPLATE = ("var/lib/rancher/k3s/agent/etc/containerd/config.toml.tmpl",
                 '{{ template "base" . }}\n\n'
                 '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
                 '  runtime_type = "io.containerd.runc.v2"\n'
                 '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
                 '  BinaryName = "/usr/bin/nvidia-container-runtime"\n')
WHOLE_TEMPLATE = ("var/lib/rancher/rke2/agent/etc/containerd/config.toml.tmpl",
                  'imports = ["/etc/containerd/conf.d/*.toml"]\nversion = 2\n\n'
                  '[plugins."io.containerd.grpc.v1.cri".containerd]\n  default_runtime_name = "runc"\n')
TOOLKIT_DROPIN = ("etc/containerd/conf.d/90-imports.toml",
                  'imports = ["/etc/containerd/conf.d/*.toml"]\nversion = 2\n')


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_bundle(load_scenario("falcon-ai"), tmp_path_factory.mktemp("stub") / "falcon")


def _node(healthy: Path, tmp_path: Path, path: str, text: str) -> NodeReport:
    root = tmp_path / "b"
    shutil.copytree(healthy, root)
    target = root / "nodes" / NODE / "files" / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    report = diagnose(load_bundle(root), read_node_observations)
    return next(n for n in report.nodes if n.name == NODE)


@pytest.mark.parametrize(("path", "text"), [RKE2_10293, K0S_6547, K3S_TEMPLATE],
                         ids=["rke2-10293", "k0s-6547", "k3s-template"])
def test_the_toolkits_stub_is_at_fault(healthy: Path, tmp_path: Path, path: str, text: str) -> None:
    node = _node(healthy, tmp_path, path, text)
    assert [(r.component, r.cause) for r in node.root_causes][:1] == [
        ("container-toolkit", "error_config_invalid")]


@pytest.mark.parametrize(("path", "text"), [BASE_TEMPLATE, WHOLE_TEMPLATE, TOOLKIT_DROPIN],
                         ids=["renders-base", "whole-config", "toolkit-dropin"])
def test_look_alikes_are_not_read_as_a_stub(healthy: Path, tmp_path: Path, path: str, text: str) -> None:
    node = _node(healthy, tmp_path, path, text)
    assert all(f.cause != "error_config_invalid" or f.component != "container-toolkit"
               for f in node.root_causes)
    toolkit = next(c for c in node.components if c.component == "container-toolkit")
    assert toolkit.cause != "error_config_invalid"
