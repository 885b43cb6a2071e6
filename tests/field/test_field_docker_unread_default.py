"""On a Docker node the kubelet's shim runs every pod under the daemon's default runtime: it
refuses any other RuntimeClass handler (dockershim's RunPodSandbox, "RuntimeHandler %q not
supported", kubernetes/kubernetes pkg/kubelet/dockershim/docker_sandbox.go) and passes no CDI
devices, so NVIDIA's runtime reaches a pod only as Docker's default ("default-runtime":
"nvidia", the device plugin's prerequisite, https://pkg.go.dev/github.com/NVIDIA/k8s-device-plugin@v0.4.0).
Had NVIDIA's hook run, it would have put the driver's libraries into the container or failed
its start. So a running GPU job that finds no driver library ("Found no NVIDIA driver on your
system", PyTorch's words for the runtime's error 35 with no driver version) on a Docker node
whose own driver answers is Docker's default runtime, even where daemon.json was not collected
(dmlc/gluon-nlp#1512: the CI started the container with docker, not nvidia-docker). A daemon.json
that makes nvidia the default, a node whose driver does not answer, and words that say a driver
answered with no device are not that."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

NO_DRIVER = ("/usr/lib/python3/site-packages/torch/cuda/__init__.py:52: UserWarning: CUDA initialization: "
             "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed "
             "a driver from http://www.nvidia.com/Download/index.aspx")
DAEMON_JSON_DEFAULT = ('{\n  "default-runtime": "nvidia",\n  "runtimes": {\n    "nvidia": {\n'
                       '      "path": "nvidia-container-runtime",\n      "runtimeArgs": []\n    }\n  }\n}\n')
SMI_FAILED = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that "
              "the latest NVIDIA driver is installed and running.\n")


def _docker_job(text: str, *extra: dict[str, Any], healthy: bool = False) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "ci-gpu-test", "namespace": "ci", "container": "test",
         "state": "Running"},
        {"kind": "log", "object": {"kind": "Pod", "name": "ci-gpu-test", "namespace": "ci"},
         "container": "test", "text": text + "\n"}, *extra]
    return synthetic_case("x-docker-unread", evidence, healthy=healthy, platform="docker",
                          cluster={"driver_mode": "host"})


def test_no_driver_library_on_a_docker_node_is_dockers_default_runtime() -> None:
    assert top_pair(_docker_job(NO_DRIVER)) == ("container-toolkit", "nvidia_not_default_runtime")


def test_a_daemon_json_with_nvidia_as_default_is_not_that_cause() -> None:
    daemon = {"kind": "node-file", "path": "etc/docker/daemon.json", "text": DAEMON_JSON_DEFAULT}
    top = top_pair(_docker_job(NO_DRIVER, daemon))
    assert top is None or top[1] != "nvidia_not_default_runtime"


def test_a_node_whose_driver_does_not_answer_is_not_that_cause() -> None:
    smi = {"kind": "node-cmd", "name": "nvidia-smi.txt", "text": SMI_FAILED}
    top = top_pair(_docker_job(NO_DRIVER, smi))
    assert top is None or top[1] != "nvidia_not_default_runtime"


def test_a_driver_that_answered_with_no_device_is_not_that_cause() -> None:
    top = top_pair(_docker_job("RuntimeError: No CUDA GPUs are available", healthy=True))
    assert top is None or top[1] != "nvidia_not_default_runtime"
