"""Decisive lines that read as noise or were not read at all: an error whose errno slot says
"Success" (the C library's text for errno 0) is still an error, and the hints a program
prints after its error ("You can check the prerequisites at: ...") are not a later word
that hides it. Lines are real ones from public reports (address beside each)."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import top_pair

from gpunode.catalog import load_catalog
from gpunode.checks.decisive import running_finding
from gpunode.decisive import decisive_line, is_advice, severity
from gpunode.facts import LogFile
from gpunode.kb import load_kb

KB = load_kb()
CATALOG = load_catalog()

#: NVIDIA Container Toolkit troubleshooting guide ("Permission denied error when running the
#: nvidia-docker wrapper under SELinux"): the wrapper's two lines, the second the shell's
#: strerror(0) after the failed exec.
WRAPPER_DENIED = "/bin/nvidia-docker: line 34: /bin/docker: Permission denied"
WRAPPER_ERRNO_ZERO = "/bin/nvidia-docker: line 34: /bin/docker: Success"
#: sriov-network-device-plugin#310 (a healthy plugin): a success in its own words.
REGISTERED = ("I0106 13:12:42.476764       1 server.go:106] Plugin: intel.com_mlnx_sriov_rdma.sock gets "
              "registered successfully at Kubelet")


def test_an_error_whose_errno_slot_says_success_is_still_an_error() -> None:
    # the event joins the wrapper's two lines into one message
    joined = f"{WRAPPER_DENIED} {WRAPPER_ERRNO_ZERO}"
    assert severity(joined) == 1
    found = decisive_line([joined], KB.class_of)
    assert found is not None and KB.class_of(found.message) == "error_permission_denied"


def test_a_success_in_its_own_words_stays_noise() -> None:
    # negative: the errno slot alone names no failure, and a success said as one is noise
    assert severity(WRAPPER_ERRNO_ZERO) == 0
    assert severity(REGISTERED) == 0
    assert severity("W0101 00:00:00.000000 1 x.go:1] retry failed, retrying: Success") == 0


def test_the_nvidia_docker_wrapper_speaking_names_the_toolkit() -> None:
    assert CATALOG.named_in(WRAPPER_DENIED) == "container-toolkit"
    # negative: the project's address is not the wrapper speaking
    url = "see https://github.com/NVIDIA/nvidia-docker/issues/1648: permission denied"
    assert CATALOG.named_in(url) is None


def _case(*evidence: dict[str, Any], **cluster: Any) -> Case:
    raw = {"id": "x-hints-errno", "source": "https://example.org/x", "title": "t", "platform": "docker",
           "evidence": list(evidence), "expect": {"healthy": False}, "cluster": cluster}
    return msgspec.convert(raw, Case)


def test_a_gpu_job_refused_by_the_wrapper_is_the_toolkit_s_permission_error() -> None:
    event = {"kind": "event", "object": {"kind": "Pod", "name": "cuda-smoke"}, "type": "Warning",
             "reason": "Failed", "message": f"{WRAPPER_DENIED}\n{WRAPPER_ERRNO_ZERO}\n"}
    assert top_pair(_case(event, driver_mode="host")) == ("container-toolkit", "error_permission_denied")


#: NVIDIA/k8s-device-plugin#170 (OpenShift scale-up): the plugin's error, its hints, then it idles.
PLUGIN_LOG = (
    "2020/05/14 02:11:19 Loading NVML",
    "2020/05/14 02:11:19 Failed to initialize NVML: could not load NVML library.",
    "2020/05/14 02:11:19 If this is a GPU node, did you set the docker default runtime to `nvidia`?",
    "2020/05/14 02:11:19 You can check the prerequisites at: https://github.com/NVIDIA/k8s-device-plugin#prerequisites",
    "2020/05/14 02:11:19 You can learn how to set the runtime at: https://github.com/NVIDIA/k8s-device-plugin#quick-start",
)


def _plugin_log(*lines: str) -> LogFile:
    pod = "nvidia-device-plugin-daemonset-7mllb"
    return LogFile(f"logs/gpu-operator/{pod}/nvidia-device-plugin.log", "gpu-operator", pod,
                   "nvidia-device-plugin", False, lines)


def test_hints_after_an_error_are_advice_not_a_later_word() -> None:
    assert [is_advice(line) for line in PLUGIN_LOG] == [False, False, True, True, True]
    # docker's hint after its error (NVIDIA/nvidia-docker#1648 and every `docker run` failure)
    assert is_advice("See 'docker run --help'.")


def test_a_running_plugin_whose_error_is_followed_only_by_hints_is_degraded() -> None:
    found = running_finding(KB, "device-plugin", [_plugin_log(*PLUGIN_LOG)])
    assert found is not None and found.cause == "nvml_not_injected"


def test_a_plugin_that_went_on_after_its_hints_is_not() -> None:
    # negative: a line after the hints that is the plugin's own work (v0.x's start-up, as in
    # NVIDIA/k8s-device-plugin's README) says it got past the error
    went_on = "2020/05/14 02:11:25 Registered device plugin with Kubelet"
    assert running_finding(KB, "device-plugin", [_plugin_log(*PLUGIN_LOG, went_on)]) is None
