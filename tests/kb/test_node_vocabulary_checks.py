# ruff: noqa: E501  (real log lines are long)
"""The kernel's own vocabulary on the simulated Falcon AI cluster: NVSwitch SXid report lines
without their severity word, read by the number's class in the SXid catalog (a fatal number is
the NVSwitch fatal error, a corrected one leaves the node healthy), and the x86 module loader's
refusal that names no module (the driver's, unless MOFED's module-building pods are down or the
refused module is a livepatch that names what it patches)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.model import NodeReport
from gpunode.sim import load_scenario
from gpunode.sim.build import build_world
from gpunode.sim.finalize import finalize
from gpunode.sim.writer import write

NODE = "gpu-wk-02"


def _report(tmp: Path, *lines: str) -> NodeReport:
    world = build_world(load_scenario("falcon-ai"))
    world.node(NODE).host.kernel_events.extend(lines)
    finalize(world)
    bundle = write(world, tmp / "bundle")
    (report,) = diagnose(load_bundle(bundle), read_node_observations, [NODE]).nodes
    return report


def test_fatal_sxid_data_line(tmp_path: Path) -> None:
    report = _report(tmp_path, "[ 8123.001122] nvidia-nvswitch1: SXid (PCI:0000:84:00.0): 12028, Data {0x000001c0, 0x00bd5c8a, 0x00000500}")
    assert [(r.component, r.cause) for r in report.root_causes] == [("gpu-hardware", "nvswitch_fatal_error")]


def test_corrected_sxid_data_line_is_healthy(tmp_path: Path) -> None:
    report = _report(tmp_path, "[ 8123.001122] nvidia-nvswitch1: SXid (PCI:0000:84:00.0): 11012, Data {0x00000000, 0x00000001}")
    assert not report.root_causes


_RELOCATION = ("[  412.220041] module: x86/modules: Skipping invalid relocation target, existing value is "
               "nonzero for type 1, loc 00000000c1a0b6f1, val ffffffffc0e2c3e8")


def test_unnamed_relocation_refusal_is_the_drivers(tmp_path: Path) -> None:
    report = _report(tmp_path, _RELOCATION)
    assert [(r.component, r.cause) for r in report.root_causes] == [("driver", "error_module_load")]


def test_livepatch_relocation_refusal_is_not_the_drivers(tmp_path: Path) -> None:
    report = _report(tmp_path, _RELOCATION,
                     "[  412.220050] livepatch: failed to initialize patch 'livepatch_nfsd' for module 'nfsd' (-8)")
    assert ("driver", "error_module_load") not in [(r.component, r.cause) for r in report.root_causes]


def test_vf_vectors_exhausted_is_the_kernels(tmp_path: Path) -> None:
    report = _report(tmp_path, "[  301.552210] ice 0000:3b:00.0: Failed to enable SRIOV: Only 0 MSI-X interrupts available for SR-IOV. Not enough to support minimum of 2 MSI-X interrupts per VF for 1 VFs")
    assert [(r.component, r.cause) for r in report.root_causes] == [("kernel", "error_resource_exhausted")]


def test_vfs_enabled_is_healthy(tmp_path: Path) -> None:
    report = _report(tmp_path, "[  301.552210] ice 0000:3b:00.0: Enabling 4 VFs with 17 vectors and 16 queues per VF",
                     "[  301.552299] ixgbe 0000:04:00.0 enp4s0f0: SR-IOV enabled with 1 VFs")
    assert not report.root_causes


def test_loader_key_refusal_of_nvidia_is_secure_boot(tmp_path: Path) -> None:
    # kmod names the module it inserts after its own name: the refusal is the driver's, and
    # the kernel's EKEYREJECTED for it is signature enforcement (Secure Boot)
    report = _report(tmp_path, "modprobe: ERROR: could not insert 'nvidia': Key was rejected by service")
    assert [(r.component, r.cause) for r in report.root_causes] == [("driver", "secure_boot_enabled")]


def test_loader_enokey_with_lockdown_notice_is_secure_boot(tmp_path: Path) -> None:
    report = _report(tmp_path, "Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7",
                     "modprobe: ERROR: could not insert 'nvidia': Required key not available")
    assert [(r.component, r.cause) for r in report.root_causes] == [("driver", "secure_boot_enabled")]


def test_loader_key_refusal_of_other_module_is_not_the_drivers(tmp_path: Path) -> None:
    report = _report(tmp_path, "modprobe: ERROR: could not insert 'zfs': Key was rejected by service")
    assert "driver" not in [r.component for r in report.root_causes]


def test_lockdown_eperm_stays_lockdown(tmp_path: Path) -> None:
    report = _report(tmp_path, "Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7",
                     "modprobe: ERROR: could not insert 'nvidia': Operation not permitted")
    assert [(r.component, r.cause) for r in report.root_causes] == [("driver", "kernel_lockdown_blocks_module")]


_P2P_REFUSED = "nvidia-fs:nvfs_pin_gpu_pages:1292 Error ret -22 invoking nvidia_p2p_get_pages"


def _report_on(tmp: Path, product: str, *lines: str) -> NodeReport:
    world = build_world(load_scenario("falcon-ai"))
    node = world.node(NODE)
    assert node.model is not None
    node.model = dataclasses.replace(node.model, product=product, label=product.replace(" ", "-"))
    if "nvidia.com/gpu.product" in node.labels:  # GFD's label, as GFD names the product
        node.labels["nvidia.com/gpu.product"] = product.replace(" ", "-")
    node.host.kernel_events.extend(lines)
    finalize(world)
    bundle = write(world, tmp / "bundle")
    (report,) = diagnose(load_bundle(bundle), read_node_observations, [NODE]).nodes
    return report


def test_p2p_pin_refused_on_geforce_is_the_gpus(tmp_path: Path) -> None:
    report = _report_on(tmp_path, "NVIDIA GeForce RTX 3090", _P2P_REFUSED)
    assert [(r.component, r.cause) for r in report.root_causes] == [("gpu-hardware", "error_device")]


def test_p2p_pin_refused_on_datacenter_gpu_says_nothing(tmp_path: Path) -> None:
    report = _report(tmp_path, _P2P_REFUSED)
    assert not report.root_causes
