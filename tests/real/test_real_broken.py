"""Real files from broken machines (tests/fixtures/real/broken) name the right component and cause.

Each goes into the healthy bundle the way the healthy files do; the node's root
causes must include the expected component and cause code.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from realfix import REAL, Placed, new_bundle, set_node_info
from test_real_healthy import place_containerd

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.checks.context import NodeContext
from gpunode.checks.toolkit import runtime_patched
from gpunode.kb import load_kb
from gpunode.sim import build_bundle, load_scenario

BROKEN = REAL / "broken"

# file -> (component, cause) the diagnosis must name
NOT_PATCHED = ("container-toolkit", "containerd_not_patched")
SMI_FAILED = ("driver", "nvidia_smi_failed")
MISMATCH = ("driver", "driver_library_mismatch")
LOST = ("gpu-hardware", "gpu_fallen_off_bus")
EXPECTED: dict[str, tuple[str, str]] = {
    "aks-nodeconfig-nogpu-containerd1.toml": NOT_PATCHED,
    "eks-nodeadm-v2-configv3-no-nvidia.toml": NOT_PATCHED,
    "cloud-native-docs-troubleshooting-xid79.txt": ("gpu-hardware", "gpu_fallen_off_bus"),
    # nvidia-smi's own words name the cause: NVML's error is a device error, and "couldn't
    # communicate with the NVIDIA driver" is how nvidia-smi prints NVML's Driver Not Loaded
    "dra-driver-issue-1008-no-supported-gpus.txt": ("driver", "error_device"),
    "gpu-operator-issue-641-no-devices.txt": SMI_FAILED,
    "shine-cluster-issue-30-version-mismatch.txt": MISMATCH,
    "shine-cluster-issue-50-no-driver.txt": ("driver", "driver_not_loaded"),
    # NVML started and could not open one GPU: that GPU's, and on this node of eight whose
    # other GPUs answer, one that dropped off the bus (checks.driver._gpu_unanswered)
    "syno-nvidia-issue-22-device-handle.txt": LOST,
    "tinygrad-ogkm-issue-47-version-mismatch.txt": MISMATCH,
    "xxd3vin-workspace-issue-19-device-handle.txt": LOST,
}


# A broken file comes with the rest of the cluster as that failure leaves it: a node whose
# containerd lacks the NVIDIA runtime has its GPU pods stuck, as in the simulator's fault
# scenario (broken node gpu-wk-02); everything else starts from the healthy cluster.
BASES = {"containerd": ("fault-containerd-not-patched", "gpu-wk-02")}
HEALTHY = ("falcon-ai", "gpu-wk-01")


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    names = {HEALTHY[0], *(scenario for scenario, _node in BASES.values())}
    return {n: build_bundle(load_scenario(n), tmp_path_factory.mktemp(n) / "bundle") for n in names}


def _placed_at(placed: Placed, path: Path) -> str:
    """The bundle path the file lands on, as evidence names it."""
    kind = path.parent.name
    rel = {"nvidia-smi": "cmd/nvidia-smi.txt", "dmesg": "cmd/dmesg.txt"}.get(
        kind, "files/etc/containerd/config.toml"
    )
    return f"nodes/{placed.node}/{rel}"


def _quotes_file(excerpt: str, text: str) -> bool:
    """The excerpt is a line of the file, or lists exactly runtimes the file defines."""
    if excerpt.strip() in text:
        return True
    listed = excerpt.removeprefix("runtimes: ").split(";")[0].split(", ")
    return excerpt.startswith("runtimes: ") and all(
        f".{name}]" in text or f"'{name}']" in text for name in listed
    )


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
    [
        pytest.param(p, id=f"{p.parent.name}/{p.name}")
        for p in sorted(BROKEN.rglob("*"))
        if p.is_file() and p.parent.name != "interconnect"  # test_real_interconnect.py
    ],
)
def test_broken_file_names_its_cause(path: Path, bundles: dict[str, Path], tmp_path: Path) -> None:
    scenario, node = BASES.get(path.parent.name, HEALTHY)
    placed = new_bundle(bundles[scenario], tmp_path / "b", node)
    _place(placed, path)
    report = placed.report()
    causes = [(rc.component, rc.cause) for rc in report.root_causes]
    assert EXPECTED[path.name] in causes, causes
    # the cause rests on the real file, not on whatever else the bundle holds
    cause = next(rc for rc in report.root_causes if (rc.component, rc.cause) == EXPECTED[path.name])
    where, text = _placed_at(placed, path), path.read_text()
    quoted = [e.excerpt for e in cause.evidence if e.source.split(":")[0] == where]
    assert any(_quotes_file(excerpt, text) for excerpt in quoted), (where, [e.source for e in cause.evidence])


@pytest.mark.parametrize(
    ("runtime_version", "status"),
    [("containerd://2.0.2", "ok"), ("containerd://1.7.24", "failed"), ("", "unknown")],
)
def test_containerd_2_table_names_in_a_version_2_file_follow_the_runtime_version(
    runtime_version: str, status: str, bundles: dict[str, Path], tmp_path: Path
) -> None:
    """AKS's file for containerd 2.x, judged by the runtime-config check alone: 2.x reads
    its runtimes, 1.x does not, and with no version known nobody can tell."""
    placed = new_bundle(bundles[HEALTHY[0]], tmp_path / "b", HEALTHY[1])
    place_containerd(placed, REAL / "containerd" / "aks-nodeconfig-gpu-containerd2.toml")
    set_node_info(placed, containerRuntimeVersion=runtime_version)
    facts = load_bundle(placed.root)
    ctx = NodeContext(facts, placed.node, read_node_observations(facts, placed.node), load_kb())
    # no Running pod names a runtime class here, so the config alone decides
    facts.runtime_classes = ()
    findings = list(runtime_patched(ctx, "container-toolkit"))
    assert [f.status.value for f in findings] == [status], findings
