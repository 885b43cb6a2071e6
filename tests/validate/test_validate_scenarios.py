"""Every broken simulator scenario is Not ready and names its failing category and check.

Only the category under test is run per scenario (``--category``), which keeps
this sweep fast; the healthy scenario is checked in full in test_validate_passive.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpunode import sim
from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.validate.context import ValidationOptions
from gpunode.validate.runner import validate_facts
from gpunode.validation import ClusterVerdict, Verdict

# scenario -> (category, check that must fail)
EXPECTED = {
    "falcon-ai-broken": ("gpu-health", "gpu.stack-diagnosis"),
    "fault-kernel-headers-missing": ("gpu-health", "gpu.allocatable"),
    "fault-secure-boot-enabled": ("gpu-health", "gpu.allocatable"),
    "fault-nouveau-loaded": ("gpu-health", "gpu.gfd-labels"),
    "fault-driver-image-not-found": ("gpu-health", "gpu.stack-diagnosis"),
    "fault-driver-library-mismatch": ("observability", "obs.dcgm-exporter"),
    "fault-gpu-fallen-off-bus": ("gpu-health", "gpu.no-hardware-xid"),
    "fault-uncorrectable-ecc": ("gpu-health", "gpu.memory-health"),
    "fault-fabric-manager-not-running": ("gpu-health", "gpu.fabric-manager"),
    "fault-device-plugin-zero-gpus": ("gpu-health", "gpu.allocatable"),
    "fault-mig-strategy-mismatch": ("gpu-health", "gpu.allocatable"),
    "fault-containerd-not-patched": ("gpu-health", "gpu.allocatable"),
    "fault-runtime-handler-missing": ("gpu-health", "gpu.allocatable"),
    "fault-node-not-ready": ("infrastructure", "infra.nodes-ready"),
    "fault-container-runtime-down": ("infrastructure", "infra.nodes-ready"),
    "fault-mofed-build-failed": ("network", "network.ofed-ready"),
    "fault-rdma-selector-no-devices": ("network", "network.rdma-allocatable"),
    "fault-csi-registration-failed": ("storage", "storage.csi-registered"),
    "fault-dcgm-hostengine-unreachable": ("observability", "obs.dcgm-exporter"),
    "fault-logging-agent-oomkilled": ("observability", "obs.logging-agent"),
    "fault-nfd-not-deployed": ("gpu-health", "gpu.nodes-present"),
    "fault-gpu-operator-crashloop": ("gpu-health", "gpu.stack-diagnosis"),
    "fault-clusterpolicy-invalid": ("gpu-health", "gpu.stack-diagnosis"),
    # the links (issue 26): judged by diagnose from the collected link files
    **{
        f"fault-{name}": ("gpu-health", "gpu.stack-diagnosis")
        for name in (
            "nvlink-inactive", "nvlink-down", "nvlink-crc-errors", "nvlink-recovery-errors",
            "fabric-clique-mismatch", "fabric-health-degraded", "fabric-registration-failed",
            "ib-port-polling", "ib-port-no-subnet-manager", "rdma-port-down", "rdma-rate-below-peers",
            "roce-mtu-mismatch", "rdma-link-layer-mismatch", "ib-port-errors", "sriov-vfs-missing",
            "nic-gpu-affinity-missing", "imex-not-running", "imex-nodes-config-missing",
            "imex-channel-missing", "peermem-not-loaded", "fabric-manager-version-mismatch",
            "nccl-socket-fallback",
        )
    },
}


def _bundled() -> list[str]:
    return [name for name, _ in sim.list_scenarios() if name in EXPECTED]


@pytest.mark.parametrize("scenario", _bundled())
def test_broken_scenario_names_failing_category_and_check(scenario: str, tmp_path: Path) -> None:
    category, check_id = EXPECTED[scenario]
    facts = load_bundle(sim.build_bundle(sim.load_scenario(scenario), tmp_path / "bundle"))
    report = validate_facts(facts, read_node_observations, ValidationOptions(), (category,))
    assert [c.name for c in report.categories] == [category]
    failing = {c.id: c for c in report.checks() if c.verdict == Verdict.FAIL}
    assert check_id in failing, {c.id: (c.verdict.value, c.summary) for c in report.checks()}
    assert failing[check_id].category == category and failing[check_id].fix
    assert report.verdict == ClusterVerdict.NOT_READY


def test_every_fault_scenario_of_the_simulator_is_covered() -> None:
    faults = {name for name, _ in sim.list_scenarios() if name.startswith("fault-")}
    assert faults, "the simulator ships fault scenarios"
    assert faults <= set(EXPECTED), sorted(faults - set(EXPECTED))
