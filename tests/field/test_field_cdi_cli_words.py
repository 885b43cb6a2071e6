"""Two ways a GPU container's creation fails that named no failure before: a CDI device the
runtime cannot resolve ('unresolvable CDI devices <kind>=<name>', moby/moby#47633; of the kind
the device plugin writes its own spec for, so the plugin serving the node, HAMi's where it
runs: https://project-hami.io/docs/troubleshooting), and a hook's CLI that does not know the
subcommand the spec calls (urfave/cli's "No help topic for '<name>'": the toolkit older than
the spec, https://project-hami.io/docs/installation/configure-cdi). A line that only mentions
the words without failing, or a refusal that names no subcommand, stays as it was."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

from gpunode.decisive import decisive_line
from gpunode.kb import load_kb

UNRESOLVED = "unresolvable CDI devices k8s.device-plugin.nvidia.com/gpu=GPU-3f1b2c4d"
NO_TOPIC = "stderr: No help topic for 'disable-device-node-modification'"


def _gpu_pod(message: str) -> list[dict[str, Any]]:
    return [{"kind": "pod-state", "component": "hami-device-plugin", "container": "device-plugin",
             "state": "Running"},
            {"kind": "workload", "name": "gpu-pod", "namespace": "default", "container": "cuda",
             "resources": {"limits": {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "3000"}},
             "state": "CreateContainerError", "message": message},
            {"kind": "event", "object": {"kind": "Pod", "name": "gpu-pod", "namespace": "default"},
             "type": "Warning", "reason": "Failed", "message": message}]


def test_the_lines_are_decisive_with_their_class() -> None:
    kb = load_kb()
    assert decisive_line([UNRESOLVED], kb.class_of) is not None
    assert kb.class_of(UNRESOLVED) == "error_not_found"
    assert decisive_line([NO_TOPIC], kb.class_of) is not None
    assert kb.class_of(NO_TOPIC) == "error_version_mismatch"


def test_look_alikes_that_report_no_failure_stay_quiet() -> None:
    kb = load_kb()
    for quiet in ("resolved CDI devices k8s.device-plugin.nvidia.com/gpu=GPU-3f1b2c4d",
                  "Run 'nvidia-ctk help' for the list of help topics"):
        assert decisive_line([quiet], kb.class_of) is None, quiet


def test_an_unresolvable_plugin_device_is_the_serving_plugins() -> None:
    case = synthetic_case("x-unresolvable-hami", _gpu_pod(UNRESOLVED), cluster={"cdi": True}, healthy=False)
    assert top_pair(case) == ("hami-device-plugin", "error_not_found")


def test_a_hook_cli_without_the_subcommand_is_the_toolkits_version() -> None:
    case = synthetic_case("x-no-help-topic", _gpu_pod(NO_TOPIC), cluster={"cdi": True}, healthy=False)
    assert top_pair(case) == ("container-toolkit", "error_version_mismatch")


def test_a_healthy_gpu_pod_with_the_same_stack_stays_healthy() -> None:
    evidence = _gpu_pod(UNRESOLVED)[:1]
    assert top_pair(synthetic_case("x-hami-healthy", evidence, cluster={"cdi": True})) is None


#: NVIDIA's plugin manager with a device discovery strategy (0.15+, HAMi's fork too), finding
#: neither NVML nor Tegra in its container: the three lines a k3s write-up shows with runc the
#: default and no runtimeClassName (HAMi's troubleshooting page, GPU Operator 25.10+).
STRATEGY = ("E0925 19:53:51.423171 1 factory.go:135] Incompatible strategy detected auto\n"
            "E0925 19:53:51.428513 1 main.go:201] error starting plugins: unable to create plugin "
            "manager: invalid device discovery strategy\n")


def _plugin(text: str) -> list[dict[str, Any]]:
    return [{"kind": "log", "component": "hami-device-plugin", "container": "device-plugin",
             "previous": True, "text": text},
            {"kind": "pod-state", "component": "hami-device-plugin", "container": "device-plugin",
             "state": "CrashLoopBackOff", "restarts": 5}]


def test_a_plugin_that_found_no_platform_names_the_default_runtime() -> None:
    cluster = {"cdi": True, "runtime_class": False}
    top = top_pair(synthetic_case("x-strategy", _plugin(STRATEGY), cluster=cluster, healthy=False))
    assert top == ("container-toolkit", "nvidia_not_default_runtime")


def test_a_plugin_whose_pod_names_the_runtime_class_is_not_the_defaults_fault() -> None:
    # the operator's own plugin asks for the nvidia RuntimeClass where CDI is on
    evidence = [{**e, "component": "device-plugin", "container": "nvidia-device-plugin"}
                for e in _plugin(STRATEGY)]
    top = top_pair(synthetic_case("x-strategy-rc", evidence, cluster={"cdi": True}, healthy=False))
    assert top is not None and top[1] != "nvidia_not_default_runtime"


def test_a_cdi_path_missing_is_the_sharing_plugins_spec() -> None:
    from gpunode.catalog import load_catalog
    from gpunode.checks.named import sharing_spec_owner
    catalog = load_catalog()
    for line in ('failed to stat CDI host device "/dev/nvidia-modeset": no such file or directory',
                 "error running createContainer hook #0: fork/exec /usr/bin/nvidia-ctk: "
                 "no such file or directory"):
        assert sharing_spec_owner(catalog, ["hami-device-plugin"], line) == "hami-device-plugin", line
        assert sharing_spec_owner(catalog, [], line) is None, line  # NVIDIA's plugin: the toolkit's spec too
    # the legacy runtime's prestart hook, and another error on the same path, are no CDI path missing
    for other in ("error running hook #0: fork/exec /usr/bin/nvidia-container-runtime-hook: "
                  "no such file or directory",
                  "error running createContainer hook #0: fork/exec /usr/bin/nvidia-ctk: permission denied",
                  'failed to stat CDI host device "/dev/nvidia-modeset": permission denied'):
        assert sharing_spec_owner(catalog, ["hami-device-plugin"], other) is None, other


def test_a_hami_pod_whose_cdi_hook_is_missing_names_hami() -> None:
    line = "error running createContainer hook #0: fork/exec /usr/bin/nvidia-ctk: no such file or directory"
    case = synthetic_case("x-hami-hook", _gpu_pod(line), cluster={"cdi": True}, healthy=False)
    top = top_pair(case)
    assert top is not None and top[0] == "hami-device-plugin"
