"""A failure named by a neighbour of the layer at fault: the layer that owns what the line
names (the libraries a runtime injects, a label another component writes). Bundles built from
real-shaped evidence; each line is the format its program writes (source beside it)."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import top_pair


def _case(*evidence: dict[str, Any], platform: str = "generic", **cluster: Any) -> Case:
    raw = {"id": "x-owner-layers", "source": "https://example.org/x", "title": "t", "platform": platform,
           "cluster": cluster, "evidence": list(evidence), "expect": {"healthy": True}}
    return msgspec.convert(raw, Case)


# NVIDIA/k8s-device-plugin internal/plugin/manager/factory.go: with neither NVML nor a Tegra
# system visible in its container, the plugin logs these klog errors and, with
# failOnInitError, returns "platform detection failed" from its plugin manager's factory.
_NO_PLATFORM = (
    'I1205 10:00:00.000000       1 factory.go:104] Detected non-NVML platform: could not load NVML library: '
    'libnvidia-ml.so.1: cannot open shared object file: No such file or directory\n'
    "E1205 10:00:00.000000       1 factory.go:112] Incompatible platform detected\n"
    "E1205 10:00:00.000000       1 factory.go:113] If this is a GPU node, "
    "did you configure the NVIDIA Container Toolkit?\n"
    "E1205 10:00:00.000000       1 main.go:132] error starting plugins: error creating plugin manager: "
    "unable to create plugin manager: platform detection failed\n"
)
_PLATFORM_ONLY = (
    "E1205 10:00:00.000000       1 main.go:132] error starting plugins: error creating plugin manager: "
    "unable to create plugin manager: platform detection failed\n"
)


def _plugin(component: str, text: str, container: str = "device-plugin") -> list[dict[str, Any]]:
    return [{"kind": "pod-state", "component": component, "container": container,
             "state": "CrashLoopBackOff"},
            {"kind": "log", "component": component, "container": container, "previous": True, "text": text}]


def test_a_vendor_plugin_that_finds_no_gpu_platform_is_the_runtime_s_injection() -> None:
    # HAMi's and Volcano's plugins run NVIDIA's plugin manager under their own names; their
    # pods name no RuntimeClass, so they get the NVIDIA runtime only as the default one
    for component, container in (("hami-device-plugin", "device-plugin"),
                                 ("volcano-device-plugin", "volcano-device-plugin")):
        for text in (_NO_PLATFORM, _PLATFORM_ONLY):
            for platform in ("generic", "docker"):
                evidence = _plugin(component, text, container)
                found = top_pair(_case(*evidence, platform=platform, runtime_class=False))
                assert found == ("container-toolkit", "nvidia_not_default_runtime"), (component, platform)


def test_a_plugin_pod_that_names_the_nvidia_runtime_class_is_not_traced_to_the_default() -> None:
    # look-alike: the pod asks for the nvidia RuntimeClass, so which runtime is the default
    # cannot be why it lacks NVML
    found = top_pair(_case(*_plugin("hami-device-plugin", _PLATFORM_ONLY), runtime_class=True))
    assert found is not None and found[1] != "nvidia_not_default_runtime"


def test_a_plugin_failing_otherwise_stays_the_plugin_s() -> None:
    # look-alike: the same factory's other error (an unknown mode) names no platform missing
    text = ("E1205 10:00:00.000000       1 main.go:132] error starting plugins: "
            "error creating plugin manager: unable to create plugin manager: unknown mode: foo\n")
    found = top_pair(_case(*_plugin("hami-device-plugin", text), runtime_class=False))
    assert found is not None and found[0] == "hami-device-plugin"


def test_nvidia_s_own_plugin_reads_the_same() -> None:
    evidence = _plugin("device-plugin", _PLATFORM_ONLY, "nvidia-device-plugin")
    found = top_pair(_case(*evidence, runtime_class=False))
    assert found == ("container-toolkit", "nvidia_not_default_runtime")


def _failed_start(message: str) -> list[dict[str, Any]]:
    return [{"kind": "event", "object": {"kind": "Pod", "name": "gpu-test", "namespace": "default"},
             "type": "Warning", "reason": "Failed", "message": message},
            {"kind": "pod-state", "component": "device-plugin", "state": "Running"}]


def test_a_driver_utility_missing_at_container_start_is_the_runtime_injection_s() -> None:
    # runc 1.1's words (NVIDIA/nvkind#31) and runc 1.0's as docker run without --gpus prints them
    for message in (
        'failed to create shim task: OCI runtime create failed: runc create failed: unable to start '
        'container process: exec: "nvidia-smi": executable file not found in $PATH: unknown',
        'OCI runtime create failed: container_linux.go:349: starting container process caused '
        '"exec: \\"nvidia-smi\\": executable file not found in $PATH": unknown',
    ):
        found = top_pair(_case(*_failed_start(message)))
        assert found == ("container-toolkit", "error_not_found"), message


def test_the_workload_s_own_program_missing_is_not_the_toolkit_s() -> None:
    # look-alike: the image lacks its own entrypoint, which no runtime injects
    message = ('failed to create shim task: OCI runtime create failed: runc create failed: unable to start '
               'container process: exec: "python3": executable file not found in $PATH: unknown')
    found = top_pair(_case(*_failed_start(message)))
    assert found is None or found[0] != "container-toolkit"


_OSTREE = "feature.node.kubernetes.io/system-os_release.OSTREE_VERSION"
_RHCOS_NOW = {"kind": "node-info", "fields": {
    "osImage": "Red Hat Enterprise Linux CoreOS 416.94.202408260940-0",
    "kernelVersion": "5.14.0-427.33.1.el9_4.x86_64"}}
_DRIVER_LOOPS = {"kind": "pod-state", "component": "driver", "container": "nvidia-driver-ctr",
                 "state": "CrashLoopBackOff"}


def test_an_os_build_label_an_upgrade_left_behind_is_nfd_s_and_explains_the_driver() -> None:
    # the labels and node status as quoted in NVIDIA/gpu-operator#990 (OpenShift 4.16.2 -> 4.16.10)
    stale = {"kind": "node-labels", "labels": {_OSTREE: "416.94.202407030122-0"}}
    found = top_pair(_case(_RHCOS_NOW, stale, _DRIVER_LOOPS, platform="openshift"))
    assert found == ("nfd", "error_version_mismatch")


def test_a_kernel_label_an_upgrade_left_behind_is_nfd_s() -> None:
    stale = {"kind": "node-labels", "labels": {"feature.node.kubernetes.io/kernel-version.full":
                                               "5.14.0-427.24.1.el9_4.x86_64"}}
    found = top_pair(_case(_RHCOS_NOW, stale, _DRIVER_LOOPS, platform="openshift"))
    assert found == ("nfd", "error_version_mismatch")


def test_labels_that_match_the_node_leave_the_driver_s_failure_its_own() -> None:
    # look-alikes: the current RHCOS build, and Fedora CoreOS whose osImage carries its build
    # in another form (NVIDIA/gpu-operator#2664)
    current = {"kind": "node-labels", "labels": {_OSTREE: "416.94.202408260940-0"}}
    found = top_pair(_case(_RHCOS_NOW, current, _DRIVER_LOOPS, platform="openshift"))
    assert found is not None and found[0] == "driver"
    fcos = [{"kind": "node-info", "fields": {"osImage": "Fedora CoreOS 43.20260413.3.2"}},
            {"kind": "node-labels", "labels": {_OSTREE: "43.20260413.3.2"}}]
    found = top_pair(_case(*fcos, _DRIVER_LOOPS))
    assert found is not None and found[0] == "driver"


def test_a_stale_label_beside_a_working_driver_is_no_failure() -> None:
    stale = {"kind": "node-labels", "labels": {_OSTREE: "416.94.202407030122-0"}}
    assert top_pair(_case(_RHCOS_NOW, stale, platform="openshift")) is None


def _toolkit_validation(line: str) -> list[dict[str, Any]]:
    # the operator-validator's toolkit-validation init container (nvidia-validator's words)
    text = ('time="2024-06-20T01:20:55Z" level=info msg="version: 762213f2"\n'
            + line + "\ntoolkit is not ready\n"
            'time="2024-06-20T01:20:55Z" level=info msg="Error: error validating toolkit installation: '
            'exit status 12"\n')
    return [{"kind": "pod-state", "component": "validator", "container": "toolkit-validation", "init": True,
             "state": "Init:CrashLoopBackOff"},
            {"kind": "log", "component": "validator", "container": "toolkit-validation", "init": True,
             "text": text}]


def test_nvidia_smi_mounted_without_its_library_listed_is_the_toolkit_s_ldconfig() -> None:
    line = ("NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the "
            "NVIDIA Display Driver is properly installed and present in your system.")
    ubuntu = {"kind": "node-info", "fields": {"osImage": "Ubuntu 22.04.4 LTS"}}
    found = top_pair(_case(ubuntu, *_toolkit_validation(line)))
    assert found == ("container-toolkit", "toolkit_ldconfig_path_wrong")


def test_nvidia_smi_not_mounted_at_all_is_not_the_ldconfig() -> None:
    # look-alike: the binary itself is missing, so nothing was injected (not a cache left stale)
    line = ('time="2024-06-20T01:20:55Z" level=info msg="Error: error validating toolkit installation: '
            'exec: \\"nvidia-smi\\": executable file not found in $PATH"')
    found = top_pair(_case(*_toolkit_validation(line)))
    assert found is None or found[1] != "toolkit_ldconfig_path_wrong"


def test_a_function_the_loaded_library_does_not_implement_is_a_version_mismatch() -> None:
    from gpunode.kb import load_kb
    kb = load_kb()
    # NVML's NVML_ERROR_FUNCTION_NOT_FOUND as nvidia-container-cli relays it (#293) and by name
    for line in ("nvidia-container-cli: detection error: nvml error: function not found: unknown.",
                 "Failed to get CUDA driver version: ERROR_FUNCTION_NOT_FOUND"):
        assert kb.class_of(line) == "error_version_mismatch", line
    # look-alikes: a library or a file that is not there at all stays not found
    assert kb.class_of("nvidia-container-cli: initialization error: load library failed: "
                       "libnvidia-ml.so.1: cannot open shared object file: no such file or directory") != \
        "error_version_mismatch"
    assert kb.class_of('Error: exec: "nvidia-smi": executable file not found in $PATH') == "error_not_found"


def _cdi_unresolved(device: str, plugin: str, container: str) -> list[dict[str, Any]]:
    message = ("failed to create containerd container: CDI device injection failed: "
               f"unresolvable CDI devices {device}")
    return [{"kind": "pod-state", "component": plugin, "container": container, "state": "Running"},
            {"kind": "event", "object": {"kind": "Pod", "name": "mig-test", "namespace": "default"},
             "type": "Warning", "reason": "Failed", "message": message}]


def test_a_device_of_the_plugin_s_own_cdi_spec_unresolved_is_the_serving_plugin_s() -> None:
    # the kind NVIDIA's plugin (cdi-cri strategy) and HAMi's fork write their own spec for
    device = "k8s.device-plugin.nvidia.com/gpu=MIG-4c0f3a50-17a4-52eb-8450-e29e24c80885"
    found = top_pair(_case(*_cdi_unresolved(device, "hami-device-plugin", "device-plugin")))
    assert found == ("hami-device-plugin", "error_not_found")
    found = top_pair(_case(*_cdi_unresolved(device, "device-plugin", "nvidia-device-plugin")))
    assert found is not None and found[0] == "device-plugin"


def test_a_device_of_the_toolkit_s_cdi_spec_unresolved_stays_the_toolkit_s() -> None:
    # look-alike: the toolkit's own kinds (NVIDIA/gpu-operator#531's management.nvidia.com/gpu=all)
    for device in ("management.nvidia.com/gpu=all",
                   "nvidia.com/gpu=GPU-8f6b2b8c-1b4e-4c52-9d0f-0a1f2e3d4c5b"):
        found = top_pair(_case(*_cdi_unresolved(device, "hami-device-plugin", "device-plugin")))
        assert found == ("container-toolkit", "cdi_spec_generation_failed"), device


def test_the_cli_quoted_without_its_step_still_relays_the_driver_s_answer() -> None:
    from gpunode.catalog import load_catalog
    catalog = load_catalog()
    # Frigate's documentation (Common Error Messages) quotes the CLI without "initialization error:"
    assert catalog.named_in("nvidia-container-cli: nvml error: driver not loaded") == "driver"
    stepped = "nvidia-container-cli: initialization error: nvml error: driver not loaded"
    assert catalog.named_in(stepped) == "driver"
    # look-alike: the CLI's own step failing on the container's files names no driver
    assert catalog.named_in("nvidia-container-cli: ldcache error: process /sbin/ldconfig failed with error "
                            "code: 1") != "driver"
