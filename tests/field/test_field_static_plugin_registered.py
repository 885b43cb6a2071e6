"""A device plugin deployed from its own manifest (``cluster.device_plugin: static``) whose
log says the kubelet registered its resource has the GPUs advertised on the node: its
informational platform probe ('Detected non-Tegra platform: /sys/devices/soc0/family file
not found', canonical/microk8s#3959) is no fault. The same probe followed by the plugin's
failure to find NVML, with no registration, is still a failure."""

from __future__ import annotations

from case import synthetic_case
from scoreboard import top_pair

CLUSTER = {"driver_mode": "host", "components": [], "device_plugin": "static", "runtime_class": False,
           "gpu_node": {"gpus": 1}}
PROBE = ("I0509 10:32:36.649924       1 main.go:256] Retreiving plugins.\n"
         "I0509 10:32:36.757886       1 factory.go:107] Detected non-Tegra platform: "
         "/sys/devices/soc0/family file not found\n")
REGISTERED = (
    "I0509 10:32:36.757784       1 factory.go:107] Detected NVML platform: found NVML library\n"
    "I0509 10:32:37.041237       1 server.go:165] Starting GRPC server for 'nvidia.com/gpu'\n"
    "I0509 10:32:37.042107       1 server.go:117] Starting to serve 'nvidia.com/gpu' on "
    "/var/lib/kubelet/device-plugins/nvidia-gpu.sock\n"
    "I0509 10:32:37.118940       1 server.go:125] Registered device plugin for 'nvidia.com/gpu' "
    "with Kubelet\n")
#: the plugin's v0.14 words when the container got no NVML library (k8s-device-plugin's factory.go)
NO_NVML = ("I0509 10:32:36.757784       1 factory.go:107] Detected non-NVML platform: could not load NVML "
           "library: libnvidia-ml.so.1: cannot open shared object file: No such file or directory\n"
           "E0509 10:32:36.757900       1 factory.go:115] Incompatible platform detected\n")


def _plugin(text: str) -> list[dict[str, object]]:
    return [{"kind": "log", "component": "device-plugin", "container": "nvidia-device-plugin-ctr",
             "text": text}]


def test_a_registered_plugin_after_its_platform_probe_is_healthy() -> None:
    assert top_pair(synthetic_case("x-soc0-registered", _plugin(PROBE + REGISTERED), cluster=CLUSTER)) is None


def test_the_same_probe_before_a_plugin_that_finds_no_nvml_is_not_healthy() -> None:
    case = synthetic_case("x-soc0-no-nvml", _plugin(PROBE + NO_NVML), cluster=CLUSTER, healthy=False)
    assert top_pair(case) is not None
