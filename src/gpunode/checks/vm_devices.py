"""A KubeVirt VM that got no GPU device from the plugin that advertises the GPU resource.

KubeVirt's virt-launcher builds a VM's GPU host devices from what the device plugin of the
requested resource handed the pod: a PCI address (PCI_RESOURCE_<RESOURCE>) or a mediated
device (MDEV_PCI_RESOURCE_<RESOURCE>). A plugin made for containers (NVIDIA's device plugin,
HAMi's) hands neither, so the VM fails with "failed to create GPU host-devices: the number
of GPU/s do not match the number of devices: ... Device: []" (kubevirt/kubevirt#14387,
NVIDIA/gpu-operator#556): the resource's advertiser on the node is the wrong kind of plugin
for a VM. Where the VM plugin (the sandbox device plugin, kubevirt-gpu-device-plugin)
advertises it, the same words are KubeVirt's own configuration (permittedHostDevices'
externalResourceProvider, kubevirt/kubevirt#6459) and nothing is said here; so too where
more than one plugin could have served the pod.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from gpunode.bundle.kube import Pod
from gpunode.checks.base import ALL_POD_COMPONENTS, any_logged_workload, check
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.decisive import MAX_LINE, Decisive
from gpunode.model import Finding, Status
from gpunode.relazy import lazy_compile

#: virt-launcher's error for GPUs of the VM spec that no device handed to the pod backs.
_NO_VM_DEVICE = lazy_compile(r"\bthe number of GPU/s do not match the number of devices\b")
#: The VM spec's GPUs as the error lists them: "GPU: [{gpu1 nvidia.com/gpu <nil> }]".
_GPU_RESOURCE = lazy_compile(r"\{\S+ ([\w.-]+/[\w.-]+)")
#: The plugin that hands VMs their GPUs (vfio-pci devices, vGPUs).
VM_PLUGIN = "sandbox-device-plugin"
_CLASS = "error_not_found"


def _resources(line: str, pod: Pod) -> list[str]:
    """The resources the VM's GPUs name in the line, else the extended ones the pod asks for."""
    named = _GPU_RESOURCE.findall(line)
    if named:
        return list(dict.fromkeys(named))
    return [k for c in pod.spec.containers for k in c.resources.limits if "/" in k]


def advertiser(ctx: NodeContext, resources: Sequence[str]) -> str | None:
    """The one component running here that advertises these resources to the pod (a plugin
    that replaces another one running beside it wins); None where the VM plugin is one of
    them, where none is, or where it cannot be told which."""
    if ctx.stack_pods(VM_PLUGIN):  # it advertises device-named resources (nvidia.com/<DEVICE>)
        return None
    found = [c for r in resources for c in ctx.facts.catalog.advertisers(r) if ctx.stack_pods(c)]
    running = list(dict.fromkeys(found))
    if not running:
        return None
    replacers = {sp.component for other in running if (sp := ctx.replaced_by(other)) is not None}
    chosen = [c for c in running if c in replacers] or running
    return chosen[0] if len(chosen) == 1 else None


@check(ALL_POD_COMPONENTS, may_find=any_logged_workload)
def vm_without_device(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A VM pod on the node whose launcher found no device for its GPUs, charged to the
    container plugin that advertised the GPU resource it asked for."""
    for pod, log in ctx.workload_logs():
        index = next((i for i in range(len(log.lines) - 1, -1, -1)
                      if _NO_VM_DEVICE.search(log.lines[i])), None)
        if index is None or advertiser(ctx, _resources(log.lines[index], pod)) != component:
            continue
        meta = pod.metadata
        found = Decisive(index + 1, log.lines[index].strip()[:MAX_LINE], 2)
        yield line_finding(ctx.kb, component, Status.FAILED, found, f"{log.path}:{index + 1}",
                           verb=f"hands no VM device to workload {meta.namespace}/{meta.name}",
                           line_class=_CLASS, standalone="true", namespace=meta.namespace,
                           pod=meta.name, container=log.container)
        return
