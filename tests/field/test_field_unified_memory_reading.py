"""A running GPU agent whose memory check fails because NVML answers "Not Supported" to its
device memory query, on a node whose GPU has no memory of its own (DGX Spark's GB10, a Jetson
part): a reading the device does not offer, not a failure (leptonai/gpud#1084; nvidia-smi prints
"Not Supported" as the GB10's Memory-Usage, NVIDIA/k8s-device-plugin#1482). The look-alike: the
same log on a discrete GPU stays a finding."""

from __future__ import annotations

import msgspec
from case import Case
from scoreboard import top_pair

_TS = '"ts":"2025-09-24T12:26:21.523Z"'
LOG = "\n".join([
    '{"level":"info",' + _TS + ',"caller":"memory/component.go:105","msg":"checking nvidia gpu memory"}',
    '{"level":"warn",' + _TS + ',"caller":"nvml/memory.go:68","msg":"failed to get device memory info v1",'
    '"error":"Not Supported"}',
    '{"level":"warn",' + _TS + ',"caller":"memory/component.go:152","msg":"error getting used percent",'
    '"error":"strconv.ParseFloat: parsing \\"\\": invalid syntax"}',
]) + "\n"


def _case(gpu: str) -> Case:
    raw = {"id": "x-unified-memory", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "cluster": {"driver_mode": "host", "gpu_node": {"gpu": gpu, "gpus": 1}},
           "evidence": [{"kind": "log", "component": "dcgm-exporter", "text": LOG}],
           "expect": {"healthy": True}}
    return msgspec.convert(raw, Case)


def test_a_memory_query_not_supported_on_a_gpu_without_its_own_memory_is_no_failure() -> None:
    assert top_pair(_case("NVIDIA GB10")) is None


def test_the_same_log_on_a_discrete_gpu_stays_a_finding() -> None:
    found = top_pair(_case("NVIDIA H100 80GB HBM3"))
    assert found is not None and found[0] == "dcgm-exporter"
