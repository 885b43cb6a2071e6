"""k3s/RKE2 containerd templates read without rendering (gpunode.parse.k3s_template), on
the real templates in tests/fixtures/real/containerd (SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

from gpunode.parse.containerd import ContainerdConfig, parse_containerd_config
from gpunode.parse.k3s_template import base_version, renders_host_runtimes, static_text

REAL = Path(__file__).parents[1] / "fixtures" / "real" / "containerd"
K3S = "/var/lib/rancher/k3s/agent/etc/containerd/"
RKE2 = "/var/lib/rancher/rke2/agent/etc/containerd/"


def _parsed(path: str, name: str) -> tuple[str, ContainerdConfig]:
    text = (REAL / name).read_text()
    return text, parse_containerd_config({path: text}, path)


def test_a_copy_of_k3s_base_template_parses_without_its_actions() -> None:
    """Values, conditionals and the tables a range writes are dropped; the literal tables stay."""
    text, config = _parsed(K3S + "config.toml.tmpl", "k3s-config.toml.tmpl")
    assert config.version == 2
    assert config.default_runtime == "nvidia"
    assert set(config.runtimes) == {"runc"}  # nvidia: from ExtraRuntimes
    assert renders_host_runtimes(text)
    assert "{{" not in static_text(text)


def test_a_template_on_k3s_base_takes_the_base_version() -> None:
    text, config = _parsed(K3S + "config.toml.tmpl", "k3s-base-nvidia.toml.tmpl")
    assert config.version == 2
    assert config.runtimes["nvidia"].runtime_type == "io.containerd.runc.v2"
    assert renders_host_runtimes(text)
    v3 = parse_containerd_config({K3S + "config-v3.toml.tmpl": text}, K3S + "config-v3.toml.tmpl")
    assert v3.version == base_version("config-v3.toml.tmpl") == 3


def test_a_full_rke2_template_without_actions_is_plain_toml() -> None:
    text, config = _parsed(RKE2 + "config.toml.tmpl", "rke2-issue-822-config.toml.tmpl")
    assert config.version is None  # a version 1 file, as written
    assert config.runtimes["nvidia"].binary_name == "/usr/bin/nvidia-container-runtime"
    assert not renders_host_runtimes(text)
    assert static_text(text) == text.rstrip("\n")


def test_a_template_naming_no_base_and_no_range_gets_no_host_runtimes() -> None:
    text = (REAL / "k3s-config.toml.tmpl").read_text()
    own_tables_only = text[: text.index("{{range $k, $v := .ExtraRuntimes}}")]
    assert not renders_host_runtimes(own_tables_only)
