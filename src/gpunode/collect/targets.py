"""What the collector runs on a node, and where each answer lands in the bundle.

Shared by the collector (which runs these commands through the API) and the
test API server (which answers them from a bundle), so the two cannot drift.
"""

from __future__ import annotations

from typing import Final

#: The RDMA ports as sysfs shows them, one ``<device>/<path>:<value>`` line per file
#: (parse/infiniband.py ``parse_sysfs_dump``): state, physical state, rate, link layer,
#: the link-error counters, a RoCE port's interface and the function's MTU and SR-IOV
#: counts. Read-only and small; no ``/sys/class/infiniband`` (no HCA) prints nothing.
#: One line, as the collector's batch script runs each command on one line.
SYSFS_INFINIBAND_READ: Final[str] = (
    "cd /sys/class/infiniband 2>/dev/null || exit 0; grep -H . "
    + " ".join(
        f"*/ports/*/{name}"
        for name in (
            "state", "phys_state", "rate", "link_layer", "gid_attrs/ndevs/0",
            *(f"counters/{c}" for c in (
                "symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors",
                "port_rcv_remote_physical_errors", "port_xmit_discards",
                "local_link_integrity_errors", "excessive_buffer_overrun_errors")),
        )
    )
    + " */device/net/*/mtu */device/sriov_numvfs */device/sriov_totalvfs 2>/dev/null; exit 0"
)

#: IMEX as the host has it (parse/imex.py): from the host's root as its init process sees it
#: (the driver pod shares the host's PID namespace), the unit files, the node list with its
#: lines, the channel devices and the daemon's process, one host path a line. A container
#: that cannot see the host says so in one line instead. Read-only; one line, as above.
IMEX_READ: Final[str] = (
    "[ -d /proc/1/root/etc ] && ! [ /proc/1/root -ef / ] && cd /proc/1/root 2>/dev/null"
    " || { echo '# host root not visible'; exit 0; }; ls -1d"
    + "".join(f" {d}/nvidia-imex.service" for d in (
        "lib/systemd/system", "usr/lib/systemd/system", "etc/systemd/system",
        "etc/systemd/system/multi-user.target.wants"))
    + " etc/nvidia-imex/nodes_config.cfg dev/nvidia-caps-imex-channels/channel* 2>/dev/null;"
    " grep -H . etc/nvidia-imex/nodes_config.cfg 2>/dev/null;"
    " grep -Hx nvidia-imex proc/[0-9]*/comm 2>/dev/null | head -1; exit 0"
)

#: argv run inside a pod on the node -> file name under ``nodes/<node>/cmd/``.
NODE_COMMANDS: Final[dict[tuple[str, ...], str]] = {
    ("nvidia-smi", "-q", "-x"): "nvidia-smi-q.xml",
    ("nvidia-smi",): "nvidia-smi.txt",
    ("dmesg",): "dmesg.txt",
    ("lsmod",): "lsmod.txt",
    # the links (issue 26): NVLink state and counters, the GPU/NIC matrix, RDMA ports
    ("nvidia-smi", "nvlink", "-s"): "nvidia-smi-nvlink-s.txt",
    ("nvidia-smi", "nvlink", "-e"): "nvidia-smi-nvlink-e.txt",
    ("nvidia-smi", "topo", "-m"): "nvidia-smi-topo-m.txt",
    ("sh", "-c", SYSFS_INFINIBAND_READ): "sysfs-infiniband.txt",
    ("sh", "-c", IMEX_READ): "imex.txt",
}

#: Commands whose output is kept when they fail: nvidia-smi's error text is the
#: evidence of a broken driver. The link queries' failures are not kept (the files
#: would read as "no NVLink"); what needs them is then not read.
KEEP_FAILED_OUTPUT: Final[frozenset[tuple[str, ...]]] = frozenset(
    {("nvidia-smi", "-q", "-x"), ("nvidia-smi",)}
)

#: Run in the MOFED (DOCA driver) container, which ships infiniband-diags and
#: ibverbs-utils, when it runs on the node; a container without the tool prints nothing.
MOFED_COMMANDS: Final[dict[tuple[str, ...], str]] = {
    ("sh", "-c", "command -v ibstat >/dev/null 2>&1 || exit 0; exec ibstat"): "ibstat.txt",
    ("sh", "-c", "command -v ibv_devinfo >/dev/null 2>&1 || exit 0; exec ibv_devinfo -v"): "ibv_devinfo.txt",
}

#: Commands that read the kernel ring buffer need a privileged container.
PRIVILEGED_COMMANDS: Final[frozenset[str]] = frozenset({"dmesg"})

#: Exporter component id -> file under ``nodes/<node>/metrics/``.
METRICS_COMPONENTS: Final[dict[str, str]] = {
    "dcgm-exporter": "dcgm-exporter.prom",
    "node-exporter": "node-exporter.prom",
}

#: Usual exporter ports, used when the pod does not declare one.
DEFAULT_METRICS_PORTS: Final[dict[str, int]] = {"dcgm-exporter": 9400, "node-exporter": 9100}

#: Host files read from the driver container (the kernel's /proc is shared).
DRIVER_PROC_FILES: Final[tuple[str, ...]] = ("/proc/driver/nvidia/version",)

#: The validator's marker files, read as one tar stream: they may be empty, and
#: their presence is the signal, which ``cat`` of several files cannot show.
VALIDATIONS_DIR: Final[str] = "/run/nvidia/validations"

#: Where the GPU Operator mounts host directories in its pods, for pods whose
#: spec (as saved) does not declare the hostPath volumes: in-pod -> host.
OPERATOR_DEFAULT_MOUNTS: Final[dict[str, str]] = {
    "/runtime/config-dir": "/etc/containerd",
    "/runtime/config-dir.d": "/etc/containerd/conf.d",
    "/run/nvidia": "/run/nvidia",
}

#: Host containerd files, read through the toolkit container's mounts.
CONTAINERD_CONFIG_DEFAULT: Final[str] = "/etc/containerd/config.toml"
CONTAINERD_DROP_IN_DEFAULT: Final[str] = "/etc/containerd/conf.d/99-nvidia.toml"
DOCKER_DAEMON_JSON: Final[str] = "/etc/docker/daemon.json"
