"""The words a failure line is written in by the layers below the program itself: the C++
runtime, the C library's strerror texts, the dynamic loader, the Kubernetes API and the
kubelet. A line in them is an error whatever program printed it (issue 20: a failure never
seen before still has its decisive line). Lines are real ones from public reports (address
beside each)."""

from __future__ import annotations

import pytest

from gpunode.decisive import decisive_line, severity
from gpunode.explain import explain_lines
from gpunode.kb import load_kb

KB = load_kb()


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # NVIDIA/gpu-monitoring-tools#134: an uncaught C++ exception aborts the exporter
        ("terminate called after throwing an instance of 'std::logic_error'", 2),
        # NVIDIA/gpu-operator#2508: the API server has no such kind at that version
        ('no matches for kind "RuntimeClass" in version "node.k8s.io/v1"', 1),
        # NVIDIA/gpu-operator#1968: the kubelet's event for an image it cannot pull
        ('Back-off pulling image "nvcr.io/nvidia/cloud-native/gpu-operator-validator:v25.10.1"', 1),
        # NVIDIA/k8s-device-plugin#326: the dynamic loader cannot resolve a symbol
        ("nvidia-device-plugin: undefined symbol: nvmlGpuInstanceGetComputeInstanceProfileInfoV", 1),
        # Mellanox/k8s-rdma-shared-dev-plugin#87: "can not" spelt in two words
        ("Exiting.. can not change : incorrect RDMA subsystem network namespace", 1),
        # Mellanox/k8s-rdma-sriov-dev-plugin#19: strerror(ENOSYS) after the path it was about
        ("/sys/class/net/eth2/device/sriov_numvfs: Function not implemented", 1),
        # NVIDIA/nccl#709: a numbered error condition
        ("g1lmd5:3684924:3685085 [0] transport/net_ib.cc:840 NCCL WARN NET/IB : Got completion with "
         "error 12, opcode 32736, len 32736, vendor err 129", 1),
        # NVIDIA/nccl#905: the verbs library's async event for a port that went down
        ("NCCL WARN NET/IB : Got async event : port error", 1),
        # okd-project/okd#2350: a program's warning that what it found is broken
        ("WARNING: broken Driver Toolkit image detected:", 0),
        # pytorch/ci-infra#541: CUDA's text for a failure in the fabric
        ("This is usually caused by a system or configuration error in the Fabric Manager or NVSwitches.", 1),
    ],
)
def test_words_of_the_layers_below_read_as_errors(line: str, expected: int) -> None:
    assert severity(line) == expected


def test_a_warning_level_line_still_is_explain_s_last_resort() -> None:
    """okd-project/okd#2350: no line reads as an error, the warning's words say what broke."""
    text = ["WARNING: broken Driver Toolkit image detected:", "- Node kernel:    6.12.0-224.el10.x86_64",
            "- Kernel package: 6.12.0-212.el10.x86_64"]
    assert explain_lines(text, KB).decisive_class is not None


def test_the_c_plus_plus_abort_is_the_decisive_line() -> None:
    """NVIDIA/gpu-monitoring-tools#134: the exception's 'what()' line follows the abort."""
    lines = ["Starting dcgm-exporter", "terminate called after throwing an instance of 'std::logic_error'",
             "  what():  basic_string::_S_construct null not valid"]
    found = decisive_line(lines)
    assert found is not None and found.line_no == 2


@pytest.mark.parametrize("line", [
    "I1205 10:00:00.000000       1 main.go:10] Starting the NVIDIA device plugin",
    'time="2024-01-01T00:00:00Z" level=info msg="no errors, all devices healthy"',
    "NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>",
])
def test_healthy_lines_stay_quiet(line: str) -> None:
    assert severity(line) == 0
