"""A running component whose last word is an error that names a lower layer in its own
words, and that the knowledge base catalogues as that layer's symptom, is read (for the
diagnosis to move it to that layer) instead of being left to the layer's own checks, which
see nothing while its pods run. A transient error, one followed by a success, and one that
names the GPUs (judged by their own facts only) stay unread. Lines are from public reports
(each source is named beside it)."""

from __future__ import annotations

from gpunode.catalog import load_catalog
from gpunode.checks.decisive import running_finding
from gpunode.facts import LogFile
from gpunode.kb import load_kb

KB = load_kb()
NAMES = load_catalog().named_in

# containers/crun#1802: the standalone device plugin on CRI-O after crun 1.18, idling after NVML
# init failed, its hints to the reader last
_PLUGIN_NVML = (
    "E0627 10:12:47.588061       1 factory.go:68] Failed to initialize NVML: Unknown Error.",
    "E0627 10:12:47.588076       1 factory.go:69] If this is a GPU node, did you set the docker default "
    "runtime to `nvidia`?",
    "E0627 10:12:47.588081       1 factory.go:70] You can check the prerequisites at: "
    "https://github.com/NVIDIA/k8s-device-plugin#prerequisites",
)


def _log(component: str, *lines: str) -> LogFile:
    return LogFile(f"logs/gpu-operator/{component}-x/{component}.log", "gpu-operator", f"{component}-x",
                   component, False, lines)


def test_an_nvml_error_a_running_plugin_idles_after_names_the_layer_below() -> None:
    found = running_finding(KB, "device-plugin", [_log("device-plugin", *_PLUGIN_NVML)], NAMES)
    assert found is not None and "Failed to initialize NVML: Unknown Error" in found.context["decisive_line"]
    assert NAMES(found.context["decisive_line"]) == "container-toolkit"


def test_without_the_node_reading_the_symptom_stays_the_lower_layers() -> None:
    assert running_finding(KB, "device-plugin", [_log("device-plugin", *_PLUGIN_NVML)]) is None


def test_an_nvml_error_followed_by_its_provider_starting_is_no_lasting_failure() -> None:
    # NVIDIA/go-nvml#164: dcgm-exporter logs NVML's Unknown Error once, then goes on
    lines = ('time=2025-09-09T20:19:25.195Z level=ERROR msg="Cannot init NVML library; err: Unknown Error"',
             'time=2025-09-09T20:19:25.195Z level=INFO msg="DCGM successfully initialized!"',
             'time=2025-09-09T20:19:25.195Z level=INFO msg="NVML provider successfully initialized!"')
    assert running_finding(KB, "dcgm-exporter", [_log("dcgm-exporter", *lines)], NAMES) is None


def test_a_lost_gpu_in_a_running_agents_words_is_read_as_before() -> None:
    # the GPUs are judged by their own facts only: naming them moves nothing, and the
    # agent's own reading of the line is what it was without the node's
    line = ('time="2024-05-01T10:00:30Z" level=error msg="Failed to collect metrics; err: '
            'Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost"')
    logs = [_log("dcgm-exporter", line)]
    assert running_finding(KB, "dcgm-exporter", logs, NAMES) == running_finding(KB, "dcgm-exporter", logs)
