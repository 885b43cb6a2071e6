"""Build the krew archive and its manifest from a built wheel (run by `make dist`).

    python deploy/krew/package.py dist          # dist/kubectl-gpunode-<version>.tar.gz + dist/gpunode.yaml
    python deploy/krew/package.py --sync        # rewrite deploy/krew/gpunode.yaml from pyproject.toml

dist/ must hold gpunode-<version>-py3-none-any.whl. The archive holds the launcher and
the wheel (byte-for-byte reproducible for one wheel). Every value of the manifest that
belongs to a release comes from pyproject.toml: the version, the homepage
(``[project.urls] Homepage``) and the archive's uri (``[tool.gpunode.release]
archive-url`` with ``{version}`` filled in); dist/gpunode.yaml adds the archive's sha256.
The manifest in the repository carries the same values with a zero sha256 (a release's
checksum exists only once its archive is built); tests/ux/test_install.py checks both.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import re
import sys
import tarfile
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
PYPROJECT = HERE.parents[1] / "pyproject.toml"
MANIFEST = HERE / "gpunode.yaml"
NO_SHA256 = "0" * 64


def release_values(pyproject: Path = PYPROJECT) -> dict[str, str]:
    """version, homepage and uri of the release pyproject.toml describes."""
    doc = tomllib.loads(pyproject.read_text())
    version = doc["project"]["version"]
    return {
        "version": f"v{version}",
        "homepage": doc["project"]["urls"]["Homepage"],
        "uri": doc["tool"]["gpunode"]["release"]["archive-url"].format(version=version),
    }


def render(manifest: str, values: dict[str, str], sha256: str = NO_SHA256) -> str:
    """``manifest`` with the release's values and ``sha256`` put in place (nothing else changes)."""
    for key, value in values.items():
        manifest, found = re.subn(rf"(?m)^(\s*{key}:\s*).*$", lambda m, v=value: m[1] + v, manifest)
        if found != 1:
            raise ValueError(f"{MANIFEST}: expected one '{key}:' line, found {found}")
    return re.sub(r'sha256: "[0-9a-f]{64}"', f'sha256: "{sha256}"', manifest)


def build(dist: Path) -> tuple[Path, Path]:
    (wheel,) = sorted(dist.glob("gpunode-*-py3-none-any.whl"))
    values = release_values()
    version = wheel.name.split("-")[1]
    if values["version"] != f"v{version}":
        raise SystemExit(f"{wheel.name} is not version {values['version']} of pyproject.toml")
    archive = dist / f"kubectl-gpunode-{version}.tar.gz"
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path, mode in ((HERE / "kubectl-gpunode", 0o755), (wheel, 0o644)):
            info = tarfile.TarInfo(path.name)
            data = path.read_bytes()
            info.size, info.mode, info.mtime = len(data), mode, 0
            tar.addfile(info, io.BytesIO(data))
    archive.write_bytes(gzip.compress(raw.getvalue(), mtime=0))
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    out = dist / "gpunode.yaml"
    out.write_text(render(MANIFEST.read_text(), values, digest))
    return archive, out


if __name__ == "__main__":
    if sys.argv[1:] == ["--sync"]:
        MANIFEST.write_text(render(MANIFEST.read_text(), release_values()))
        print(f"wrote {MANIFEST}")
    else:
        archive, manifest = build(Path(sys.argv[1] if len(sys.argv) > 1 else "dist"))
        print(f"wrote {archive} and {manifest}")
