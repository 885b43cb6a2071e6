"""A service that waits for a path only the loaded NVIDIA driver makes (the nvidia PCI driver's
sysfs directory, the module's own directories, its device files) on a node whose lsmod lists no
nvidia module waits for the driver, which is not loaded (a Talos node whose machine config loads
no NVIDIA module: ext-nvidia-persistenced waits for /sys/bus/pci/drivers/nvidia for ever).
Look-alikes stay silent: the same wait on a node whose driver is loaded (a moment of its boot),
a wait for another driver's path."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.explain import explain_lines

TALOS = 'ext-nvidia-persistenced   Waiting   ?   Waiting for file "/sys/bus/pci/drivers/nvidia" to exist'
OTHER = 'ext-mlx5-helper   Waiting   ?   Waiting for file "/sys/bus/pci/drivers/mlx5_core" to exist'


def _node(line: str, *, loaded: bool) -> Case:
    dmesg: dict[str, Any] = {"kind": "node-cmd", "name": "dmesg.txt", "text": f"{line}\n"}
    return synthetic_case("x-driver-path-wait", [dmesg], healthy=False,
                          cluster={"driver_mode": "host", "components": [], "device_plugin": "static",
                                   "gpu_node": {"gpus": 1, "driver_loaded": loaded}})


def test_a_service_waiting_for_the_drivers_pci_directory_without_the_module_is_not_loaded() -> None:
    assert top_pair(_node(TALOS, loaded=False)) == ("driver", "driver_not_loaded")


def test_the_same_wait_on_a_node_whose_driver_is_loaded_is_not_read() -> None:
    assert top_pair(_node(TALOS, loaded=True)) != ("driver", "driver_not_loaded")


def test_a_wait_for_another_drivers_path_is_not_read() -> None:
    assert top_pair(_node(OTHER, loaded=False)) != ("driver", "driver_not_loaded")


def test_explain_reads_the_wait_for_the_drivers_paths_alone() -> None:
    assert [m.cause.code for m in explain_lines([TALOS]).matches][:1] == ["driver_not_loaded"]
    assert "driver_not_loaded" not in [m.cause.code for m in explain_lines([OTHER]).matches]
    lookalike = 'Waiting for file "/sys/bus/pci/drivers/nvidia-nvswitch" to exist'
    assert "driver_not_loaded" not in [m.cause.code for m in explain_lines([lookalike]).matches]
