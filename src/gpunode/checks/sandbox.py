"""VM-passthrough and vGPU nodes (GPU Operator sandbox workloads), judged by their own rules.

Their GPUs go whole to KubeVirt or Kata VMs: the vfio-manager unloads the NVIDIA driver and
binds the GPUs to vfio-pci, and the sandbox device plugin (kubevirt-gpu-device-plugin)
advertises them as ``nvidia.com/<DEVICE>`` resources. No driver container, container
toolkit or NVIDIA device plugin runs there by design (checks/pods.py says so for each
container operand; the toolkit check does not ask for an NVIDIA runtime). What is judged
here is what does the job instead.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.checks import operator
from gpunode.checks.base import check, ok, problem
from gpunode.checks.context import NodeContext
from gpunode.gpus import quantity
from gpunode.model import Evidence, Finding

VFIO_READY = "run/nvidia/validations/vfio-pci-ready"
#: nvidia.com resources that are not the sandbox plugin's device resources
CONTAINER_RESOURCES = ("nvidia.com/gpu", "nvidia.com/mig-", "nvidia.com/gpu.shared")


def vm_workload(ctx: NodeContext) -> str | None:
    """The node's VM workload (vm-passthrough, vm-vgpu) as the operator honours it, or None."""
    node = ctx.node
    if node is None:
        return None
    known = bool(ctx.facts.cluster_policies)
    return operator.vm_workload(node.metadata.labels, ctx.cluster_policy_spec, known)


@check("vfio-manager")
def gpus_bound_to_vfio(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The validator writes vfio-pci-ready once every GPU of a vm-passthrough node is bound
    to vfio-pci (the sandbox device plugin's init container waits for it)."""
    if ctx.stack_pods(component) and VFIO_READY in ctx.obs.files:
        ev = Evidence(ctx.obs.path_of("files", VFIO_READY), "present")
        yield ok(component, "GPUs bound to vfio-pci (vfio-pci-ready)", ev)


@check("sandbox-device-plugin", needs=("node",))
def vm_devices_advertised(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A running sandbox device plugin puts the bound GPUs (or vGPU types) on its node as
    nvidia.com/<DEVICE> resources; none with a count, and no VM can get a GPU here. A pod
    not yet running is judged by the pod check."""
    node = ctx.node
    running = [sp.pod for sp in ctx.stack_pods(component) if sp.pod.status.phase == "Running"]
    if node is None or not running or not ctx.node_reporting or not node.status.allocatable:
        return
    found = {k: v for k, v in node.status.allocatable.items() if _vm_resource(k)}
    where = f"node/{ctx.name} status.allocatable"
    shown = ", ".join(f"{k}={v}" for k, v in sorted(found.items())) or "no nvidia.com/<DEVICE> resource"
    if not found or all(quantity(v) == 0 for v in found.values()):
        pod = running[0].metadata
        yield problem(component, "sandbox_plugin_no_resources", Evidence(where, shown), specificity=30,
                      namespace=pod.namespace, pod=pod.name)
    else:
        yield ok(component, f"advertises {shown}", Evidence(where, shown))


def _vm_resource(name: str) -> bool:
    return name.startswith("nvidia.com/") and not name.startswith(CONTAINER_RESOURCES)
