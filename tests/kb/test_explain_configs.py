# ruff: noqa: E501  (real config lines are long)
"""``gpunode explain`` over several sources: containerd configs among them are judged
together, by the functions the toolkit checks of ``diagnose`` use, so a cause that follows
from a root config and its drop-ins is named with the file and key it comes from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_kb_cli import run

from gpunode.explain_config import node_path

# GKE's root config (COS node setup, trimmed to its CRI part): version 2, no imports.
GKE_ROOT = """version = 2
required_plugins = ["io.containerd.grpc.v1.cri"]
disabled_plugins = ["io.containerd.internal.v1.restart"]
oom_score = -999

[plugins."io.containerd.grpc.v1.cri"]
  stream_server_address = "127.0.0.1"
[plugins."io.containerd.grpc.v1.cri".containerd]
  default_runtime_name = "runc"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
"""
# The toolkit's drop-in, as the GPU Operator writes it.
DROPIN = """version = 2

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
  runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
    BinaryName = "/usr/local/nvidia/toolkit/nvidia-container-runtime"
"""
IMPORTING_ROOT = 'version = 2\nimports = ["/etc/containerd/conf.d/*.toml"]\n\n' + GKE_ROOT.split("\n", 1)[1]


def lay_out(root: Path, files: dict[str, str]) -> list[str]:
    """Write ``files`` (path under ``root`` → text) and return their paths in order."""
    out = []
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        out.append(str(path))
    return out


def explain_json(*args: str) -> tuple[int, dict]:
    proc = run("explain", *args, "-o", "json")
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def test_root_without_imports_and_a_drop_in_name_the_wrong_path_with_file_and_key(tmp_path: Path) -> None:
    root, dropin = lay_out(
        tmp_path, {"etc/containerd/config.toml": GKE_ROOT, "etc/containerd/conf.d/99-nvidia.toml": DROPIN}
    )
    code, report = explain_json(root, dropin)
    assert code == 1
    best = report["matches"][0]
    assert best["cause"] == "containerd_config_wrong_path" and best["component"] == "container-toolkit"
    assert best["lines"] == [
        {"line_no": 3, "text": '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]', "source": dropin}
    ]
    keys = {(f["source"], f["node_path"], f["key"]) for f in best["files"]}
    assert keys == {
        (root, "/etc/containerd/config.toml", "imports"),
        (dropin, "/etc/containerd/conf.d/99-nvidia.toml", 'plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia'),
    }
    assert report["sources"] == [root, dropin] and report["source"] == f"{root}, {dropin}"
    assert [(c["role"], c["loaded"]) for c in report["configs"]] == [("root", True), ("drop-in", False)]


def test_the_table_names_the_files_and_keys(tmp_path: Path) -> None:
    files = lay_out(tmp_path, {"etc/containerd/config.toml": GKE_ROOT, "etc/containerd/conf.d/99-nvidia.toml": DROPIN})
    proc = run("explain", *files)
    assert proc.returncode == 1, proc.stderr
    text = " ".join(proc.stdout.split())
    assert "best match: containerd_config_wrong_path" in text
    assert "[imports]: no imports" in text and "imports no drop-in directory" in text


def test_a_root_whose_imports_cover_the_drop_in_is_not_the_wrong_path(tmp_path: Path) -> None:
    files = lay_out(
        tmp_path, {"etc/containerd/config.toml": IMPORTING_ROOT, "etc/containerd/conf.d/99-nvidia.toml": DROPIN}
    )
    code, report = explain_json(*files)
    assert (code, report["matches"]) == (0, [])
    assert [(c["role"], c["loaded"]) for c in report["configs"]] == [("root", True), ("drop-in", True)]


def test_a_healthy_gke_runc_only_config_names_nothing(tmp_path: Path) -> None:
    (root,) = lay_out(tmp_path, {"etc/containerd/config.toml": GKE_ROOT})
    code, report = explain_json(root)
    assert (code, report["matches"], report["matched"]) == (0, [], False)
    assert report["configs"] == [
        {"source": root, "node_path": "/etc/containerd/config.toml", "role": "root", "loaded": True}
    ]


def test_bad_toml_is_a_one_line_error_naming_the_file(tmp_path: Path) -> None:
    root, dropin = lay_out(
        tmp_path, {"etc/containerd/config.toml": GKE_ROOT, "etc/containerd/conf.d/99-nvidia.toml": "[plugins\nx = "}
    )
    proc = run("explain", root, dropin)
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and dropin in lines[0] and "invalid TOML" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_bad_import_list_is_told_with_the_file_given(tmp_path: Path) -> None:
    (root,) = lay_out(tmp_path, {"etc/containerd/config.toml": "version = 2\nimports = 3\n"})
    proc = run("explain", root)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"gpunode: {root}: 'imports' must be an array of strings"]


@pytest.mark.slow
def test_configs_recognised_by_content_where_their_place_is_unknown(tmp_path: Path) -> None:
    """Outside a containerd directory the root is the one with imports (else the first); a
    drop-in whose place is unknown is judged only where the root imports nothing."""
    root, dropin = lay_out(tmp_path, {"gke-config.toml": GKE_ROOT, "nvidia.toml": DROPIN})
    code, report = explain_json(root, dropin)
    assert code == 1 and report["matches"][0]["cause"] == "containerd_config_wrong_path"
    code, report = explain_json(dropin, root)  # the first is the root: its nvidia runtime is loaded
    assert (code, report["matches"]) == (0, [])
    importing, dropin = lay_out(tmp_path, {"importing.toml": IMPORTING_ROOT, "nvidia.toml": DROPIN})
    code, report = explain_json(dropin, importing)
    assert (code, report["matches"]) == (0, [])
    assert [(c["source"], c["role"], c["loaded"]) for c in report["configs"]] == [
        (dropin, "drop-in", None), (importing, "root", True)
    ]


def test_other_toml_is_just_text(tmp_path: Path) -> None:
    (other,) = lay_out(tmp_path, {"pyproject.toml": '[project]\nname = "x"\n'})
    code, report = explain_json(other)
    assert (code, report["configs"]) == (0, [])


@pytest.mark.slow
def test_a_drop_in_version_above_the_roots_is_named_only_with_the_runtime_down(tmp_path: Path) -> None:
    files = lay_out(
        tmp_path,
        {
            "etc/containerd/config.toml": IMPORTING_ROOT,
            "etc/containerd/conf.d/99-nvidia.toml": DROPIN.replace("version = 2", "version = 3"),
        },
    )
    code, report = explain_json(*files)
    assert (code, report["matches"]) == (0, [])
    (down,) = lay_out(
        tmp_path, {"describe.txt": "  Ready  False  KubeletNotReady  container runtime is down\n"}
    )
    code, report = explain_json(down, *files)
    causes = [m["cause"] for m in report["matches"]]
    assert code == 1 and "containerd_config_version_mismatch" in causes, causes
    clash = next(m for m in report["matches"] if m["cause"] == "containerd_config_version_mismatch")
    assert clash["files"][0]["detail"] == (
        "drop-in config version 3 higher than root config version 2 (/etc/containerd/config.toml)"
    )


def test_lines_of_several_files_are_numbered_and_named_per_file(tmp_path: Path) -> None:
    event = 'Failed to create pod sandbox: no runtime for "nvidia" is configured\n'
    first, second = lay_out(tmp_path, {"a.log": "noise\n" + event, "b.log": event})
    code, report = explain_json(first, second)
    best = report["matches"][0]
    assert code == 1 and best["cause"] == "runtime_handler_missing" and best["count"] == 2
    assert [(q["source"], q["line_no"]) for q in best["lines"]] == [(first, 2), (second, 1)]
    assert report["lines_read"] == 3


def test_stdin_only_once(tmp_path: Path) -> None:
    proc = run("explain", "-", "-", stdin="x\n")
    assert proc.returncode == 2 and "only once" in proc.stderr


def test_node_path_of_bundle_and_distribution_files() -> None:
    assert node_path("b/nodes/n1/files/etc/containerd/config.toml") == "/etc/containerd/config.toml"
    assert node_path("/x/var/lib/rancher/k3s/agent/etc/containerd/config.toml.tmpl") == (
        "/var/lib/rancher/k3s/agent/etc/containerd/config.toml.tmpl"
    )
    assert node_path("etc/containerd/conf.d/99-nvidia.toml") == "/etc/containerd/conf.d/99-nvidia.toml"
    assert node_path("etc/containerd/certs.toml") is None and node_path("config.toml") is None
