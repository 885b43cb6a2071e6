"""The probe's interconnect section: NVLink links and counters, fabric, topology, RDMA
ports, PCIe affinity, SR-IOV, GPUDirect RDMA, services and IMEX, from fakes."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
import pynvml
from fake_host import gpu_node, put
from fake_nvml import NOT_SUPPORTED, FakeGpu, FakeNvml

from gpunode.probe import load_probe_json, probe_json, run_probe
from gpunode.probe.nvml import collect_nvml, same_bus_id

BUS = ("00000000:18:00.0", "00000000:2A:00.0")
GPU_1A = FakeGpu(bus_id="00000000:1A:00.0")
UUID = bytes.fromhex("6f1c0e0a3a7d4d51a1e3c2b9d0e4f7a2")


def _pair(**extra: object) -> list[FakeGpu]:
    """Two GPUs joined by links 0-5, links 6+ ending at NVSwitches."""
    first = FakeGpu(bus_id=BUS[0], remote=dict.fromkeys(range(6), BUS[1]), inactive_links=(), **extra)
    second = FakeGpu(bus_id=BUS[1], minor=1, remote=dict.fromkeys(range(6), BUS[0]), inactive_links=())
    return [first, second]


def test_links_counters_remote_ends_and_topology() -> None:
    errors = {2: {pynvml.NVML_NVLINK_ERROR_DL_CRC_FLIT: 17, pynvml.NVML_NVLINK_ERROR_DL_RECOVERY: 1}}
    facts = collect_nvml(lib=FakeNvml(_pair(link_errors=errors), ancestor=pynvml.NVML_TOPOLOGY_NODE))
    link = facts.gpus[0].nvlinks[2]
    assert (link.active, link.version, link.remote_pci_bus_id, link.remote_device_type) == (
        True, 4, BUS[1], "GPU",
    )
    assert link.errors == {"replay": 0, "recovery": 1, "crc_flit": 17, "crc_data": 0}
    assert facts.gpus[0].nvlinks[9].remote_device_type == "NVSwitch"
    (pair,) = facts.topology
    assert (pair.a, pair.b, pair.link, pair.pcie, pair.nvlinks) == (0, 1, "NV6", "NODE", 6)
    calls = facts.gpus[0].calls
    assert calls["nvmlDeviceGetNvLinkErrorCounter"] == "ok"
    assert facts.calls["nvmlDeviceGetTopologyCommonAncestor"] == "ok"


def test_counters_not_supported_are_facts_not_failures() -> None:
    gpu = FakeGpu(errors={"nvmlDeviceGetNvLinkErrorCounter": NOT_SUPPORTED})
    facts = collect_nvml(lib=FakeNvml([gpu]))
    assert facts.gpus[0].calls["nvmlDeviceGetNvLinkErrorCounter"] == "not_supported"
    assert facts.gpus[0].nvlinks[0].errors == {} and not facts.gpus[0].lost


def test_fabric_cluster_clique_and_health_mask() -> None:
    degraded_bw = 1  # NVML_GPU_FABRIC_HEALTH_MASK_DEGRADED_BW_TRUE at shift 0
    insufficient = 5 << 8  # INCORRECT_CONFIGURATION_INSUFFICIENT_NVLINKS
    gpu = FakeGpu(cluster_uuid=UUID, clique_id=32766, health_mask=degraded_bw | insufficient)
    facts = collect_nvml(lib=FakeNvml([gpu]))
    one = facts.gpus[0]
    assert one.fabric_cluster_uuid == "6f1c0e0a-3a7d-4d51-a1e3-c2b9d0e4f7a2"
    assert one.fabric_clique_id == 32766
    assert one.fabric_health == ("degraded_bandwidth", "insufficient_nvlinks")
    assert one.calls["nvmlDeviceGetGpuFabricInfoV"] == "ok" == one.calls["nvmlDeviceGetGpuFabricInfo"]


def test_fabric_falls_back_to_the_older_call() -> None:
    facts = collect_nvml(lib=FakeNvml([FakeGpu(fabric_v=False)]))
    one = facts.gpus[0]
    assert one.calls["nvmlDeviceGetGpuFabricInfoV"] == "function_not_found"
    assert (one.fabric_state, one.fabric_cluster_uuid, one.fabric_health) == ("Completed", None, None)


def test_bus_ids_compare_across_tools() -> None:
    assert same_bus_id("00000000:2A:00.0", "0000:2a:00.0")
    assert same_bus_id("2a:00.0", "00000000:2A:00.0")
    assert not same_bus_id("00000000:2A:00.0", "00000000:2B:00.0")


def test_pcie_only_gpus_have_no_nvlink_peers(tmp_path: Path) -> None:
    gpu = FakeGpu(nvlinks=0, fabric_state=pynvml.NVML_GPU_FABRIC_STATE_NOT_SUPPORTED)
    result = run_probe(str(tmp_path), "pcie", kernel_log=False, nvml_lib=FakeNvml([gpu]))
    links = result.interconnect
    assert links.nvlink == "no NVLink peers (NVLink: not supported)"
    assert links.infiniband == "no InfiniBand HCA (no /sys/class/infiniband)"
    assert result.nvml.topology == () and result.errors == ()


def test_bridge_capable_gpus_without_a_bridge_have_no_nvlink_peers(tmp_path: Path) -> None:
    gpus = [FakeGpu(nvlinks=4, inactive_links=(0, 1, 2, 3)) for _ in range(2)]
    result = run_probe(str(tmp_path), "ws", kernel_log=False, nvml_lib=FakeNvml(gpus))
    assert result.interconnect.nvlink == "no NVLink peers (8 links on 2 GPU(s), none active)"


def _pci_tree(root: Path) -> None:
    """pci0000:17 -> root port 17:01.0 -> switch 18:00.0 -> ports 19:00.0 (GPU) and 19:01.0 (NIC);
    a second NIC under another root complex on NUMA node 1."""
    gpu = "sys/devices/pci0000:17/0000:17:01.0/0000:18:00.0/0000:19:00.0/0000:1a:00.0"
    near = "sys/devices/pci0000:17/0000:17:01.0/0000:18:00.0/0000:19:01.0/0000:1b:00.0"
    far = "sys/devices/pci0000:97/0000:97:01.0/0000:98:00.0"
    for path, numa in ((gpu, "0"), (near, "0"), (far, "1")):
        put(root, f"{path}/numa_node", f"{numa}\n")
    (root / "sys/bus/pci/devices").mkdir(parents=True)
    for path in (gpu, near, far):
        link = root / "sys/bus/pci/devices" / path.rsplit("/", 1)[1]
        os.symlink(f"../../../{path.removeprefix('sys/')}", link)
    for dev, path, layer in (("mlx5_0", near, "InfiniBand"), ("mlx5_1", far, "InfiniBand")):
        base = root / "sys/class/infiniband" / dev
        base.mkdir(parents=True, exist_ok=True)
        os.symlink(f"../../../{path.removeprefix('sys/')}", base / "device")
        for name, text in (("state", "4: ACTIVE"), ("phys_state", "5: LinkUp"), ("link_layer", layer),
                           ("rate", "400 Gb/sec (4X NDR)"), ("counters/symbol_error", "3"),
                           ("counters/link_downed", "0")):
            put(root, f"sys/class/infiniband/{dev}/ports/1/{name}", f"{text}\n")


def test_nearest_nic_per_gpu_sriov_services_and_imex(tmp_path: Path) -> None:
    root = gpu_node(tmp_path / "host")
    for name in ("state", "phys_state", "link_layer", "rate"):  # the fixture's RoCE port goes
        (root / "sys/class/infiniband/mlx5_0/ports/1" / name).unlink()
    (root / "sys/class/infiniband/mlx5_0/ports/1").rmdir()
    (root / "sys/class/infiniband/mlx5_0/ports").rmdir()
    (root / "sys/class/infiniband/mlx5_0/hca_type").unlink()
    (root / "sys/class/infiniband/mlx5_0").rmdir()
    _pci_tree(root)
    put(root, "sys/class/net/ens1f0/device/sriov_totalvfs", "16\n")
    put(root, "sys/class/net/ens1f0/device/sriov_numvfs", "0\n")
    put(root, "sys/class/net/eth0/device/vendor", "0x1af4\n")
    put(root, "etc/nvidia-imex/nodes_config.cfg", "# peers\n10.0.0.11\n10.0.0.12\n\n")
    put(root, "dev/nvidia-caps-imex-channels/channel0", "")
    put(root, "usr/lib/systemd/system/nvidia-fabricmanager.service", "[Unit]\n")
    put(root, "etc/systemd/system/multi-user.target.wants/nvidia-fabricmanager.service", "[Unit]\n")
    result = run_probe(str(root), "hgx", kernel_log=False, nvml_lib=FakeNvml([GPU_1A]))
    links = result.interconnect
    assert [(a.gpu, a.device, a.link) for a in links.nic_affinity] == [(0, "mlx5_0", "PIX")]
    assert links.infiniband == "InfiniBand: 2/2 ports ACTIVE"
    assert [(s.netdev, s.numvfs, s.totalvfs) for s in links.sriov] == [("ens1f0", 0, 16)]
    assert (links.imex.peers, links.imex.channels) == (("10.0.0.11", "10.0.0.12"), ("channel0",))
    fm = links.services["fabricmanager"]
    assert (fm.running, fm.enabled, fm.installed) == (True, True, True)
    assert links.services["imex"].installed is False
    assert (links.gpudirect.nvidia_peermem, links.gpudirect.dma_buf) == (False, "supported")
    assert links.nvswitches == 1
    port = next(p for p in result.host.rdma_ports if p.device == "mlx5_0")
    assert (port.width, port.speed, port.counters) == ("4X", "NDR", {"symbol_error": 3, "link_downed": 0})
    again = load_probe_json(probe_json(result))
    assert msgspec.structs.asdict(again.interconnect) == msgspec.structs.asdict(links)


def test_far_nic_is_across_numa_nodes(tmp_path: Path) -> None:
    root = tmp_path / "host"
    _pci_tree(root)
    (root / "sys/class/infiniband/mlx5_0/device").unlink()
    far = "../../../devices/pci0000:97/0000:97:01.0/0000:98:00.0"
    os.symlink(far, root / "sys/class/infiniband/mlx5_0/device")
    result = run_probe(str(root), "x", kernel_log=False, nvml_lib=FakeNvml([GPU_1A]))
    assert [(a.device, a.link) for a in result.interconnect.nic_affinity] == [("mlx5_0", "SYS")]


def test_an_older_probe_file_without_the_section_still_loads() -> None:
    result = run_probe("/nonexistent-root", "old", kernel_log=False, nvml_lib=FakeNvml([]))
    raw = msgspec.json.decode(probe_json(result))
    del raw["interconnect"]
    assert load_probe_json(msgspec.json.encode(raw)).interconnect.nvlink == "unknown"
