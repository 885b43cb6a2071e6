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
from gpunode.checks.base import check, ok, pods_here, problem
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.checks.probe import NEEDS as PROBE_NEEDS
from gpunode.checks.probe import PROBE_FILE, VFIO_DRIVER
from gpunode.decisive import Decisive
from gpunode.gpus import quantity
from gpunode.model import Evidence, Finding, Status
from gpunode.probe.host_facts import PciGpu
from gpunode.relazy import lazy_compile

VFIO_READY = "run/nvidia/validations/vfio-pci-ready"
#: nvidia.com resources that are not the sandbox plugin's device resources: the container
#: device plugin's whole and shared GPUs (these names exactly) and its MIG instances (a prefix);
#: a plugin's own prefix before the device name ("nvidia.com/gpu-vm-<DEVICE>") is still a device's
CONTAINER_RESOURCES = ("nvidia.com/gpu", "nvidia.com/gpu.shared")
MIG_RESOURCES = "nvidia.com/mig-"
#: Words of a device name that is no GPU's: the plugin names each device after the pci.ids line
#: of its device id, and a build that matched the id alone, whatever the vendor, took another
#: vendor's device of the same id (device 2330, an H100 SXM, named 802_11BG_WIRELESS_CARDBUS_ADAPTER:
#: NVIDIA/kubevirt-gpu-device-plugin#106, fixed by matching vendor 10de with the id, commit
#: 5b46136). NVIDIA's GPU functions are display or 3D controllers; their names hold a chip
#: (GA100, GH100, TU104GL) or a brand word and none of these.
_NOT_A_GPU = lazy_compile(
    r"(?i:(?:^|[_\W])(?:802_?11\w*|WIRELESS|WLAN|WI-?FI|BLUETOOTH|ETHERNET|CARDBUS|MODEM|NETWORK_ADAPTER"
    r"|SATA|AHCI|RAID|USB|SERIAL|SMBUS|SOUND|AUDIO)(?:$|[_\W]))")
_GPU_WORD = lazy_compile(
    r"(?i:(?:^|[_\W])(?:G[KMPVAHB]\d{3}\w*|TU\d{3}\w*|AD\d{3}\w*|GB\d{3}\w*|NVIDIA|TESLA|QUADRO|GEFORCE"
    r"|TITAN|RTX|GRID)(?:$|[_\W]))")


def vm_workload(ctx: NodeContext) -> str | None:
    """The node's VM workload (vm-passthrough, vm-vgpu) as the operator honours it, or None."""
    node = ctx.node
    if node is None:
        return None
    known = bool(ctx.facts.cluster_policies)
    return operator.vm_workload(node.metadata.labels, ctx.cluster_policy_spec, known)


@check("vfio-manager", may_find=pods_here("vfio-manager"))
def gpus_bound_to_vfio(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The validator writes vfio-pci-ready once every GPU of a vm-passthrough node is bound
    to vfio-pci (the sandbox device plugin's init container waits for it)."""
    if ctx.stack_pods(component) and VFIO_READY in ctx.obs.files:
        ev = Evidence(ctx.obs.path_of("files", VFIO_READY), "present")
        yield ok(component, "GPUs bound to vfio-pci (vfio-pci-ready)", ev)


@check("vfio-manager", needs=PROBE_NEEDS)
def gpus_bound_on_the_bus(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """On a vm-passthrough node every GPU on the PCI bus must be bound to vfio-pci (the
    probe's /sys/bus/pci): one still held by nvidia, or by no driver, cannot go to a VM."""
    gpus = _pci_gpus(ctx)
    if not gpus or vm_workload(ctx) != "vm-passthrough":
        return
    others = [g for g in gpus if g.driver != VFIO_DRIVER]
    ev = _pci_evidence(ctx, others or gpus)
    if others:
        known = ctx.kb.get("vfio_pci_not_bound")
        yield problem(component, "vfio_pci_not_bound", ev, specificity=known.specificity)
    else:
        yield ok(component, f"{len(gpus)} GPUs bound to vfio-pci (/sys/bus/pci)", ev)


@check("driver", needs=PROBE_NEEDS)
def gpus_not_bound_to_vfio(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """On a node whose GPUs serve containers, a GPU bound to vfio-pci beside those the
    NVIDIA driver holds is out of its reach (nvidia-smi does not list it; the device plugin
    cannot advertise it). Every GPU on vfio-pci is a node for VMs (checks/probe.py)."""
    gpus = _pci_gpus(ctx)
    vfio = [g for g in gpus if g.driver == VFIO_DRIVER]
    if not vfio or len(vfio) == len(gpus) or vm_workload(ctx) is not None:
        return
    known = ctx.kb.get("gpu_bound_to_vfio")
    yield problem(component, "gpu_bound_to_vfio", _pci_evidence(ctx, vfio), specificity=known.specificity)


def _pci_gpus(ctx: NodeContext) -> tuple[PciGpu, ...]:
    """The probe's NVIDIA GPUs on the PCI bus, empty when the probe did not read the bus."""
    probe = ctx.probe
    return probe.host.pci_gpus if probe is not None and probe.host.pci_read else ()


def _pci_evidence(ctx: NodeContext, gpus: list[PciGpu] | tuple[PciGpu, ...]) -> Evidence:
    shown = ", ".join(f"{g.address} ({g.device}) driver {g.driver or 'none'}" for g in gpus)
    return Evidence(ctx.obs.path_of("cmd", PROBE_FILE), f"/sys/bus/pci: {shown}")


@check("sandbox-device-plugin", needs=("node",), may_find=pods_here("sandbox-device-plugin"))
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
    pod = running[0].metadata
    if not found or all(quantity(v) == 0 for v in found.values()):
        yield problem(component, "sandbox_plugin_no_resources", Evidence(where, shown), specificity=30,
                      namespace=pod.namespace, pod=pod.name)
        return
    misnamed = sorted(k for k, v in found.items() if quantity(v) and _not_a_gpu(k))
    if misnamed:
        # the resource as the Node lists it is the decisive line: its name is the fault
        said = Decisive(0, f'{misnamed[0]}: "{found[misnamed[0]]}"', 1)
        ev = Evidence(where, f"{', '.join(misnamed)}: named after a device that is no GPU (the plugin's "
                             "pci.ids lookup of the device id matched another vendor's device)")
        yield line_finding(ctx.kb, component, Status.FAILED, said, where, verb="is advertised as",
                           specificity=60, evidence=(ev,), line_class="error_config_invalid",
                           namespace=pod.namespace, pod=pod.name)
    else:
        yield ok(component, f"advertises {shown}", Evidence(where, shown))


def _vm_resource(name: str) -> bool:
    return (name.startswith("nvidia.com/") and name not in CONTAINER_RESOURCES
            and not name.startswith(MIG_RESOURCES))


def _not_a_gpu(resource: str) -> bool:
    """The device name of a sandbox plugin's resource holds another kind of device's words
    and no GPU's (``_NOT_A_GPU``, ``_GPU_WORD``)."""
    name = resource.removeprefix("nvidia.com/")
    return _NOT_A_GPU.search(name) is not None and _GPU_WORD.search(name) is None
