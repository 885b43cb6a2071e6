"""A GPU job's own libraries and launchers name the stack layer under it in their words
(gpunode.checks.job_words): PyTorch's driver too old, nvidia-smi finding no NVML, cuInit's
unknown error, nvidia-container-cli's error categories relayed by enroot without its name.
Each line comes from a public report (its address beside it); a job's own error that names
nothing of the stack stays the job's business."""

from __future__ import annotations

import msgspec
from case import Case
from scoreboard import top_pair

from gpunode.checks.job_words import job_names
from gpunode.kb import load_kb


def _job_log(text: str) -> Case:
    raw = {"id": "x-job-words", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "cluster": {"driver_mode": "host"},
           "evidence": [{"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
                         "text": text}],
           "expect": {"healthy": True}}
    return msgspec.convert(raw, Case)


def test_pytorch_driver_too_old_is_the_drivers() -> None:
    # defilantech/LLMKube#1424: a CUDA 13 vLLM image on AKS's driver 550 (CUDA 12.4)
    line = "RuntimeError: The NVIDIA driver on your system is too old (found version 12040).\n"
    assert job_names(line) == "driver"
    assert top_pair(_job_log(line)) == ("driver", "cuda_driver_too_old")


def test_enroot_relaying_the_cli_mount_error_is_the_toolkits() -> None:
    # NVIDIA/libnvidia-container#125 (enroot's hook under PBS; the CLI's "mount error: %s")
    line = ("mount error: file creation failed: /scratch/pbs/enroot-data/user-613.chas052/lammps/dev/"
            "nvidia-uvm-tools: operation not permitted\n")
    assert job_names(line) == "container-toolkit"
    assert top_pair(_job_log(line)) == ("container-toolkit", "error_permission_denied")


def test_cuinit_unknown_error_is_the_toolkits_device_access() -> None:
    # NVIDIA/nvidia-container-toolkit#1967: ffmpeg under docker --gpus after a toolkit upgrade
    text = "[CUDA @ ...] cu->cuInit(0) failed -> CUDA_ERROR_UNKNOWN: unknown error\nDevice creation failed\n"
    assert top_pair(_job_log(text)) == ("container-toolkit", "error_device")


def test_nvidia_smi_without_nvml_is_the_hook_injecting_no_libraries() -> None:
    # nebius/soperator#2468: the jail's ld.so.cache lists no NVIDIA library, so the hook injects none
    line = "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure\n"
    assert top_pair(_job_log(line)) == ("container-toolkit", "container_cli_no_driver_libs")


def test_a_jobs_own_errors_name_no_layer() -> None:
    own = ("Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n"
           "ValueError: could not convert string to float: 'abc'\n")
    assert top_pair(_job_log(own)) is None
    # look-alikes: CIFS's mount error, a driver "too old" of another program, an unknown runtime not NVIDIA's
    assert job_names("mount error(13): Permission denied") is None
    assert job_names("mount error: could not resolve address for fileserver: Unknown error") is None
    assert job_names("RuntimeError: your pandas version is too old") is None
    assert job_names("docker: Error response from daemon: unknown or invalid runtime name: kata.") is None
    assert job_names("cuInit(0) succeeded") is None


def test_every_wording_holds_its_literal() -> None:
    """The cheap literal test before each pattern must never hide a line the pattern takes."""
    lines = {
        "Failed to initialize NVML: Insufficient Permissions": "driver",
        "cudaGetDeviceCount: CUDA_ERROR_INSUFFICIENT_DRIVER": "driver",
        "ImportError: libcuda.so.1: cannot open shared object file: No such file or directory":
            "container-toolkit",
        "ldcache error: open failed: /etc/ld.so.cache: no such file or directory": "container-toolkit",
        # NVML's own words for libnvidia-ml not found (no ".so" in them)
        "Failed to initialize NVML: could not load NVML library": "container-toolkit",
        "Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND": "container-toolkit",
        # moby's daemon for a --runtime it has not registered (nvidia-ctk runtime configure adds it)
        "docker: Error response from daemon: unknown or invalid runtime name: nvidia.": "container-toolkit",
    }
    for line, component in lines.items():
        assert job_names(line) == component, line


def _failed_event(message: str) -> Case:
    raw = {"id": "x-job-event", "source": "https://example.org/x", "title": "t", "platform": "docker",
           "evidence": [{"kind": "event", "object": {"kind": "Pod", "name": "cuda-test"}, "type": "Warning",
                         "reason": "Failed", "message": message}],
           "expect": {"healthy": True}}
    return msgspec.convert(raw, Case)


def test_a_container_engine_without_the_nvidia_runtime_names_the_toolkit() -> None:
    # moby's daemon for a --runtime=nvidia it never registered (nvidia-ctk runtime configure
    # writes it into daemon.json), placed as the workload pod's Failed event: the engine has no
    # nvidia handler loaded, as containerd's 'no runtime for "nvidia" is configured' says
    said = "docker: Error response from daemon: unknown or invalid runtime name: "
    assert top_pair(_failed_event(said + "nvidia.\n")) == ("container-toolkit", "runtime_handler_missing")
    # older dockerd's words for it (NVIDIA/nvidia-docker#578, #838; dusty-nv/jetson-containers#122)
    older = "docker: Error response from daemon: Unknown runtime specified nvidia.\n"
    assert top_pair(_failed_event(older)) == ("container-toolkit", "runtime_handler_missing")
    # another runtime's name is no layer of the GPU stack
    assert top_pair(_failed_event(said + "kata.\n")) is None
    assert top_pair(_failed_event(older.replace("nvidia", "runsc"))) is None


def test_a_runtime_the_engine_does_not_know_is_not_found() -> None:
    kb = load_kb()
    # moby: "unknown or invalid runtime name: %s"; older dockerd: "Unknown runtime specified nvidia"
    daemon = "docker: Error response from daemon: "
    assert kb.class_of(daemon + "unknown or invalid runtime name: nvidia.") == "error_not_found"
    assert kb.class_of(daemon + "Unknown runtime specified nvidia.") == "error_not_found"
    # a job's own "unknown" that looks nothing up
    assert kb.class_of("ValueError: Unknown format code 'd' for object of type 'str'") != "error_not_found"
