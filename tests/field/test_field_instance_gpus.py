"""A node whose software counts fewer GPUs than its cloud instance type has (checks.instance_gpus):
the instance type's documented size is a fact about the machine, so the missing GPUs are lost
below the driver (gpu-hardware ``gpu_missing``), whichever count (capacity, GFD, nvidia-smi)
shows it.

Sources: the clouds' size tables (data/instance_gpus.toml: EC2's accelerated computing
specifications https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html as RAPIDS tabulates
them, https://raw.githubusercontent.com/rapidsai/deployment/refs/heads/main/source/cloud/aws/index.md;
Azure's GPU sizes as .NET Aspire's AksNodeVmSizes.cs and Hugging Face's Azure hardware page list
them, https://huggingface.co/docs/microsoft-azure/en/azure-ai/hardware; Google's
https://cloud.google.com/compute/docs/gpus; Oracle's GPU shapes, whose names end in the count,
https://docs.oracle.com/iaas/Content/Compute/References/computeshapes.htm). Reports:
Azure/AKS#839 (Standard_NC12s_v2, 2 GPUs, advertising 1), NVIDIA/aicr#1858
(Standard_ND96isr_H100_v5, 8, advertising 7). Look-alikes: the same sizes advertising all their
GPUs, a size with a share of one GPU (not listed), AMD's sizes, time-slicing replicas above the
count."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

from gpunode.checks.instance_gpus import instance_gpus


def _node(kind: str, capacity: str, labels: dict[str, str] | None = None) -> list[dict[str, Any]]:
    return [{"kind": "node-labels", "labels": {"node.kubernetes.io/instance-type": kind, **(labels or {})}},
            {"kind": "node-capacity", "resources": {"nvidia.com/gpu": capacity}}]


def _cluster(gpus: str) -> dict[str, Any]:
    """A host-driver node whose driver sees ``gpus`` GPUs (what the capacity counts)."""
    return {"driver_mode": "host", "components": [], "device_plugin": "static",
            "gpu_node": {"gpus": int(gpus)}}


def test_the_size_tables_give_whole_gpus_per_type() -> None:
    assert instance_gpus("Standard_NC12s_v2") == (2, "Azure")
    assert instance_gpus("Standard_ND96isr_H100_v5") == (8, "Azure")
    assert instance_gpus("p4d.24xlarge") == (8, "EC2")
    assert instance_gpus("g4dn.12xlarge") == (4, "EC2")
    assert instance_gpus("g5.2xlarge") == (1, "EC2")
    assert instance_gpus("a3-highgpu-8g") == (8, "Google Compute Engine")
    assert instance_gpus("g2-standard-48") == (4, "Google Compute Engine")
    assert instance_gpus("BM.GPU.H100.8") == (8, "Oracle Cloud")
    assert instance_gpus("VM.GPU.A10.2") == (2, "Oracle Cloud")
    for fractional in ("Standard_NV6ads_A10_v5", "g6f.xlarge", "m5.large", "Standard_D4s_v3",
                       "BM.GPU.MI300X.8", "Standard_ND96isr_MI300X_v5"):
        assert instance_gpus(fractional) is None, fractional


def test_fewer_gpus_than_the_instance_type_has_are_missing_gpus() -> None:
    for kind, capacity in (("Standard_NC12s_v2", "1"), ("p4d.24xlarge", "7"), ("a2-highgpu-4g", "3")):
        case = synthetic_case(f"x-instance-gpus-{kind}", _node(kind, capacity), healthy=False,
                              cluster=_cluster(capacity))
        assert top_pair(case) == ("gpu-hardware", "gpu_missing"), kind


def test_an_instance_type_with_all_its_gpus_stays_healthy() -> None:
    for kind, capacity in (("Standard_NC12s_v2", "2"), ("p4d.24xlarge", "8"), ("g5.xlarge", "1"),
                           ("Standard_NV36ads_A10_v5", "1"), ("g4dn.xlarge", "4")):
        case = synthetic_case(f"x-instance-gpus-ok-{kind}", _node(kind, capacity), cluster=_cluster(capacity))
        pair = top_pair(case)
        assert pair is None or pair[1] != "gpu_missing", (kind, pair)
