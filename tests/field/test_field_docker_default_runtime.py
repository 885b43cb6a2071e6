"""On Docker, the kubelet's shim starts every container with the daemon's default runtime and
passes no CDI devices: a daemon.json that registers the nvidia runtime without making it the
default leaves the device plugin without NVML, whatever a cluster policy says of CDI
(NVIDIA/k8s-device-plugin#13: the maintainer's fix was "default-runtime": "nvidia"; the
plugin README's prerequisites, https://pkg.go.dev/github.com/NVIDIA/k8s-device-plugin@v0.4.0).
A daemon that defaults to nvidia is not that cause, and operands that name the RuntimeClass
do not depend on the default.
"""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

#: nvidia-docker2's daemon.json: the nvidia runtime registered, no default-runtime key.
DAEMON_JSON = '{\n  "runtimes": {\n    "nvidia": {\n      "path": "nvidia-container-runtime",\n' \
              '      "runtimeArgs": []\n    }\n  }\n}\n'
DAEMON_JSON_DEFAULT = '{\n  "default-runtime": "nvidia",\n' + DAEMON_JSON[2:]
STATIC = {"driver_mode": "host", "components": [], "device_plugin": "static", "runtime_class": False}


def _docker_plugin(daemon_json: str) -> list[dict[str, Any]]:
    return [{"kind": "pod-state", "component": "device-plugin", "container": "nvidia-device-plugin-ctr",
             "state": "CrashLoopBackOff", "restarts": 12},
            {"kind": "node-file", "path": "etc/docker/daemon.json", "text": daemon_json}]


def test_docker_without_nvidia_as_default_names_the_default_runtime() -> None:
    case = synthetic_case("x-dd-docker-nodefault", _docker_plugin(DAEMON_JSON), platform="docker",
                          cluster=STATIC, healthy=False)
    assert top_pair(case) == ("container-toolkit", "nvidia_not_default_runtime")


def test_docker_with_nvidia_as_default_is_not_that_cause() -> None:
    case = synthetic_case("x-dd-docker-default", _docker_plugin(DAEMON_JSON_DEFAULT), platform="docker",
                          cluster=STATIC, healthy=False)
    top = top_pair(case)
    assert top is not None and top[1] != "nvidia_not_default_runtime"


def test_a_docker_node_whose_operands_name_the_runtime_class_stays_healthy() -> None:
    for daemon_json in (DAEMON_JSON, DAEMON_JSON_DEFAULT):
        evidence = [{"kind": "node-file", "path": "etc/docker/daemon.json", "text": daemon_json}]
        case = synthetic_case("x-dd-docker-healthy", evidence, platform="docker",
                              cluster={"driver_mode": "host", "gpu_node": {"gpus": 1}}, healthy=True)
        assert top_pair(case) is None


#: NVIDIA-ISAAC-ROS/isaac_ros_common#64: Isaac ROS's image build script on a Jetson Orin Nano,
#: `docker info` showing no "Default Runtime: nvidia" (scripts/build_image_layers.sh's check).
ISAAC_ROS_64 = ('Default docker runtime is not nvidia!, please make sure the following line is\n'
                'present in /etc/docker/daemon.json\n"default-runtime": "nvidia",\n\n'
                'And then restart the docker daemon\n'
                'Failed to build base image: isaac_ros_dev-aarch64, aborting.\n')
#: Look-alike: `docker info` as a healthy Docker node prints it (a state, no error word).
DOCKER_INFO = " Runtimes: io.containerd.runc.v2 nvidia runc\n Default Runtime: runc\n"


def _script(text: str, state: str) -> list[dict[str, Any]]:
    pod = {"kind": "Pod", "name": "isaac-ros-dev", "namespace": "default"}
    exited = {"state": "Error", "exit_code": 1} if state == "Error" else {"state": state}
    return [{"kind": "workload", "name": "isaac-ros-dev", "namespace": "default", "container": "dev",
             **exited},
            {"kind": "log", "object": pod, "container": "dev", "text": text}]


def test_a_build_script_stopped_for_the_default_runtime_names_it() -> None:
    case = synthetic_case("x-dd-isaac", _script(ISAAC_ROS_64, "Error"), platform="docker",
                          cluster={"driver_mode": "host", "gpu_node": {"gpus": 1}}, healthy=False)
    assert top_pair(case) == ("container-toolkit", "nvidia_not_default_runtime")


def test_docker_info_naming_runc_the_default_is_no_failure() -> None:
    case = synthetic_case("x-dd-docker-info", _script(DOCKER_INFO, "Running"), platform="docker",
                          cluster={"driver_mode": "host", "gpu_node": {"gpus": 1}}, healthy=True)
    assert top_pair(case) is None
