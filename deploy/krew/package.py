"""Build the krew archive and its manifest from a built wheel (run by `make dist`).

    python deploy/krew/package.py dist

dist/ must hold gpunode-<version>-py3-none-any.whl. Writes
dist/kubectl-gpunode-<version>.tar.gz (the launcher and the wheel; byte-for-byte
reproducible) and dist/gpunode.yaml (deploy/krew/gpunode.yaml with that archive's sha256).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import re
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def build(dist: Path) -> tuple[Path, Path]:
    (wheel,) = sorted(dist.glob("gpunode-*-py3-none-any.whl"))
    version = wheel.name.split("-")[1]
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
    manifest = (HERE / "gpunode.yaml").read_text()
    manifest = re.sub(r'sha256: "[0-9a-f]{64}"', f'sha256: "{digest}"', manifest)
    out = dist / "gpunode.yaml"
    out.write_text(manifest)
    return archive, out


if __name__ == "__main__":
    archive, manifest = build(Path(sys.argv[1] if len(sys.argv) > 1 else "dist"))
    print(f"wrote {archive} and {manifest}")
