"""The loader's "libcuda.so.1: cannot open shared object file" in a GPU job on a Docker node whose
daemon.json was not collected is read as the other no-driver words are there
(tests/field/test_field_docker_unread_default.py): the kubelet's Docker shim runs a pod only
under the daemon's default runtime and passes no CDI devices, and NVIDIA's hook, had it run,
would have put libcuda in or failed the start. So the job's container was started by another
default (pytorch/pytorch#2985, https://github.com/pytorch/pytorch/issues/2985: an image from
nvidia/cuda started with plain docker, the maintainer pointing to nvidia-docker;
tensorflow/serving#660, https://github.com/tensorflow/serving/issues/660: the GPU model server
without the NVIDIA runtime). A daemon.json that makes nvidia the default leaves the words to the
hook's own reading (container_cli_no_driver_libs); CUDA's insufficient driver on the same node
stays the driver's (error 35 alone does not say no library was loaded)."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

NO_LIBCUDA = ("  File \"/opt/conda/lib/python3.6/site-packages/torch/__init__.py\", line 53, in <module>\n"
              "    from torch._C import *\n"
              "ImportError: libcuda.so.1: cannot open shared object file: No such file or directory")
DAEMON_JSON_DEFAULT = ('{\n  "default-runtime": "nvidia",\n  "runtimes": {\n    "nvidia": {\n'
                       '      "path": "nvidia-container-runtime",\n      "runtimeArgs": []\n    }\n  }\n}\n')
INSUFFICIENT = "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version"


def _docker_job(text: str, *extra: dict[str, Any]) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "torch-job", "namespace": "default", "container": "job",
         "state": "Error", "exit_code": 1},
        {"kind": "log", "object": {"kind": "Pod", "name": "torch-job", "namespace": "default"},
         "container": "job", "text": text + "\n"}, *extra]
    return synthetic_case("x-docker-libcuda", evidence, platform="docker", cluster={"driver_mode": "host"})


def test_no_libcuda_on_a_docker_node_is_dockers_default_runtime() -> None:
    assert top_pair(_docker_job(NO_LIBCUDA)) == ("container-toolkit", "nvidia_not_default_runtime")


def test_a_daemon_json_with_nvidia_as_default_leaves_it_to_the_hook() -> None:
    daemon = {"kind": "node-file", "path": "etc/docker/daemon.json", "text": DAEMON_JSON_DEFAULT}
    assert top_pair(_docker_job(NO_LIBCUDA, daemon)) == ("container-toolkit", "container_cli_no_driver_libs")


def test_the_insufficient_driver_on_the_same_node_stays_the_drivers() -> None:
    assert top_pair(_docker_job(INSUFFICIENT)) == ("driver", "cuda_driver_too_old")
