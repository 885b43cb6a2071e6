"""Why the GPU Operator put no operand pod on a node, judged the way the operator does.

The operator (controllers/state_manager.go, nodelabeling_controller.go) labels a
node ``nvidia.com/gpu.present=true`` only when NFD labelled an NVIDIA PCI device
(``feature.node.kubernetes.io/pci-10de.present`` or the class+vendor forms);
without it, it removes every ``nvidia.com/gpu.deploy.*`` state label, and each
operand's DaemonSet selects only nodes whose state label is "true". An admin may
set a state label to "false" (or ``nvidia.com/gpu.deploy.operands=false``); with
sandbox workloads enabled, ``nvidia.com/gpu.workload.config`` other than
"container" swaps the container operands for VM ones; a ClusterPolicy section
with ``enabled: false`` creates no DaemonSet at all.
"""

from __future__ import annotations

from collections.abc import Mapping

GPU_PRESENT = "nvidia.com/gpu.present"
NVIDIA_PCI_LABELS = (
    "feature.node.kubernetes.io/pci-10de.present",
    "feature.node.kubernetes.io/pci-0302_10de.present",
    "feature.node.kubernetes.io/pci-0300_10de.present",
)
OPERANDS_LABEL = "nvidia.com/gpu.deploy.operands"
WORKLOAD_CONFIG = "nvidia.com/gpu.workload.config"
# sandbox workloads: GPUs bound to vfio-pci for KubeVirt/Kata VMs, or vGPU devices for them
VM_WORKLOADS = frozenset({"vm-passthrough", "vm-vgpu"})
#: Every value of the workload label the operator knows (controllers/state_manager.go: the keys of
#: gpuStateLabels, which isValidWorkloadConfig tests); any other it rejects and runs its default.
WORKLOAD_CONFIGS = frozenset({"container", *VM_WORKLOADS})

# Catalog component -> (its state label, its ClusterPolicy section).
OPERANDS: dict[str, tuple[str, str]] = {
    "driver": ("nvidia.com/gpu.deploy.driver", "driver"),
    "container-toolkit": ("nvidia.com/gpu.deploy.container-toolkit", "toolkit"),
    "device-plugin": ("nvidia.com/gpu.deploy.device-plugin", "devicePlugin"),
    "gfd": ("nvidia.com/gpu.deploy.gpu-feature-discovery", "gfd"),
    "dcgm-exporter": ("nvidia.com/gpu.deploy.dcgm-exporter", "dcgmExporter"),
    "mig-manager": ("nvidia.com/gpu.deploy.mig-manager", "migManager"),
    "validator": ("nvidia.com/gpu.deploy.operator-validator", "validator"),
}


def has_nvidia_pci_label(labels: Mapping[str, str]) -> bool:
    """NFD saw an NVIDIA PCI device (the operator's own test, hasGPULabels)."""
    return "true" in map(labels.get, NVIDIA_PCI_LABELS)  # (in C)


def nfd_missed_vendor(labels: Mapping[str, str], operator: bool) -> bool:
    """NFD labelled the node but not in the form that says "NVIDIA device here": no PCI label
    with vendor 10de at all, or (where the GPU Operator reads it) only labels whose fields the
    operator does not read (``pci-10de_2237`` when NFD's deviceLabelFields add the device id)."""
    if not any(key.startswith("feature.node.kubernetes.io/") for key in labels):
        return False  # NFD has not labelled the node at all: another cause
    if operator:
        return not has_nvidia_pci_label(labels)
    return not any(key.startswith("feature.node.kubernetes.io/pci-") and "10de" in key for key in labels)


#: The vendor-only form every operator release reads; the class+vendor forms (pci-0300_10de,
#: pci-0302_10de: NFD's default deviceLabelFields [class, vendor]) only later releases read
#: (gpuNodeLabels in controllers/state_manager.go; NVIDIA/gpu-operator#78 and #114: a 2020
#: operator that selected GPU nodes by pci-10de.present alone passed over pci-0302_10de nodes).
_VENDOR_ONLY = NVIDIA_PCI_LABELS[0]


def classed_form_passed_over(labels: Mapping[str, str]) -> bool:
    """NFD labelled the NVIDIA device only in a class+vendor form, and the operator's own
    label is absent: every release that reads that form keeps ``nvidia.com/gpu.present`` in
    sync with it (reconcileCommonGPULabel), so the operator in use does not read it and takes
    the node for one without a GPU. An administrator's ``gpu.present=false`` is a choice, not
    this; a node with the vendor-only label is read by every release."""
    if labels.get(_VENDOR_ONLY) == "true" or GPU_PRESENT in labels:
        return False
    return any(labels.get(key) == "true" for key in NVIDIA_PCI_LABELS[1:])


def nfd_label_unread(labels: Mapping[str, str], operator: bool) -> bool:
    """NFD labelled the node in no form the GPU Operator in use reads (``nfd_missed_vendor``),
    or, where the operator runs, only in a class+vendor form it did not take up
    (``classed_form_passed_over``): the node's own labels, not the form alone."""
    # (a node with the vendor-only label, every healthy one, is not asked about the other forms)
    return nfd_missed_vendor(labels, operator) or (
        operator and labels.get(_VENDOR_ONLY) != "true" and classed_form_passed_over(labels))


def operator_sees_gpu(labels: Mapping[str, str]) -> bool:
    """The operator treats the node as a GPU node: it keeps gpu.present in sync with NFD's
    NVIDIA PCI label (reconcileCommonGPULabel), whatever gpu.present says now."""
    return has_nvidia_pci_label(labels)


def skip_reason(
    component: str,
    labels: Mapping[str, str],
    policy_spec: Mapping[str, object] | None,
) -> str | None:
    """Why the operator deliberately deploys no ``component`` pod on this node, or None.

    None also when the operator would deploy it (then a missing pod is a problem) or
    when the component is not a GPU Operator operand.
    """
    if component not in OPERANDS:
        return None
    label, section = OPERANDS[component]
    if policy_spec is not None:
        value = policy_spec.get(section)
        if isinstance(value, dict) and value.get("enabled") is False:
            return f"disabled in the ClusterPolicy ({section}.enabled=false)"
    if labels.get(OPERANDS_LABEL) == "false":
        return f"operands disabled on this node ({OPERANDS_LABEL}=false)"
    config = labels.get(WORKLOAD_CONFIG, "container")
    if config != "container" and sandbox_enabled(policy_spec):
        return f"node runs {config} workloads ({WORKLOAD_CONFIG}={config}): no container operands"
    state = labels.get(label)
    if state is not None and state != "true":
        return f"disabled on this node ({label}={state})"
    return None


def vm_workload(
    labels: Mapping[str, str], policy_spec: Mapping[str, object] | None, policy_known: bool
) -> str | None:
    """The VM workload the operator runs on this node (vm-passthrough, vm-vgpu), or None.

    The node's ``nvidia.com/gpu.workload.config`` label, else the ClusterPolicy's
    ``sandboxWorkloads.defaultWorkload``; the operator honours them only while
    ``sandboxWorkloads.enabled`` is true. Without a ClusterPolicy in the source the
    label alone says it (the operator set it, or an admin for the operator).
    """
    sandbox = (policy_spec or {}).get("sandboxWorkloads")
    enabled = isinstance(sandbox, dict) and sandbox.get("enabled") is True
    if policy_known and not enabled:
        return None
    default = sandbox.get("defaultWorkload") if isinstance(sandbox, dict) and enabled else None
    config = labels.get(WORKLOAD_CONFIG) or (default if isinstance(default, str) else None)
    return config if config in VM_WORKLOADS else None


def vm_reason(config: str) -> str:
    """Why a container operand has no pod on a VM node."""
    return f"node runs {config} workloads ({WORKLOAD_CONFIG}={config}): no container operands"


def sandbox_enabled(spec: Mapping[str, object] | None) -> bool:
    """The ClusterPolicy turns sandbox workloads on: only then does the operator read the
    workload label at all (getWorkloadConfig returns "container" otherwise)."""
    value = (spec or {}).get("sandboxWorkloads")
    return isinstance(value, dict) and value.get("enabled") is True
