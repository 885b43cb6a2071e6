"""containerd (v1/v2/v3, imports, k3s) and CRI-O configuration parsing."""

from __future__ import annotations

import pytest
from node_fixtures import read_fixture

from gpunode.errors import ParseError
from gpunode.parse.containerd import (
    CONTAINERD_CONFIG_PATHS,
    RuntimeHandler,
    parse_containerd_config,
    runtimes_defined,
)
from gpunode.parse.crio import parse_crio_config

TOOLKIT = "/usr/local/nvidia/toolkit/nvidia-container-runtime"
CFG = "/etc/containerd/config.toml"


def test_v2_config_patched_by_toolkit_as_default() -> None:
    config = parse_containerd_config({CFG: read_fixture("runtime", "containerd-v2", "config.toml")})
    assert config.version == 2
    assert config.cri_table == 'plugins."io.containerd.grpc.v1.cri"'
    assert set(config.runtimes) == {"nvidia", "nvidia-cdi", "nvidia-legacy", "runc"}
    assert config.runtimes["nvidia"] == RuntimeHandler("nvidia", "io.containerd.runc.v2", TOOLKIT)
    assert config.runtimes["runc"].binary_name is None  # BinaryName = "" means unset
    assert (config.default_runtime, config.enable_cdi) == ("nvidia", False)
    assert config.sources == (CFG,) and config.imports == ()


def test_v3_config_for_containerd_2() -> None:
    config = parse_containerd_config({CFG: read_fixture("runtime", "containerd-v3", "config.toml")})
    assert config.version == 3
    assert config.cri_table == 'plugins."io.containerd.cri.v1.runtime"'
    assert config.runtimes["nvidia-cdi"].binary_name == TOOLKIT + ".cdi"
    assert (config.default_runtime, config.enable_cdi) == ("runc", True)
    assert config.ignored_cri_tables == ()


def _dropin_files() -> dict[str, str]:
    return {
        CFG: read_fixture("runtime", "containerd-dropin", "config.toml"),
        "/etc/containerd/conf.d/99-nvidia.toml": read_fixture(
            "runtime", "containerd-dropin", "conf.d", "99-nvidia.toml"
        ),
        "/etc/containerd/conf.d/10-registry.toml": read_fixture(
            "runtime", "containerd-dropin", "conf.d", "10-registry.toml"
        ),
        "/etc/containerd/conf.d/README": "not toml, not matched by the glob",
    }


def test_drop_in_imports_are_merged_in_glob_order() -> None:
    config = parse_containerd_config(_dropin_files())
    assert config.imports == ("/etc/containerd/conf.d/*.toml",)
    assert config.sources == (
        CFG,
        "/etc/containerd/conf.d/10-registry.toml",
        "/etc/containerd/conf.d/99-nvidia.toml",
    )
    assert set(config.runtimes) == {"runc", "nvidia", "nvidia-cdi", "nvidia-legacy"}
    assert config.default_runtime == "runc"  # the drop-in does not change the default
    assert config.enable_cdi is True


def test_each_file_keeps_its_own_version() -> None:
    """containerd 2.3 compares a drop-in's version with the top-level file's, so both are kept;
    version 4 (containerd 2.3) spells its runtimes like version 3."""
    dropin = (
        "version = 4\n"
        '[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.nvidia.options]\n'
        f'BinaryName = "{TOOLKIT}"\n'
    )
    files = {
        CFG: 'version = 2\nimports = ["/etc/containerd/conf.d/*.toml"]\n',
        "/etc/containerd/conf.d/99-nvidia.toml": dropin,
        "/etc/containerd/conf.d/10-registry.toml": "[plugins]\n",
    }
    config = parse_containerd_config(files)
    assert config.file_versions == (
        (CFG, 2),
        ("/etc/containerd/conf.d/10-registry.toml", None),
        ("/etc/containerd/conf.d/99-nvidia.toml", 4),
    )
    assert config.runtimes["nvidia"].binary_name == TOOLKIT
    assert config.ignored_cri_tables == ()


def test_runtimes_a_file_defines_in_any_spelling() -> None:
    """What a drop-in would add if containerd read it, whatever version's table it uses."""
    v2 = '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]\n'
    v3 = (
        '[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.nvidia.options]\n'
        f'BinaryName = "{TOOLKIT}"\n'
    )
    assert set(runtimes_defined("/etc/containerd/conf.d/99-nvidia.toml", v2)) == {"nvidia"}
    assert runtimes_defined("/x.toml", v3)["nvidia"].binary_name == TOOLKIT
    assert runtimes_defined("/x.toml", "[plugins]\n") == {}


def test_without_the_drop_in_there_is_no_nvidia_runtime() -> None:
    files = _dropin_files()
    del files["/etc/containerd/conf.d/99-nvidia.toml"]
    assert "nvidia" not in parse_containerd_config(files).runtimes


def test_later_import_overrides_and_relative_imports_resolve() -> None:
    files = {
        CFG: 'version = 2\nimports = ["conf.d/a.toml", "missing.toml"]\n',
        "/etc/containerd/conf.d/a.toml": (
            'version = 2\nimports = ["b.toml"]\n'
            '[plugins."io.containerd.grpc.v1.cri".containerd]\ndefault_runtime_name = "nvidia"\n'
        ),
        "/etc/containerd/conf.d/b.toml": (
            '[plugins."io.containerd.grpc.v1.cri".containerd]\ndefault_runtime_name = "runc"\n'
            f'[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
            f'BinaryName = "{TOOLKIT}"\n'
        ),
    }
    config = parse_containerd_config(files)
    assert config.default_runtime == "runc"  # b.toml is merged after a.toml
    assert config.runtimes["nvidia"].binary_name == TOOLKIT
    assert config.missing_imports == ("/etc/containerd/missing.toml",)


def test_import_cycle_is_loaded_once() -> None:
    files = {
        CFG: 'version = 2\nimports = ["/etc/containerd/x.toml"]\n',
        "/etc/containerd/x.toml": 'version = 2\nimports = ["/etc/containerd/config.toml"]\n',
    }
    assert parse_containerd_config(files).sources == (CFG, "/etc/containerd/x.toml")


def test_v2_tables_in_a_versionless_file_are_not_read() -> None:
    text = read_fixture("runtime", "containerd-v2", "config.toml").replace("version = 2\n", "")
    config = parse_containerd_config({CFG: text})
    assert config.version is None
    assert config.cri_table == "plugins.cri"
    assert config.runtimes == {}
    assert config.ignored_cri_tables == (
        f'{CFG}: plugins."io.containerd.grpc.v1.cri".containerd.runtimes',
    )


def test_v1_legacy_config() -> None:
    text = """
[plugins.cri.containerd]
  snapshotter = "overlayfs"
  [plugins.cri.containerd.default_runtime]
    runtime_type = "io.containerd.runtime.v1.linux"
    runtime_engine = "/usr/bin/nvidia-container-runtime"
  [plugins.cri.containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v1"
"""
    config = parse_containerd_config({CFG: text})
    assert config.default_runtime == "default_runtime"
    assert config.runtimes["default_runtime"].binary_name == "/usr/bin/nvidia-container-runtime"
    assert config.runtimes["runc"].runtime_type == "io.containerd.runc.v1"


def test_k3s_generated_config_and_template() -> None:
    k3s = "/var/lib/rancher/k3s/agent/etc/containerd/config.toml"
    assert k3s in CONTAINERD_CONFIG_PATHS
    config = parse_containerd_config({k3s: read_fixture("runtime", "k3s", "config.toml")}, k3s)
    assert config.runtimes["nvidia"].binary_name == "/usr/bin/nvidia-container-runtime"
    assert config.default_runtime is None
    template = k3s + ".tmpl"
    from_template = parse_containerd_config(
        {template: read_fixture("runtime", "k3s", "config.toml.tmpl")}, template
    )
    assert from_template.default_runtime == "nvidia"


def test_distribution_paths_are_listed() -> None:
    for expected in (
        "/etc/containerd/config.toml",
        "/var/lib/rancher/rke2/agent/etc/containerd/config.toml.tmpl",
        "/var/snap/microk8s/current/args/containerd-template.toml",
    ):
        assert expected in CONTAINERD_CONFIG_PATHS


@pytest.mark.parametrize(
    ("files", "match"),
    [
        ({}, "not among"),
        ({CFG: "version = 2\n[plugins\n"}, "invalid TOML"),
        ({CFG: "version = 7\n"}, "version"),
        ({CFG: 'version = "2"\n'}, "version"),
        ({CFG: 'imports = "/etc/containerd/conf.d/*.toml"\n'}, "imports"),
    ],
)
def test_malformed_containerd(files: dict[str, str], match: str) -> None:
    with pytest.raises(ParseError, match=match):
        parse_containerd_config(files)


def _crio_files() -> dict[str, str]:
    return {
        "/etc/crio/crio.conf": read_fixture("runtime", "crio", "crio.conf"),
        "/etc/crio/crio.conf.d/99-nvidia.toml": read_fixture(
            "runtime", "crio", "crio.conf.d", "99-nvidia.toml"
        ),
        "/etc/crio/crio.conf.d/10-crun.conf": read_fixture(
            "runtime", "crio", "crio.conf.d", "10-crun.conf"
        ),
    }


def test_crio_with_toolkit_drop_in() -> None:
    config = parse_crio_config(_crio_files())
    assert config.sources == (
        "/etc/crio/crio.conf",
        "/etc/crio/crio.conf.d/10-crun.conf",
        "/etc/crio/crio.conf.d/99-nvidia.toml",
    )
    assert config.default_runtime == "nvidia"
    assert config.runtimes["nvidia"] == RuntimeHandler("nvidia", "oci", TOOLKIT)
    assert config.runtimes["crun"].binary_name == "/usr/libexec/crio/crun"
    assert config.hooks_dirs == (
        "/usr/share/containers/oci/hooks.d",
        "/etc/containers/oci/hooks.d",
    )


def test_crio_reads_drop_ins_without_extension() -> None:
    """OpenShift writes its base settings to crio.conf.d/00-default; CRI-O reads it."""
    files = _crio_files()
    files["/etc/crio/crio.conf.d/00-default"] = '[crio.runtime.runtimes.runc]\nruntime_root = "/run/runc"\n'
    config = parse_crio_config(files)
    assert config.sources[1] == "/etc/crio/crio.conf.d/00-default"
    assert config.runtimes["runc"].name == "runc"


def test_crio_without_drop_in_keeps_crun() -> None:
    files = _crio_files()
    del files["/etc/crio/crio.conf.d/99-nvidia.toml"]
    config = parse_crio_config(files)
    assert config.default_runtime == "crun"
    assert "nvidia" not in config.runtimes


@pytest.mark.parametrize(
    "files",
    [
        {},
        {"/etc/crio/crio.conf": "[crio.runtime\n"},
        {"/etc/crio/crio.conf": '[crio.runtime]\nhooks_dir = "/x"\n'},
    ],
)
def test_malformed_crio(files: dict[str, str]) -> None:
    with pytest.raises(ParseError):
        parse_crio_config(files)


V2_SPELLED = (
    '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
    f'BinaryName = "{TOOLKIT}"\n'
)
V1_SPELLED = f'[plugins.cri.containerd.runtimes.nvidia.options]\nBinaryName = "{TOOLKIT}"\n'
DROPIN = "/etc/containerd/conf.d/99-nvidia.toml"


def _with_dropin(top_version: int, dropin: str) -> dict[str, str]:
    return {CFG: f'version = {top_version}\nimports = ["/etc/containerd/conf.d/*.toml"]\n', DROPIN: dropin}


@pytest.mark.parametrize("dropin", [V2_SPELLED, V1_SPELLED], ids=["v2-spelled", "v1-spelled"])
@pytest.mark.parametrize("top_version", [2, 3])
def test_containerd2_migrates_a_versionless_dropin_from_v1(top_version: int, dropin: str) -> None:
    """containerd 2.x reads a drop-in without ``version`` as v1 and migrates it up to v3:
    its runtimes count under the v1 and v2 table names whatever the top-level file's version."""
    config = parse_containerd_config(_with_dropin(top_version, dropin), containerd_major=2)
    assert config.runtimes["nvidia"].binary_name == TOOLKIT
    assert config.ignored_cri_tables == ()
    assert config.file_versions == ((CFG, top_version), (DROPIN, None))


def test_a_declared_version_is_still_read_as_declared() -> None:
    """A drop-in that declares version 3 is not migrated: its v2 table names stay unread."""
    config = parse_containerd_config(_with_dropin(3, "version = 3\n" + V2_SPELLED), containerd_major=2)
    assert "nvidia" not in config.runtimes
    unread = f'{DROPIN}: plugins."io.containerd.grpc.v1.cri".containerd.runtimes'
    assert config.ignored_cri_tables == (unread,)


def test_containerd1_reads_a_versionless_dropin_with_the_merged_version() -> None:
    """containerd 1.x decodes plugins by the merged config's version: a version-less drop-in
    in a version 2 config is read as v2, so its v1 table names are not read."""
    assert "nvidia" in parse_containerd_config(_with_dropin(2, V2_SPELLED), containerd_major=1).runtimes
    v1 = parse_containerd_config(_with_dropin(2, V1_SPELLED), containerd_major=1)
    assert "nvidia" not in v1.runtimes
    assert v1.ignored_cri_tables == (f"{DROPIN}: plugins.cri.containerd.runtimes",)
