"""CDI specs, Prometheus scrapes and RDMA port sysfs files."""

from __future__ import annotations

import pytest
from node_fixtures import read_fixture

from gpunode.errors import ParseError
from gpunode.parse.cdi import parse_cdi_spec
from gpunode.parse.infiniband import UNNAMED_CA, parse_ibstat, parse_rdma_port, port_file
from gpunode.parse.prom import parse_prometheus_text, samples_named

UUID0 = "GPU-0b1cd8a4-36d2-9e1f-4f7e-8a1a4c3e2b61"


def test_cdi_spec_from_nvidia_ctk() -> None:
    spec = parse_cdi_spec("/var/run/cdi/nvidia.yaml", read_fixture("runtime", "cdi", "nvidia.yaml"))
    assert (spec.kind, spec.cdi_version) == ("nvidia.com/gpu", "0.5.0")
    assert spec.devices[:2] == ("0", "1")
    assert UUID0 in spec.devices and "all" in spec.devices
    assert "nvidia.com/gpu=all" in spec.qualified_devices()


def test_cdi_spec_from_device_plugin() -> None:
    path = "/var/run/cdi/k8s.device-plugin.nvidia.com-gpu.json"
    spec = parse_cdi_spec(
        path, read_fixture("runtime", "cdi", "k8s.device-plugin.nvidia.com-gpu.json")
    )
    assert spec.kind == "k8s.device-plugin.nvidia.com/gpu"
    assert spec.devices == (UUID0, "GPU-8d0f6a41-2c7e-4b19-93d5-1fa6c0e7b2d8")
    assert spec.path == path


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("/etc/cdi/x.json", '{"cdiVersion": "0.5.0", "kind": "nvidia.com/gpu", "devices": ['),
        ("/etc/cdi/x.yaml", "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices: [\n"),
        ("/etc/cdi/x.yaml", "cdiVersion: 0.5.0\ndevices: []\n"),
        ("/etc/cdi/x.yaml", "kind: gpu\ncdiVersion: 0.5.0\n"),
        ("/etc/cdi/x.yaml", "kind: nvidia.com/gpu\ndevices: []\n"),
        (
            "/etc/cdi/x.yaml",
            "kind: nvidia.com/gpu\ncdiVersion: 0.5.0\ndevices:\n- containerEdits: {}\n",
        ),
        ("/etc/cdi/x.yaml", "- just\n- a list\n"),
    ],
)
def test_malformed_cdi(path: str, text: str) -> None:
    with pytest.raises(ParseError):
        parse_cdi_spec(path, text)


def test_dcgm_exporter_scrape() -> None:
    samples = parse_prometheus_text(read_fixture("h100-hgx", "dcgm-exporter.prom"))
    temps = samples_named(samples, "DCGM_FI_DEV_GPU_TEMP")
    assert [(s.labels["gpu"], s.value) for s in temps] == [("0", 61.0), ("1", 33.0)]
    assert temps[0].labels["UUID"] == UUID0
    assert temps[0].labels["hostname"] == "gpu-wk-01"
    assert temps[0].labels["pod"] == "llm-train-0"
    xid = samples_named(samples, "DCGM_FI_DEV_XID_ERRORS")
    assert [(s.labels["err_code"], s.value) for s in xid] == [("0", 0.0), ("63", 63.0)]
    (count,) = samples_named(samples, "DCGM_EXP_XID_ERRORS_COUNT")
    assert (count.labels["xid"], count.value) == ("63", 1.0)
    energy = samples_named(samples, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION")
    assert energy[0].value == 5174020815.0


def test_counter_samples_keep_total_suffix() -> None:
    samples = parse_prometheus_text(read_fixture("h100-hgx", "node-exporter.prom"))
    downed = samples_named(samples, "node_infiniband_link_downed_total")
    assert [(s.labels["device"], s.value) for s in downed] == [("mlx5_0", 0.0), ("mlx5_1", 3.0)]
    assert samples_named(samples, "node_infiniband_link_downed") == []
    rate = samples_named(samples, "node_infiniband_rate_bytes_per_second")
    assert rate[0].value == 5e10


@pytest.mark.parametrize(
    "text",
    ['metric{a="1" 3\n', 'metric{a="1"} not-a-number\n', "# TYPE x gauge\nx{a=1} 2\n"],
)
def test_malformed_prometheus(text: str) -> None:
    with pytest.raises(ParseError):
        parse_prometheus_text(text)


def test_rdma_port_active_roce() -> None:
    files = {
        "state": "4: ACTIVE\n",
        "phys_state": "5: LinkUp\n",
        "link_layer": "Ethernet\n",
        "rate": "400 Gb/sec (4X NDR)\n",
    }
    port = parse_rdma_port("mlx5_0", 1, files)
    assert (port.state, port.state_id, port.phys_state) == ("ACTIVE", 4, "LinkUp")
    assert (port.link_layer, port.rate_gbps) == ("Ethernet", 400.0)


def test_rdma_port_down_by_sysfs_path() -> None:
    files = {
        port_file("mlx5_1", 1, "state"): "1: DOWN\n",
        port_file("mlx5_1", 1, "phys_state"): "3: Disabled\n",
        port_file("mlx5_1", 1, "link_layer"): "InfiniBand\n",
        port_file("mlx5_1", 1, "rate"): "10 Gb/sec (4X)\n",
    }
    port = parse_rdma_port("mlx5_1", 1, files)
    assert (port.state_id, port.phys_state, port.link_layer, port.rate_gbps) == (
        1,
        "Disabled",
        "InfiniBand",
        10.0,
    )


@pytest.mark.parametrize(
    "files", [{}, {"state": "ACTIVE\n"}, {"state": "4: ACTIVE", "phys_state": "up"}]
)
def test_malformed_rdma_port(files: dict[str, str]) -> None:
    with pytest.raises(ParseError):
        parse_rdma_port("mlx5_0", 1, files)


def test_ibstat_one_port_form() -> None:
    """``ibstat <ca> <port>`` prints ``CA: 'name'`` and the port's fields unindented
    (infiniband-diags ibstat.c, port_dump with ``alone``); a port block pasted without
    its CA header is still a port."""
    one = "CA: 'mlx5_0'\nPort 1:\nState: Down\nPhysical state: Polling\nRate: 10\nLink layer: InfiniBand\n"
    (port,) = parse_ibstat(one)
    assert (port.device, port.port, port.state, port.phys_state, port.rate_gbps) == (
        "mlx5_0", 1, "DOWN", "Polling", 10.0)
    (bare,) = parse_ibstat("Port 1:\n                State: Down\n                Physical state: Polling\n")
    assert (bare.device, bare.state_id, bare.phys_state) == (UNNAMED_CA, 1, "Polling")
    assert parse_ibstat("ibpanic: [1] main: stat of IB device 'mlx5_8' failed\n") == []
