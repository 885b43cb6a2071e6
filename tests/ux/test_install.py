"""Installable everywhere: the wheel installs into a clean venv and runs; the krew manifest and
archive match the package; the Containerfile builds the agent image the DaemonSet names."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
from pathlib import Path

import pytest
import yaml

from gpunode import __version__

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What `make dist` makes: the wheel, then the krew archive and manifest."""
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    subprocess.run([sys.executable, str(ROOT / "deploy/krew/package.py"), str(out)], check=True, timeout=60)
    return out


def test_wheel_installs_into_a_clean_venv_and_runs(dist: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = Path(sysconfig.get_paths(vars={"base": str(venv), "platbase": str(venv)})["purelib"])
    # dependencies come from the dev environment (no network); gpunode itself only from the wheel
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    (wheel,) = dist.glob("gpunode-*.whl")
    py = venv / "bin" / "python"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(py),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    where = subprocess.run(
        [py, "-c", "import gpunode; print(gpunode.__file__)"], capture_output=True, text=True, check=False
    )
    assert where.stdout.startswith(str(venv)), where.stdout + where.stderr
    for script in ("gpunode", "kubectl-gpunode"):
        version = subprocess.run(
            [venv / "bin" / script, "--version"], capture_output=True, text=True, check=False
        )
        assert version.stdout == f"gpunode {__version__}\n"
    demo = subprocess.run(
        [venv / "bin/gpunode", "demo", "-o", "html"], capture_output=True, text=True, timeout=300, check=False
    )
    assert (
        demo.returncode == 1 and 'data-cause="kernel_headers_missing"' in demo.stdout
    )  # package data shipped


def test_krew_manifest_matches_the_package(dist: Path) -> None:
    """Both manifests (the repository's and the one `make dist` writes) name the package's
    version and the release location pyproject.toml gives; the built one carries the sha256
    of the archive built beside it, and that archive holds what the manifest installs."""
    repo_text = (ROOT / "deploy/krew/gpunode.yaml").read_text()
    repo, built = yaml.safe_load(repo_text), yaml.safe_load((dist / "gpunode.yaml").read_text())
    project = PYPROJECT["project"]
    uri = PYPROJECT["tool"]["gpunode"]["release"]["archive-url"].format(version=__version__)
    archive = dist / f"kubectl-gpunode-{__version__}.tar.gz"
    for manifest in (repo, built):
        assert manifest["kind"] == "Plugin" and manifest["metadata"]["name"] == project["name"]
        assert manifest["spec"]["version"] == f"v{project['version']}" == f"v{__version__}"
        assert manifest["spec"]["homepage"] == project["urls"]["Homepage"]
        (platform,) = manifest["spec"]["platforms"]
        assert platform["uri"] == uri and uri.endswith(f"/v{__version__}/{archive.name}")
        assert platform["bin"] == "kubectl-gpunode" and "kubectl-gpunode" in project["scripts"]
    assert repo["spec"]["platforms"][0]["sha256"] == "0" * 64  # no release: no checksum to promise
    assert built["spec"]["platforms"][0]["sha256"] == hashlib.sha256(archive.read_bytes()).hexdigest()
    repo["spec"]["platforms"][0]["sha256"] = built["spec"]["platforms"][0]["sha256"]
    assert built == repo  # the build changes nothing else
    assert "NO RELEASE IS PUBLISHED YET" in repo_text  # while the uri points at nothing, it says so
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        assert tar.getmember("kubectl-gpunode").mode & 0o111
    assert any(n.startswith(f"gpunode-{__version__}-") and n.endswith(".whl") for n in names)
    assert all(any(Path(n).match(f["from"]) for n in names) for f in platform["files"])


def test_krew_manifest_values_follow_pyproject(tmp_path: Path) -> None:
    """A version bump in pyproject.toml reaches homepage, version and uri (package.py --sync)."""
    sys.path.insert(0, str(ROOT / "deploy/krew"))
    try:
        import package
    finally:
        sys.path.pop(0)
    bumped = tmp_path / "pyproject.toml"
    bumped.write_text((ROOT / "pyproject.toml").read_text().replace(
        f'version = "{__version__}"', 'version = "9.8.7"', 1))
    values = package.release_values(bumped)
    out = yaml.safe_load(package.render((ROOT / "deploy/krew/gpunode.yaml").read_text(), values, "a" * 64))
    assert out["spec"]["version"] == "v9.8.7" and out["spec"]["platforms"][0]["sha256"] == "a" * 64
    assert out["spec"]["platforms"][0]["uri"].endswith("/v9.8.7/kubectl-gpunode-9.8.7.tar.gz")


def test_containerfile_builds_the_image_the_daemonset_runs() -> None:
    text = (ROOT / "Containerfile").read_text()
    froms = [line.split()[1] for line in text.splitlines() if line.startswith("FROM ")]
    assert froms and all(":3.11-slim" in f for f in froms)
    users = [line.split()[1] for line in text.splitlines() if line.startswith("USER ")]
    assert users and users[-1] != "0" and users[-1] != "root"
    assert 'ENTRYPOINT ["gpunode"]' in text and 'CMD ["agent"]' in text
    assert "requirements-dev" not in text and "--no-deps -w" in text  # runtime deps come from the wheel
    daemonset = yaml.safe_load((ROOT / "deploy/agent/daemonset.yaml").read_text())
    (container,) = daemonset["spec"]["template"]["spec"]["containers"]
    assert container["command"] == ["gpunode"] and container["args"][0] == "agent"
    kustomization = yaml.safe_load((ROOT / "deploy/agent/kustomization.yaml").read_text())
    assert [i["name"] for i in kustomization["images"]] == [container["image"]]
