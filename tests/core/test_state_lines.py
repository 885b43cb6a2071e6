"""explain answers pasted text that shows a failed state without an error word (ibstat,
ibdev2netdev, nvidia-smi nvlink -s, kubectl describe node, a containerd config, node
labels) with the line that shows it; the healthy value of the same field gives nothing."""

from __future__ import annotations

import pytest

from gpunode.explain import explain_lines
from gpunode.kb import load_kb
from gpunode.state_lines import state_line

KB = load_kb()

_DESCRIBE = ["Capacity:", "  cpu:                32", "  ephemeral-storage:  1951312988Ki",
             "  memory:             264074052Ki", "  pods:               110"]


@pytest.mark.parametrize(("text", "line_no", "line_class"), [
    (["CA 'mlx5_0'", "\tPort 1:", "\t\tState: Down", "\t\tPhysical state: Polling"], 3, None),
    (["mlx5_2 port 1 ==> net0 (Up)", "mlx5_3 port 1 ==> net1 (Down)"], 2, None),
    (["GPU 0: Tesla V100-SXM2-16GB", "\t Link 0: 25.781 GB/s", "\t Link 3: <inactive>"], 3, None),
    (['  "cpu": "96",', '  "rdma/rdma_shared_device_a": "0",'], 2, None),
    (_DESCRIBE, 1, None),
    (['version = 2', 'disabled_plugins = ["cri"]'], 2, "error_config_invalid"),
    (['nvidia.com/gpu.deploy.driver: "true"', 'nvidia.com/gpu.deploy.device-plugin: ""'], 2,
     "error_config_invalid"),
    (["feature.node.kubernetes.io/pci-10de_2237.present=true"], 1, "error_config_invalid"),
])
def test_a_failed_state_is_the_decisive_line(text: list[str], line_no: int, line_class: str | None) -> None:
    found = state_line(text)
    assert found is not None and found.line_no == line_no and found.line_class == line_class
    explained = explain_lines(text, KB)
    assert explained.decisive is not None and explained.decisive.line_no == line_no
    assert explained.decisive_class is not None


@pytest.mark.parametrize("text", [
    ["CA 'mlx5_0'", "\tPort 1:", "\t\tState: Active", "\t\tPhysical state: LinkUp"],
    ["mlx5_3 port 1 ==> net1 (Up)"],
    ["\t Link 3: 25.781 GB/s"],
    ['  "nvidia.com/gpu": "8",', '  "nvidia.com/cuda.runtime.minor": "0",'],
    [*_DESCRIBE, "  nvidia.com/gpu:     8"],
    ['disabled_plugins = []', 'default_runtime_name = "nvidia"'],
    ['nvidia.com/gpu.deploy.device-plugin: "true"'],
    ["feature.node.kubernetes.io/pci-0302_10de.present=true"],
    ["feature.node.kubernetes.io/pci-10de.present=true",
     "feature.node.kubernetes.io/pci-10de_2237.present=true"],
])
def test_the_healthy_value_of_the_same_field_gives_nothing(text: list[str]) -> None:
    assert state_line(text) is None
    assert explain_lines(text, KB).decisive is None
