"""Prometheus scrapes of a GPU node: dcgm-exporter (:9400) and node_exporter (:9100)."""

from __future__ import annotations

from dataclasses import dataclass

from gpunode.sim.models import DRIVER_VERSION, GpuModel
from gpunode.sim.world import Gpu, NodeState

XID_NAMES = {48: "Double Bit ECC Error", 63: "Row Remapping Event", 79: "GPU has fallen off the bus"}

# (metric, type, help) in the order of the operator's dcp-metrics-included.csv
DCGM_FIELDS = (
    ("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."),
    ("DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz)."),
    ("DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C)."),
    ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
    ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ)."),
    ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries."),
    ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
    ("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %)."),
    ("DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %)."),
    ("DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %)."),
    ("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."),
    ("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."),
    ("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."),
    ("DCGM_FI_DEV_FB_RESERVED", "gauge", "Framebuffer memory reserved (in MiB)."),
    (
        "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
        "counter",
        "Total number of NVLink bandwidth counters for all lanes.",
    ),
    ("DCGM_FI_DEV_VGPU_LICENSE_STATUS", "gauge", "vGPU License status"),
    (
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
        "counter",
        "Number of remapped rows for uncorrectable errors",
    ),
    ("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for correctable errors"),
    ("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed"),
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active."),
    ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active."),
    (
        "DCGM_FI_PROF_DRAM_ACTIVE",
        "gauge",
        "Ratio of cycles the device memory interface is active sending or receiving data.",
    ),
    (
        "DCGM_FI_PROF_PCIE_TX_BYTES",
        "gauge",
        "The rate of data transmitted over the PCIe bus - including both protocol headers and data "
        "payloads - in bytes per second.",
    ),
    (
        "DCGM_FI_PROF_PCIE_RX_BYTES",
        "gauge",
        "The rate of data received over the PCIe bus - including both protocol headers and data "
        "payloads - in bytes per second.",
    ),
)


@dataclass(frozen=True)
class GpuUse:
    """Which pod (if any) holds a GPU, for the exporter's pod mapping labels."""

    namespace: str = ""
    pod: str = ""
    container: str = ""

    @property
    def busy(self) -> bool:
        return bool(self.pod)


def _values(gpu: Gpu, model: GpuModel, use: GpuUse) -> dict[str, object]:
    """Plausible samples of one GPU's fields (a field not here reads 0); made once per GPU,
    not once per field."""
    busy = use.busy
    used = 72534 if busy else 0
    values = {
        "DCGM_FI_DEV_SM_CLOCK": model.max_sm_mhz if busy else 345,
        "DCGM_FI_DEV_MEM_CLOCK": model.mem_mhz,
        "DCGM_FI_DEV_MEMORY_TEMP": (65 if busy else 35) + gpu.index % 4,
        "DCGM_FI_DEV_GPU_TEMP": (61 if busy else 31) + gpu.index % 5,
        "DCGM_FI_DEV_POWER_USAGE": f"{(598.43 if busy else 71.27) + 1.9 * gpu.index:.3f}",
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": 41822913776 + 1000003 * gpu.index,
        "DCGM_FI_DEV_GPU_UTIL": 97 if busy else 0,
        "DCGM_FI_DEV_MEM_COPY_UTIL": 41 if busy else 0,
        "DCGM_FI_DEV_XID_ERRORS": gpu.last_xid,
        "DCGM_FI_DEV_FB_FREE": model.memory_mib - model.reserved_mib - used,
        "DCGM_FI_DEV_FB_USED": used,
        "DCGM_FI_DEV_FB_RESERVED": model.reserved_mib,
        "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL": 918272394 if busy else 0,
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": gpu.remapped_unc,
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE": "0.981234" if busy else "0.000000",
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": "0.612873" if busy else "0.000000",
        "DCGM_FI_PROF_DRAM_ACTIVE": "0.402311" if busy else "0.000000",
        "DCGM_FI_PROF_PCIE_TX_BYTES": 88117 if busy else 2874,
        "DCGM_FI_PROF_PCIE_RX_BYTES": 123551 if busy else 3127,
    }
    return values


# Families a vGPU guest's DCGM exporter does not serve (dcgm-exporter issue 236).
VGPU_ABSENT_FIELDS = frozenset({"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_MEMORY_TEMP"})


def dcgm_scrape(node: NodeState, uses: list[GpuUse]) -> str:
    """The exporter's /metrics for the GPUs it can see (lost GPUs are gone from DCGM too)."""
    assert node.model is not None
    visible = [(g, u) for g, u in zip(node.gpus, uses, strict=True) if not g.lost or g.last_xid]
    # Each GPU's samples and label sets once, not once per field (25 fields a GPU).
    series = [(gpu, _values(gpu, node.model, use), _labels(node, gpu, use), _labels(node, gpu, use, xid=True))
              for gpu, use in visible]
    out: list[str] = []
    for field, kind, help_text in DCGM_FIELDS:
        out += [f"# HELP {field} {help_text}", f"# TYPE {field} {kind}"]
        xid = field == "DCGM_FI_DEV_XID_ERRORS"
        for gpu, values, labels, xid_labels in series:
            if gpu.lost and not xid:
                continue
            if gpu.vgpu and field in VGPU_ABSENT_FIELDS:
                continue
            out.append(f"{field}{{{xid_labels if xid else labels}}} {values.get(field, 0)}")
    return "\n".join(out) + "\n"


def _labels(node: NodeState, gpu: Gpu, use: GpuUse, xid: bool = False) -> str:
    """Label set in the exporter's fixed order (§6.3); `xid` adds the error's code and name
    where the XID field of a GPU that had one is labelled."""
    assert node.model is not None
    parts = [
        f'gpu="{gpu.index}"',
        f'UUID="{gpu.uuid}"',
        f'pci_bus_id="{gpu.bus_id}"',
        f'device="nvidia{gpu.index}"',
        f'modelName="{node.model.product}"',
        f'Hostname="{node.name}"',
        f'DCGM_FI_DRIVER_VERSION="{DRIVER_VERSION}"',
        f'container="{use.container}"',
    ]
    if xid and gpu.last_xid:
        parts += [f'err_code="{gpu.last_xid}"', f'err_msg="{XID_NAMES.get(gpu.last_xid, "")}"']
    parts += [f'namespace="{use.namespace}"', f'pod="{use.pod}"']
    return ",".join(parts)


# -- node_exporter -------------------------------------------------------------


def node_exporter_scrape(node: NodeState, boot_epoch: int) -> str:
    """A realistic subset of node_exporter output, including the infiniband collector."""
    assert node.spec is not None
    out = [
        "# HELP node_boot_time_seconds Node boot time, in unixtime.",
        "# TYPE node_boot_time_seconds gauge",
        f"node_boot_time_seconds {boot_epoch}",
        "# HELP node_load1 1m load average.",
        "# TYPE node_load1 gauge",
        "node_load1 12.87",
        "# HELP node_memory_MemAvailable_bytes Memory information field MemAvailable_bytes.",
        "# TYPE node_memory_MemAvailable_bytes gauge",
        "node_memory_MemAvailable_bytes 1.612844503e+12",
        "# HELP node_memory_MemTotal_bytes Memory information field MemTotal_bytes.",
        "# TYPE node_memory_MemTotal_bytes gauge",
        "node_memory_MemTotal_bytes 2.164110848e+12",
        "# HELP node_uname_info Labeled system information as provided by the uname system call.",
        "# TYPE node_uname_info gauge",
        f'node_uname_info{{domainname="(none)",machine="x86_64",nodename="{node.name}",release="{node.spec.kernel}",'
        'sysname="Linux",version="#141-Ubuntu SMP Fri Jan 10 21:18:28 UTC 2025"} 1',
    ]
    if node.spec.nics and node.host.mofed_loaded:
        out += _infiniband(node)
    return "\n".join(out) + "\n"


def _ib_series(name: str, kind: str, help_text: str, values: list[tuple[str, str]]) -> list[str]:
    lines = [f"# HELP node_infiniband_{name} {help_text}", f"# TYPE node_infiniband_{name} {kind}"]
    return lines + [f"node_infiniband_{name}{{{labels}}} {value}" for labels, value in values]


def _infiniband(node: NodeState) -> list[str]:
    assert node.spec is not None
    devs = [f"mlx5_{i}" for i in range(node.spec.nics)]
    active = node.host.rdma_ports_active
    port = [(f'device="{d}",port="1"', d) for d in devs]
    out: list[str] = []
    out += _ib_series(
        "info",
        "gauge",
        "Non-numeric data from /sys/class/infiniband/<device>, value is always 1.",
        [
            (f'board_id="MT_0000000838",device="{d}",firmware_version="28.43.1014",hca_type="MT4129"', "1")
            for d in devs
        ],
    )
    out += _ib_series(
        "physical_state_id",
        "gauge",
        "Physical state of the InfiniBand port (0: no change, 1: sleep, 2: polling, 3: disable, "
        "4: shift, 5: link up, 6: link error recover, 7: phytest)",
        [(lbl, "5" if active else "3") for lbl, _ in port],
    )
    out += _ib_series(
        "port_data_received_bytes_total",
        "counter",
        "Number of data octets received on all links",
        [(lbl, f"{8.13e14 + 1e12 * i:.6e}") for i, (lbl, _) in enumerate(port)],
    )
    out += _ib_series(
        "port_data_transmitted_bytes_total",
        "counter",
        "Number of data octets transmitted on all links",
        [(lbl, f"{7.92e14 + 1e12 * i:.6e}") for i, (lbl, _) in enumerate(port)],
    )
    out += _ib_series(
        "port_errors_received_total",
        "counter",
        "Number of packets containing an error that were received on this port",
        [(lbl, "0") for lbl, _ in port],
    )
    out += _ib_series(
        "rate_bytes_per_second", "gauge", "Maximum signal transfer rate", [(lbl, "5e+10") for lbl, _ in port]
    )
    out += _ib_series(
        "state_id",
        "gauge",
        "State of the InfiniBand port (0: no change, 1: down, 2: init, 3: armed, 4: active, 5: act defer)",
        [(lbl, "4" if active else "1") for lbl, _ in port],
    )
    return out
