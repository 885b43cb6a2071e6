"""NVML's "Insufficient Permissions" for one query in a job whose log shows NVML answering for
the GPU (nvidia-smi printed the GPU's row with one field refused): NVML opened the device, so
the refusal is the query's privilege (the parent GPU's aggregates in a container given a MIG
instance), not the stack's. Stability-AI/StableSwarmUI#388 (a MIG A100 in an unprivileged pod:
the name and driver answer, memory.* refused), ollama/ollama#932 (the same on Docker, PyTorch
uses the GPU), NVIDIA/nvidia-container-toolkit#842 (pynvml's nvmlDeviceGetMemoryInfo on a MIG
device, ``nvidia-smi -L`` lists it). A refused initialisation, or the refusal with no answered
row, keeps the driver's reading (tests/field/test_field_nvml_no_permission.py)."""

from __future__ import annotations

from case import gpu_job_case
from scoreboard import top_pair

#: Stability-AI/StableSwarmUI#388, nvidia-smi --query-gpu in the pod.
SWARM_ROW = ("NVIDIA A100-SXM4-80GB, 535.161.08, 47, [N/A], [N/A], [Insufficient Permissions], "
             "[Insufficient Permissions], [Insufficient Permissions]")
#: NVIDIA/nvidia-container-toolkit#842, pynvml's exception on the MIG device's parent.
PYNVML = "pynvml.NVMLError_NoPermission: Insufficient Permissions"


def test_answered_row_then_pynvml_refusal_is_healthy() -> None:
    assert top_pair(gpu_job_case("x-mig-query", f"{SWARM_ROW}\n{PYNVML}\n")) is None


def test_q_field_refused_is_healthy() -> None:
    text = ("    FB Memory Usage\n        Total                             : [Insufficient Permissions]\n"
            f"{PYNVML}\n")
    assert top_pair(gpu_job_case("x-mig-query-q", text)) is None


def test_refusal_without_an_answered_row_stays_the_drivers() -> None:
    assert top_pair(gpu_job_case("x-nvml-refused", f"{PYNVML}\n")) == ("driver", "error_device")
    only_refused = "[Insufficient Permissions], [Insufficient Permissions]\n"
    top = top_pair(gpu_job_case("x-nvml-refused-row", only_refused + PYNVML + "\n"))
    assert top == ("driver", "error_device")


def test_refused_initialisation_stays_the_drivers() -> None:
    text = f"{SWARM_ROW}\nFailed to initialize NVML: Insufficient Permissions\n"
    assert top_pair(gpu_job_case("x-nvml-init", text)) == ("driver", "error_device")
