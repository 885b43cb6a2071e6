"""enroot's report that its NVIDIA hook failed ("[ERROR] /etc/enroot/hooks.d/98-nvidia.sh
exited with return code 1", relayed by pyxis) is the toolkit's where the hook's own words are
not in the job's log; where they are, they name the layer (nvidia-container-cli relaying
NVML's "driver not loaded": the driver). Another enroot hook failing names no GPU layer.
Lines are as public reports and notes quote them."""

from __future__ import annotations

import msgspec
from case import Case
from scoreboard import top_pair

_HOOK = "[ERROR] /etc/enroot/hooks.d/98-nvidia.sh exited with return code 1"


def _job(*lines: str) -> Case:
    raw = {"id": "x-enroot-hook", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "cluster": {"driver_mode": "host"},
           "evidence": [{"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
                         "text": "\n".join(lines) + "\n"}],
           "expect": {"healthy": True}}
    return msgspec.convert(raw, Case)


def test_the_nvidia_hook_failing_without_its_own_words_is_the_toolkits() -> None:
    top = top_pair(_job("slurmstepd: error: pyxis: container start failed with error code: 1",
                        f"slurmstepd: error: pyxis:     {_HOOK}",
                        "slurmstepd: error: pyxis: couldn't start container"))
    assert top is not None and top[0] == "container-toolkit"


def test_the_hooks_own_words_name_the_layer_first() -> None:
    top = top_pair(_job("slurmstepd: error: pyxis: printing enroot log file:",
                        "slurmstepd: error: pyxis:     nvidia-container-cli: initialization error: "
                        "nvml error: driver not loaded",
                        f"slurmstepd: error: pyxis:     {_HOOK}",
                        "slurmstepd: error: pyxis: couldn't start container"))
    assert top is not None and top[0] == "driver"
    top = top_pair(_job("nvidia-container-cli: ldcache error: process /usr/sbin/ldconfig terminated with "
                        "signal 9", _HOOK, "srun: error: hpc-novel-gpu01: task 0: Exited with exit code 1"))
    assert top is not None and top[0] == "container-toolkit"


def test_another_enroot_hook_names_no_gpu_layer() -> None:
    assert top_pair(_job("[ERROR] /etc/enroot/hooks.d/10-cgroups.sh exited with return code 1")) is None
