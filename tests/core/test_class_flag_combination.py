"""A program that refuses the value of one of its command-line flags beside another of its
settings ("using --mig-strategy=mixed is not supported with MPS", the device plugin's
validateFlags in NVIDIA/k8s-device-plugin cmd/nvidia-device-plugin/main.go) was started with a
configuration that contradicts itself: a configuration error, not a fault of the GPUs' MIG
layout, which the plugin has not looked at yet."""

from __future__ import annotations

import pytest

from gpunode.kb import load_kb

KB = load_kb()


def _signatures(line: str) -> list[str]:
    return [c.code for c, m in KB.matchers("device-plugin", "log") if m.regex.search(line)]


@pytest.mark.parametrize(
    "line",
    [
        "using --mig-strategy=mixed is not supported with MPS",
        # as a crash-looping plugin's log ends (klog prefix, the error relayed by main)
        "E0706 10:12:03.118204       1 main.go:173] error starting plugins: unable to validate flags: "
        "using --mig-strategy=mixed is not supported with MPS",
    ],
)
def test_a_refused_flag_combination_is_a_configuration_error(line: str) -> None:
    assert KB.class_of(line) == "error_config_invalid"
    assert "mig_strategy_mismatch" not in _signatures(line)


def test_the_strategy_s_refusal_of_a_layout_stays_the_strategy() -> None:
    line = ("Invalid configuration detected for mig-strategy=single: "
            "more than one MIG device type present on node")
    assert "mig_strategy_mismatch" in _signatures(line)


@pytest.mark.parametrize(
    ("line", "cls"),
    [
        # a flag stated with its value and nothing refused
        ("Running with flags: --mig-strategy=mixed --device-list-strategy=cdi-annotations", None),
        # a feature unsupported with no flag of the program's own named
        ("Long batch norm is not supported with MPS", None),
    ],
)
def test_look_alike_keeps_its_class(line: str, cls: str | None) -> None:
    assert KB.class_of(line) == cls
