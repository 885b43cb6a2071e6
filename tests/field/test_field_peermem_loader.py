"""A module loader's refusal of the GPU peer-memory module with the kernel's EINVAL, in the
node's kernel log: nvidia-peermem.c's nv_mem_client_init returns -EINVAL wherever the module
was built without the MLNX peer-memory API (no MOFED ib_core at build time), so the module
never loads there and GPUDirect RDMA through it is unavailable: the driver's
peermem_not_loaded, whatever loader printed it (kmod's modprobe, systemd-modules-load, Talos's
KernelModuleSpecController). A module file the loader did not find stays the loader's own
class. Sources: https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/kernel-open/nvidia-peermem/nvidia-peermem.c
(the #else branch of nv_mem_client_init), https://github.com/NVIDIA/gpu-operator/issues/2868
(modprobe's form), https://github.com/siderolabs/talos/issues/7174 (Talos's loader wording),
https://github.com/siderolabs/talos/issues/12021 (the line)."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair


def _dmesg(text: str) -> Case:
    evidence = [{"kind": "node-cmd", "name": "dmesg.txt", "text": text + "\n"}]
    return synthetic_case("x-peermem-loader", evidence, cluster={"driver_mode": "host"})


@pytest.mark.parametrize("line", [
    'error loading module "nvidia_peermem": load nvidia_peermem failed: invalid argument',
    "systemd-modules-load[612]: Failed to insert module 'nvidia_peermem': Invalid argument",
    "modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument",
])
def test_a_loader_refusing_peermem_with_einval_is_peermem_not_loaded(line: str) -> None:
    assert top_pair(_dmesg(line)) == ("driver", "peermem_not_loaded")


def test_a_peermem_module_file_not_found_stays_the_loader_s_class() -> None:
    line = "modprobe: FATAL: Module nvidia-peermem not found in directory /lib/modules/6.8.0"
    found = top_pair(_dmesg(line))
    assert found is None or found[1] != "peermem_not_loaded"


def test_another_module_refused_with_einval_is_not_peermem() -> None:
    found = top_pair(_dmesg('error loading module "nvidia_uvm": load nvidia_uvm failed: invalid argument'))
    assert found is None or found[1] != "peermem_not_loaded"


def test_peermem_loaded_is_healthy() -> None:
    assert top_pair(_dmesg("nvidia-peermem nv_mem_client_init:... loaded")) is None
