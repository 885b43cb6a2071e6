"""The interconnect checks over probe facts: healthy links say so, each broken link or
port is named with its cause (data/causes/interconnect.toml)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from probe_check_helpers import (
    Facts,
    add_gpus,
    component,
    excerpts,
    gpu,
    judge,
    recorded,
    root_cause,
    root_causes,
    status,
)

from gpunode.model import Status

ACTIVE = {"state": "ACTIVE", "state_id": 4, "phys_state": "LinkUp"}


def _links(
    facts: Facts, count: int, per_gpu: int = 18, down: dict[int, tuple[int, ...]] | None = None
) -> None:
    add_gpus(facts, count)
    for index in range(count):
        off = (down or {}).get(index, ())
        gpu(facts, index)["nvlinks"] = [
            {"link": n, "active": n not in off, "remote_device_type": "NVSwitch", "errors": {}}
            for n in range(per_gpu)
        ]


def _port(device: str, layer: str = "InfiniBand", rate: float = 400.0, **extra: Any) -> dict[str, Any]:
    return {"device": device, "port": 1, **ACTIVE, "link_layer": layer, "rate_gbps": rate, **extra}


def test_hgx_links_all_up_are_ok(tmp_path: Path) -> None:
    facts = recorded()
    _links(facts, 8)
    report = judge(tmp_path, facts)
    assert status(report, "nvlink-fabric") == Status.OK
    assert component(report, "nvlink-fabric").summary == "144 NVLinks active on 8 GPU(s)"
    assert root_causes(report) == []


def test_some_links_of_one_gpu_inactive(tmp_path: Path) -> None:
    facts = recorded()
    _links(facts, 8, down={3: (4, 7)})
    report = judge(tmp_path, facts)
    assert root_causes(report) == [("nvlink-fabric", "nvlink_inactive")]
    rc = root_cause(report, "nvlink-fabric")
    assert "GPU 3 (00000000:48:00.0): 16/18 NVLinks active (peers: 18); inactive: link 4, 7" in excerpts(rc)


def test_every_link_of_one_gpu_down(tmp_path: Path) -> None:
    facts = recorded()
    _links(facts, 4, per_gpu=12, down={1: tuple(range(12))})
    report = judge(tmp_path, facts)
    assert root_causes(report) == [("nvlink-fabric", "nvlink_down")]
    assert status(report, "nvlink-fabric") == Status.FAILED


def test_bridge_capable_boards_without_bridges_have_no_peers(tmp_path: Path) -> None:
    facts = recorded()
    _links(facts, 2, per_gpu=4, down={0: (0, 1, 2, 3), 1: (0, 1, 2, 3)})
    report = judge(tmp_path, facts)
    nv = component(report, "nvlink-fabric")
    assert (nv.status, nv.summary) == (
        Status.NOT_DEPLOYED,
        "no NVLink peers (8 links on 2 GPU(s), none active)",
    )


def test_link_counters(tmp_path: Path) -> None:
    facts = recorded()
    _links(facts, 2)
    gpu(facts, 1)["nvlinks"][5]["errors"] = {"replay": 3, "recovery": 0, "crc_flit": 250, "crc_data": 0}
    gpu(facts, 0)["nvlinks"][2]["errors"] = {"replay": 0, "recovery": 2, "crc_flit": 0, "crc_data": 0}
    report = judge(tmp_path, facts)
    nv = component(report, "nvlink-fabric")
    assert nv.cause == "nvlink_recovery_errors" and nv.status == Status.DEGRADED
    rc = root_cause(report, "nvlink-fabric")
    assert "GPU 0 (00000000:18:00.0) link 2: 2 recoveries" in excerpts(rc)
    assert "link 5: 253 CRC/replay errors" in excerpts(rc)


def _fabric(facts: Facts, count: int, cliques: list[tuple[str | None, int]]) -> None:
    _links(facts, count)
    for index, (uuid, clique) in enumerate(cliques):
        gpu(facts, index).update(
            fabric_state="Completed",
            fabric_status="Success",
            fabric_cluster_uuid=uuid,
            fabric_clique_id=clique,
            fabric_health=[],
        )


def test_gpu_in_another_clique(tmp_path: Path) -> None:
    facts = recorded()
    uuid = "6f1c0e0a-3a7d-4d51-a1e3-c2b9d0e4f7a2"
    _fabric(facts, 4, [(uuid, 7), (uuid, 7), (None, 0), (uuid, 7)])
    facts["host"]["processes"]["nv-fabricmanager"] = True
    report = judge(tmp_path, facts)
    assert ("nvlink-fabric", "fabric_clique_mismatch") in root_causes(report)
    assert "GPU 2: clique 0 of no cluster" in excerpts(root_cause(report, "nvlink-fabric"))


def test_one_clique_is_healthy_and_health_mask_degrades(tmp_path: Path) -> None:
    facts = recorded()
    uuid = "6f1c0e0a-3a7d-4d51-a1e3-c2b9d0e4f7a2"
    _fabric(facts, 2, [(uuid, 7), (uuid, 7)])
    facts["host"]["processes"]["nv-fabricmanager"] = True
    assert root_causes(judge(tmp_path / "a", facts)) == []
    gpu(facts, 1)["fabric_health"] = ["degraded_bandwidth"]
    report = judge(tmp_path / "b", facts)
    assert root_causes(report) == [("nvlink-fabric", "fabric_health_degraded")]


def _imex(facts: Facts, *, running: bool | None, peers: list[str], channels: list[str]) -> None:
    facts["interconnect"] = {
        "services": {"imex": {"running": running, "enabled": True, "installed": True}},
        "imex": {"nodes_config": "/etc/nvidia-imex/nodes_config.cfg", "peers": peers, "channels": channels},
    }


@pytest.mark.parametrize(
    ("running", "peers", "channels", "cause"),
    [
        (False, ["10.0.0.1"], ["channel0"], "imex_not_running"),
        (True, [], ["channel0"], "imex_nodes_config_missing"),
        (True, ["10.0.0.1", "10.0.0.2"], [], "imex_channel_missing"),
        (True, ["10.0.0.1", "10.0.0.2"], ["channel0"], None),
    ],
)
def test_imex(
    tmp_path: Path, running: bool, peers: list[str], channels: list[str], cause: str | None
) -> None:
    facts = recorded()
    _imex(facts, running=running, peers=peers, channels=channels)
    report = judge(tmp_path, facts)
    assert component(report, "imex").cause == cause
    if cause is None:
        assert component(report, "imex").summary == "nvidia-imex running, 2 peer(s)"


def _ports(facts: Facts, ports: list[dict[str, Any]]) -> None:
    facts["host"]["rdma_ports"] = ports
    facts["host"]["modules"]["mlx5_core"] = {
        "name": "mlx5_core",
        "size": 1,
        "refcount": None,
        "used_by": [],
        "state": "Live",
    }


@pytest.mark.parametrize(
    ("odd", "cause", "said"),
    [
        (
            {"state": "DOWN", "state_id": 1, "phys_state": "Polling"},
            "ib_port_polling",
            "mlx5_3/1 DOWN (Polling",
        ),
        (
            {"state": "INIT", "state_id": 2, "phys_state": "LinkUp"},
            "ib_port_no_subnet_manager",
            "mlx5_3/1 INIT (LinkUp",
        ),
        (
            {"rate_gbps": 100.0},
            "rdma_rate_below_peers",
            "mlx5_3/1 ACTIVE (LinkUp 100 Gb/s); peers at 400 Gb/s",
        ),
        (
            {"link_layer": "Ethernet"},
            "rdma_link_layer_mismatch",
            "mlx5_3/1 ACTIVE (LinkUp 400 Gb/s) is Ethernet",
        ),
        ({"counters": {"link_downed": 3, "symbol_error": 0}}, "ib_port_errors", "mlx5_3/1: link_downed 3"),
    ],
)
def test_broken_ports_are_named(tmp_path: Path, odd: dict[str, Any], cause: str, said: str) -> None:
    facts = recorded()
    _ports(facts, [_port(f"mlx5_{n}") for n in range(3)] + [{**_port("mlx5_3"), **odd}])
    report = judge(tmp_path, facts)
    assert root_causes(report) == [("rdma-links", cause)]
    assert said in excerpts(root_cause(report, "rdma-links"))


def test_roce_mtu_mismatch_and_healthy_mixed_fabrics(tmp_path: Path) -> None:
    facts = recorded()
    ib = [_port(f"mlx5_{n}") for n in range(4)]
    storage = [
        _port("mlx5_4", "Ethernet", 200.0, netdev="ens1f0", mtu=9000),
        _port("mlx5_5", "Ethernet", 200.0, netdev="ens1f1", mtu=9000),
    ]
    _ports(facts, ib + storage)
    report = judge(tmp_path / "ok", facts)
    assert root_causes(report) == []
    assert component(report, "rdma-links").summary == "6/6 RDMA ports ACTIVE (InfiniBand, RoCE)"
    storage[1]["mtu"] = 1500
    storage.append(_port("mlx5_6", "Ethernet", 200.0, netdev="ens2f0", mtu=9000))
    _ports(facts, ib + storage)
    report = judge(tmp_path / "mtu", facts)
    assert root_causes(report) == [("rdma-links", "roce_mtu_mismatch")]
    assert "mlx5_5/1 (ens1f1) MTU 1500; the other RoCE ports: MTU 9000" in excerpts(
        root_cause(report, "rdma-links")
    )


def test_vfs_missing_beside_a_sibling_with_vfs(tmp_path: Path) -> None:
    facts = recorded()
    _ports(facts, [_port("mlx5_0", "Ethernet"), _port("mlx5_1", "Ethernet")])
    facts["interconnect"] = {
        "sriov": [
            {"netdev": "ens1f0", "numvfs": 8, "totalvfs": 16},
            {"netdev": "ens1f1", "numvfs": 0, "totalvfs": 16},
        ]
    }
    report = judge(tmp_path, facts)
    assert root_causes(report) == [("rdma-links", "sriov_vfs_missing")]
    assert excerpts(root_cause(report, "rdma-links")) == "ens1f1: 0 of 16 VFs"


def test_a_gpu_far_from_every_nic(tmp_path: Path) -> None:
    facts = recorded()
    add_gpus(facts, 2)
    _ports(facts, [_port("mlx5_0"), _port("mlx5_1")])
    facts["interconnect"] = {
        "nic_affinity": [
            {"gpu": 0, "device": "mlx5_0", "link": "PIX"},
            {"gpu": 1, "device": "mlx5_0", "link": "SYS"},
        ],
        "gpudirect": {"nvidia_peermem": True, "dma_buf": "supported", "dma_buf_reason": "open kernel module"},
    }
    report = judge(tmp_path, facts)
    assert root_causes(report) == [("gpudirect-rdma", "nic_gpu_affinity_missing")]
    assert excerpts(root_cause(report, "gpudirect-rdma")) == "GPU 1: nearest mlx5_0 is SYS"


def test_the_recorded_h200_states_it_has_no_links(tmp_path: Path) -> None:
    report = judge(tmp_path, recorded())
    summaries = {c: component(report, c).summary for c in ("nvlink-fabric", "rdma-links", "imex")}
    assert summaries == {
        "nvlink-fabric": "no NVLink peers (no NVLinks)",
        "rdma-links": "no InfiniBand HCA",
        "imex": "no IMEX on this node",
    }
    assert root_causes(report) == []
