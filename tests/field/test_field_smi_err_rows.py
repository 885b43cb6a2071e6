"""A GPU whose row in nvidia-smi's table reads ERR! for both its temperature and its performance
state, on a release before GSP firmware runs by default: the driver answers and that GPU does
not, gpu-hardware/error_device (NVIDIA/dcgm-exporter#46). A single ERR! field (the power draw,
a fan) is transient or a reading bug and stays silent, and so does the same row on a GSP release
(the firmware's: checks.driver.gpu_fields_unanswered)."""

from __future__ import annotations

from case import Case, synthetic_case
from scoreboard import top_pair

HEAD = """+-----------------------------------------------------------------------------+
| NVIDIA-SMI {v}    Driver Version: {v}    CUDA Version: 11.4     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|                               |                      |               MIG M. |
|===============================+======================+======================|
|   0  NVIDIA A100 80G...  On   | 00000000:17:00.0 Off |                    0 |
| N/A   31C    P0    44W / 300W |      0MiB / 80994MiB |      0%      Default |
|                               |                      |             Disabled |
+-------------------------------+----------------------+----------------------+
"""
#: dcgm-exporter#46's GPU 7.
UNREAD = """|   7  NVIDIA A100 80G...  On   | 00000000:D6:00.0 Off |                 ERR! |
|ERR!  ERR! ERR!      1W /  N/A |      0MiB / 80994MiB |    ERR!      Default |
|                               |                      |                 ERR! |
+-------------------------------+----------------------+----------------------+
"""
#: Azure/azhpc-diagnostics#77: the power draw alone, transient.
POWER_ONLY = """|   1  Tesla V100-PCIE...  On   | 00008ED0:00:00.0 Off |                    0 |
| N/A   29C    P0   ERR! / 250W |    593MiB / 16160MiB |      0%      Default |
|                               |                      |                  N/A |
+-------------------------------+----------------------+----------------------+
"""


def _case(table: str, driver: str = "470.57.02", healthy: bool = False) -> Case:
    evidence = [{"kind": "node-cmd", "name": "nvidia-smi.txt", "text": HEAD.format(v=driver) + table}]
    cluster = {"gpu_node": {"gpu": "NVIDIA A100 80GB PCIe", "gpus": 2, "driver_version": driver,
                            "cuda_version": "11.4" if driver.startswith("470") else "12.2"}}
    return synthetic_case("x-smi-err", evidence, healthy=healthy, cluster=cluster)


def test_a_gpu_whose_temperature_and_perf_read_err_is_the_gpus() -> None:
    assert top_pair(_case(UNREAD)) == ("gpu-hardware", "error_device")


def test_a_power_draw_alone_read_err_stays_healthy() -> None:
    assert top_pair(_case(POWER_ONLY, healthy=True)) is None


def test_the_same_row_on_a_gsp_release_is_not_called_the_gpus() -> None:
    assert top_pair(_case(UNREAD, driver="535.104.05", healthy=True)) != ("gpu-hardware", "error_device")
