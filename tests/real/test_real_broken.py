"""Real files from broken machines (tests/fixtures/real/broken) name the right component and cause.

Each goes into the healthy bundle the way the healthy files do; the node's root
causes must include the expected component and cause code.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from realfix import REAL, Placed, new_bundle
from test_real_healthy import place_containerd

from gpunode.sim import build_bundle, load_scenario

BROKEN = REAL / "broken"

# file -> (component, cause) the diagnosis must name
NOT_PATCHED = ("container-toolkit", "containerd_not_patched")
SMI_FAILED = ("driver", "nvidia_smi_failed")
MISMATCH = ("driver", "driver_library_mismatch")
EXPECTED: dict[str, tuple[str, str]] = {
    "aks-nodeconfig-nogpu-containerd1.toml": NOT_PATCHED,
    "eks-nodeadm-v2-configv3-no-nvidia.toml": NOT_PATCHED,
    "cloud-native-docs-troubleshooting-xid79.txt": ("gpu-hardware", "gpu_fallen_off_bus"),
    "dra-driver-issue-1008-no-supported-gpus.txt": SMI_FAILED,
    "gpu-operator-issue-641-no-devices.txt": SMI_FAILED,
    "shine-cluster-issue-30-version-mismatch.txt": MISMATCH,
    "shine-cluster-issue-50-no-driver.txt": SMI_FAILED,
    "syno-nvidia-issue-22-device-handle.txt": SMI_FAILED,
    "tinygrad-ogkm-issue-47-version-mismatch.txt": MISMATCH,
    "xxd3vin-workspace-issue-19-device-handle.txt": SMI_FAILED,
}


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_bundle(load_scenario("falcon-ai"), tmp_path_factory.mktemp("falcon") / "bundle")


def _place(placed: Placed, path: Path) -> None:
    kind = path.parent.name
    node = placed.node_dir()
    if kind == "nvidia-smi":
        # nvidia-smi failing: its XML query fails too and DCGM has nothing to export
        (node / "cmd" / "nvidia-smi.txt").write_text(path.read_text())
        (node / "cmd" / "nvidia-smi-q.xml").unlink()
        (node / "metrics" / "dcgm-exporter.prom").unlink()
    elif kind == "dmesg":
        dmesg = node / "cmd" / "dmesg.txt"
        dmesg.write_text(dmesg.read_text() + path.read_text())
    elif kind == "containerd":
        place_containerd(placed, path)
    else:
        raise AssertionError(f"no placement for {kind}")


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, id=f"{p.parent.name}/{p.name}") for p in sorted(BROKEN.rglob("*")) if p.is_file()],
)
def test_broken_file_names_its_cause(path: Path, healthy: Path, tmp_path: Path) -> None:
    placed = new_bundle(healthy, tmp_path / "b")
    _place(placed, path)
    report = placed.report()
    causes = [(rc.component, rc.cause) for rc in report.root_causes]
    assert EXPECTED[path.name] in causes, causes
