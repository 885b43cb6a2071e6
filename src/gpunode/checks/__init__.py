"""Pure checks over collected facts; importing this package registers them all."""

from gpunode.checks import (
    alternatives,
    cluster,
    driver,
    held_gpus,
    host,
    interconnect,
    kernel,
    kernel_kills,
    observability,
    pods,
    probe,
    resources,
    sandbox,
    toolkit,
    toolkit_pending,
    unit_journal,
    workload_logs,
    xid,
)
from gpunode.checks.base import REGISTRY, Check, check, checks_for
from gpunode.checks.context import NodeContext

__all__ = [
    "REGISTRY",
    "Check",
    "NodeContext",
    "alternatives",
    "check",
    "checks_for",
    "cluster",
    "driver",
    "held_gpus",
    "host",
    "interconnect",
    "kernel",
    "kernel_kills",
    "observability",
    "pods",
    "probe",
    "resources",
    "sandbox",
    "toolkit",
    "unit_journal",
    "workload_logs",
    "xid",
]
