"""The device plugin's first releases say only 'could not load NVML library' when their
container got no NVML (NVIDIA/k8s-device-plugin#11, Docker's default runtime runc): where the
plugin's pod names no RuntimeClass, the runtime's default is what had to carry the NVIDIA
runtime, so the toolkit's nvidia_not_default_runtime is traced to it as for the newer
'could not load NVML: libnvidia-ml.so.1' form. A plugin pod that names the NVIDIA RuntimeClass
does not depend on the default, and the same line is not that cause."""

from __future__ import annotations

from case import synthetic_case
from scoreboard import top_pair

OLD_PLUGIN = "2017/11/29 01:54:30 Loading NVML\n2017/11/29 01:54:30 could not load NVML library\n"


def _plugin(text: str, container: str = "nvidia-device-plugin-ctr") -> list[dict[str, object]]:
    return [{"kind": "log", "component": "device-plugin", "container": container,
             "previous": True, "text": text},
            {"kind": "pod-state", "component": "device-plugin", "container": container,
             "state": "CrashLoopBackOff", "restarts": 6}]


def test_an_old_plugin_without_a_runtime_class_names_the_default_runtime() -> None:
    cluster = {"driver_mode": "host", "components": [], "device_plugin": "static", "runtime_class": False}
    top = top_pair(synthetic_case("x-old-nvml", _plugin(OLD_PLUGIN), cluster=cluster, healthy=False))
    assert top == ("container-toolkit", "nvidia_not_default_runtime")


def test_a_plugin_that_names_the_runtime_class_is_not_the_defaults_fault() -> None:
    top = top_pair(synthetic_case("x-old-nvml-rc", _plugin(OLD_PLUGIN, "nvidia-device-plugin"),
                                  cluster={"driver_mode": "host"},
                                  healthy=False))
    assert top is not None and top[1] != "nvidia_not_default_runtime"


def test_a_line_that_goes_on_is_not_the_old_form() -> None:
    cluster = {"driver_mode": "host", "components": [], "device_plugin": "static", "runtime_class": False}
    text = "2017/11/29 01:54:30 could not load NVML library configuration file /etc/x.toml, using defaults\n"
    top = top_pair(synthetic_case("x-nvml-cfg", _plugin(text), cluster=cluster, healthy=False))
    assert top is None or top[1] != "nvidia_not_default_runtime"
