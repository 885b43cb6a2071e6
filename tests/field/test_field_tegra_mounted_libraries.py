"""On a Jetson of JetPack 4 (L4T r32) the NVIDIA runtime's CSV lists mount CUDA, cuDNN and
TensorRT from the host into L4T containers, which carry none of their own: such a library
missing in a GPU container that did not get the NVIDIA runtime (Docker's default not nvidia,
or not read) is that runtime left out (checks.tegra_mounts). The same words on a discrete-GPU
node are the image's own CUDA, on a later JetPack (its 5.10-tegra kernel) the image's too, and
under a daemon whose default runtime is nvidia they say nothing of the default.

Sources, each line beside its address."""

from __future__ import annotations

from typing import Any

from case import Case, running_job_case, synthetic_case
from scoreboard import top_pair

#: https://github.com/dusty-nv/jetson-containers/issues/159 (l4t-ml r32.6.1 started with
#: docker run --gpus=all; the maintainer: are the CUDA libraries mounted when --runtime nvidia is used?)
JETSON_CONTAINERS_159 = ("ImportError: libcublas.so.10: cannot open shared object file: No such file or"
                         " directory")
#: https://github.com/dusty-nv/jetson-containers/issues/222 (the maintainer: "on JetPack 4, the
#: CUDA/cuDNN/TensorRT libraries get mounted into container by `--runtime nvidia` from the host")
JETSON_CONTAINERS_222 = ("ImportError: libcublas.so.10: cannot open shared object file: No such file or"
                         " directory")
#: https://github.com/microsoft/onnxruntime/pull/4637 (onnxruntime's Jetson image run without the runtime)
ONNXRUNTIME_4637 = ("UserWarning: Cannot load onnxruntime.capi. Error: 'libcublas.so.10: cannot open shared"
                    " object file: No such file or directory'.")
#: nvidia-docker2's daemon.json: the nvidia runtime registered, and as the default
DAEMON_JSON = '{\n  "runtimes": {\n    "nvidia": {\n      "path": "nvidia-container-runtime",\n' \
              '      "runtimeArgs": []\n    }\n  }\n}\n'
DAEMON_JSON_DEFAULT = '{\n  "default-runtime": "nvidia",\n' + DAEMON_JSON[2:]

_NOT_DEFAULT = ("container-toolkit", "nvidia_not_default_runtime")


def _job(line: str, gpu: str = "Xavier", kernel: str | None = None,
         daemon_json: str | None = None) -> Case:
    pod = {"kind": "Pod", "name": "job-0", "namespace": "default"}
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "job-0", "namespace": "default", "container": "main",
         "state": "Running"},
        {"kind": "log", "object": pod, "container": "main",
         "text": "Python 3.6.9 (default, Oct  8 2020, 12:12:24)\n>>> import cv2\n" + line + "\n"}]
    if daemon_json is not None:
        evidence.append({"kind": "node-file", "path": "etc/docker/daemon.json", "text": daemon_json})
    node: dict[str, Any] = {"gpus": 1, "gpu": gpu}
    if kernel is not None:
        node["kernel"] = kernel
    return synthetic_case("x-tegra-mounts", evidence, platform="docker", healthy=False,
                          cluster={"driver_mode": "host", "gpu_node": node})


def test_a_jetpack4_library_missing_without_the_nvidia_runtime_is_that_runtime_left_out() -> None:
    for line in (JETSON_CONTAINERS_159, JETSON_CONTAINERS_222, ONNXRUNTIME_4637):
        assert top_pair(_job(line)) == _NOT_DEFAULT, line
        assert top_pair(_job(line, gpu="NVIDIA Tegra X1", kernel="4.9.253-tegra")) == _NOT_DEFAULT, line
        assert top_pair(_job(line, daemon_json=DAEMON_JSON)) == _NOT_DEFAULT, line


def test_the_same_words_on_a_discrete_gpu_or_a_later_jetpack_are_not_read_so() -> None:
    assert top_pair(_job(JETSON_CONTAINERS_159, gpu="NVIDIA A10")) != _NOT_DEFAULT
    assert top_pair(_job(JETSON_CONTAINERS_159, gpu="Orin (nvgpu)", kernel="5.10.120-tegra")) != _NOT_DEFAULT


def test_under_nvidia_as_the_default_runtime_they_say_nothing_of_the_default() -> None:
    assert top_pair(_job(JETSON_CONTAINERS_159, daemon_json=DAEMON_JSON_DEFAULT)) != _NOT_DEFAULT


def test_a_tegra_container_whose_libraries_load_stays_healthy() -> None:
    case = running_job_case("x-tegra-ok", ">>> import torch\n>>> torch.cuda.is_available()\nTrue",
                            platform="docker",
                            cluster={"driver_mode": "host", "gpu_node": {"gpus": 1, "gpu": "Xavier"}})
    assert top_pair(case) is None
