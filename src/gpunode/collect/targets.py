"""What the collector runs on a node, and where each answer lands in the bundle.

Shared by the collector (which runs these commands through the API) and the
test API server (which answers them from a bundle), so the two cannot drift.
"""

from __future__ import annotations

from typing import Final

#: argv run inside a pod on the node -> file name under ``nodes/<node>/cmd/``.
NODE_COMMANDS: Final[dict[tuple[str, ...], str]] = {
    ("nvidia-smi", "-q", "-x"): "nvidia-smi-q.xml",
    ("nvidia-smi",): "nvidia-smi.txt",
    ("dmesg",): "dmesg.txt",
    ("lsmod",): "lsmod.txt",
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
