"""``make image`` builds with buildah, podman or docker, whichever is found first (or
IMAGE_TOOL), and says so when none is: a stand-in tool on PATH records what it was asked."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VERSION = next(line.split('"')[1] for line in (ROOT / "pyproject.toml").read_text().splitlines()
               if line.startswith("version = "))


def make_image(tmp_path: Path, tools: tuple[str, ...],
               *args: str) -> tuple[subprocess.CompletedProcess[str], str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp_path / "calls"
    for tool in tools:
        script = bin_dir / tool
        script.write_text(f'#!/bin/sh\necho "{tool} $*" >> {log}\n')
        script.chmod(0o755)
    make = shutil.which("make")
    if make is None:
        pytest.skip("make not installed")
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp")}
    proc = subprocess.run([make, "-s", "-C", str(ROOT), "image", *args], capture_output=True, text=True,
                          env=env, timeout=60, check=False)
    return proc, log.read_text() if log.exists() else ""


def test_docker_alone_builds_the_image(tmp_path: Path) -> None:
    proc, calls = make_image(tmp_path, ("docker",))
    assert proc.returncode == 0, proc.stderr
    assert calls == f"docker build -t gpunode:{VERSION} -f Containerfile .\n"


def test_buildah_comes_first_and_image_tool_chooses(tmp_path: Path) -> None:
    proc, calls = make_image(tmp_path, ("docker", "podman", "buildah"))
    assert proc.returncode == 0 and calls == f"buildah bud -t gpunode:{VERSION} -f Containerfile .\n"
    (tmp_path / "calls").unlink()
    proc, calls = make_image(tmp_path, ("docker", "podman", "buildah"), "IMAGE_TOOL=docker",
                             "IMAGE=r.example/g:1")
    assert proc.returncode == 0 and calls == "docker build -t r.example/g:1 -f Containerfile .\n"


def test_no_tool_is_one_line_and_exit_2(tmp_path: Path) -> None:
    proc, calls = make_image(tmp_path, ())
    assert calls == "" and "none of buildah, podman or docker found" in proc.stderr
    assert proc.returncode == 2
