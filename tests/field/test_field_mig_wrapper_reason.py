"""The device plugin's panic for a MIG-enabled device it refuses ("At least one device with
migEnabled=true was not configured correctly: <reason>") is read by its reason: no MIG devices
on the GPU is mig_enabled_no_instances (NVIDIA/k8s-device-plugin#253), more than one MIG device
type under the single strategy is mig_strategy_mismatch (NVIDIA/gpu-operator#460)."""

from __future__ import annotations

from gpunode.kb import load_kb

WRAPPER = "panic: At least one device with migEnabled=true was not configured correctly: "


def _best(line: str) -> str | None:
    kb = load_kb()
    found = [c for c, m in kb.matchers("device-plugin", "log") if m.regex.search(line)]
    return max(found, key=lambda c: c.specificity).code if found else None


def test_the_single_strategy_s_refusal_of_a_mixed_layout_is_the_strategy() -> None:
    assert _best(WRAPPER + "More than one MIG device type present on node") == "mig_strategy_mismatch"


def test_a_device_without_instances_stays_no_instances() -> None:
    line = WRAPPER + "No MIG devices associated with /dev/nvidia0: GPU-fe14a161-d1f3-7706-c257-3b22fe15c684"
    assert _best(line) == "mig_enabled_no_instances"
    assert _best(WRAPPER + "device 0 has no MIG devices configured") == "mig_enabled_no_instances"
    assert _best(WRAPPER.rstrip(": ")) == "mig_enabled_no_instances"
