"""A cluster component's failure whose decisive line names what a component absent from the
nodes provides is explained by that node cause: the GPU Operator crash-looping on "Could not
find kernel full version" (the feature.node.kubernetes.io/kernel-version.full label NFD sets)
where no NFD runs is NFD not deployed, the cause to fix (NVIDIA/gpu-operator#99, #149). The
same crash with NFD on the nodes keeps the operator's own line as the cause."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.catalog import load_catalog

KERNEL = ('{"level":"info","ts":1604617160.9256659,"logger":"controller_clusterpolicy",'
          '"msg":"Failed to apply transformation \'nvidia-driver-daemonset\' with error: '
          "'ERROR: Could not find kernel full version: ('', '')'\"}")


def _case(nfd_absent: bool) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "pod-state", "component": "gpu-operator", "state": "CrashLoopBackOff"},
        {"kind": "log", "component": "gpu-operator", "container": "gpu-operator", "previous": True,
         "text": KERNEL + "\n"}]
    if nfd_absent:
        gone: dict[str, None] = {"feature.node.kubernetes.io/pci-10de.present": None,
                                 "feature.node.kubernetes.io/kernel-version.full": None,
                                 "nvidia.com/gpu.present": None}
        evidence += [{"kind": "node-labels", "labels": gone}, {"kind": "pod-missing", "component": "nfd"}]
    return synthetic_case("x-operator-lacks", evidence, platform="openshift")


def test_operator_line_lacking_nfds_label_is_nfd_not_deployed() -> None:
    assert top_pair(_case(nfd_absent=True)) == ("nfd", "nfd_not_deployed")


def test_same_crash_with_nfd_running_stays_the_operators() -> None:
    top = top_pair(_case(nfd_absent=False))
    assert top is not None and top[0] == "gpu-operator"


def test_nfd_is_named_by_its_labels_not_by_other_kernel_words() -> None:
    catalog = load_catalog()
    assert "nfd" in catalog.all_named_in("Could not find kernel full version: ('', '')")
    assert "nfd" in catalog.all_named_in("missing label feature.node.kubernetes.io/kernel-version.full")
    assert "nfd" not in catalog.all_named_in("Could not resolve Linux kernel version")
