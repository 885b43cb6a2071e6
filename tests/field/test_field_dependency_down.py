"""Following a dependency down without reading a symptom where it is not one.

A ``seen_in`` signature is a lower layer's mark in other components' pods: the device plugin
that finds no NVML because no NVIDIA runtime prepared its container. The owner's own log is
not one of those pods: the toolkit's CDI step saying NVML's ERROR_LIBRARY_NOT_FOUND
(NixOS/nixpkgs#397065) is the spec generation failing, not a container started without the
runtime. A cause's example speaks for the signatures it is a line of, so the class of
cdi_spec_generation_failed's example (a CDI device the runtime could not resolve) does not
veto its toolkit log signature.
"""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

from gpunode.kb import load_kb

#: NixOS/nixpkgs#397065: the toolkit's CDI spec generation, NVML's library not found.
CDI_NVML = ("ERRO[0000] failed to generate CDI spec: failed to create device CDI specs: "
            "failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND")
#: NVIDIA/k8s-device-plugin#139's plugin, whose container got no NVML from the runtime.
PLUGIN_NO_NVML = ("2019/09/30 12:34:07 Failed to initialize NVML: could not load NVML library.\n"
                  "2019/09/30 12:34:07 If this is a GPU node, did you set the docker default "
                  "runtime to `nvidia`?\n")


def _toolkit_crash(text: str) -> list[dict[str, Any]]:
    return [{"kind": "pod-state", "component": "container-toolkit", "state": "CrashLoopBackOff",
             "restarts": 4},
            {"kind": "log", "component": "container-toolkit", "previous": True, "text": text + "\n"}]


def test_the_toolkits_own_cdi_failure_is_not_a_missing_default_runtime() -> None:
    case = synthetic_case("x-dd-cdi-nvml", _toolkit_crash(CDI_NVML), cluster={"cdi": True}, healthy=False)
    assert top_pair(case) == ("container-toolkit", "cdi_spec_generation_failed")


def test_the_same_symptom_in_the_plugin_still_names_the_default_runtime() -> None:
    evidence = [{"kind": "log", "component": "device-plugin", "container": "nvidia-device-plugin",
                 "text": PLUGIN_NO_NVML},
                {"kind": "pod-state", "component": "device-plugin", "container": "nvidia-device-plugin",
                 "state": "Running"}]
    case = synthetic_case("x-dd-plugin-nvml", evidence, platform="docker", healthy=False,
                          cluster={"driver_mode": "host", "runtime_class": False})
    assert top_pair(case) == ("container-toolkit", "nvidia_not_default_runtime")


def test_a_seen_in_signature_is_not_read_in_its_owners_pods() -> None:
    kb = load_kb()
    own = [c.code for c, _m in kb.matchers("container-toolkit", "log")]
    assert "nvidia_not_default_runtime" not in own
    # a signature whose readers include "*" is still read in its owner's pods
    assert "validator_dev_char_symlinks_failed" in [c.code for c, _m in kb.matchers("validator", "log")]


def test_a_cause_is_judged_by_the_example_of_the_signature_that_matched() -> None:
    kb = load_kb()
    found = kb.catalogued_in("container-toolkit", CDI_NVML)
    assert found is not None and found.code == "cdi_spec_generation_failed"
    # look-alike: the config the toolkit could not parse is still not one it could not open
    parse = 'level=error msg="unable to load config: (1, 1): parsing error: keys cannot contain { character"'
    found = kb.catalogued_in("container-toolkit", parse)
    assert found is None or found.code != "containerd_not_patched"
