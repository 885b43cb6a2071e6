"""Field case → bundle directory, as a real collector would have seen that cluster.

Steps: the case's base simulator scenario (with its ``cluster`` overrides and the
platform's node shape), the simulator faults the report implies (their cascades
fill in the rest), then every evidence item written exactly where a collector
puts it: container logs under logs/, pod states as kubelet container statuses,
events as separate Event objects, node labels/capacity/nodeInfo/conditions on
the Node object, node command output, files and metrics under nodes/<node>/.
The realism rules the result follows are in docs/bundle-format.md.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import timedelta
from fnmatch import fnmatch
from pathlib import Path
from typing import Any, get_args

import msgspec
from case import (
    CONTROLLER_KINDS,
    INIT_PROGRESS,
    Case,
    CaseError,
    ClusterObjectEv,
    DaemonSetTolerationsEv,
    EventEv,
    GpuFabricEv,
    LogEv,
    MetricsEv,
    NodeCapacityEv,
    NodeCmdEv,
    NodeConditionEv,
    NodeFileEv,
    NodeInfoEv,
    NodeLabelsEv,
    NodeTaintsEv,
    PodMissingEv,
    PodStateEv,
    WorkloadEv,
)
from components import deploy, extras, static_device_plugin
from driver_version import cuda_of, driver_problem, relabel, relog, rewrite_files
from kernel_module import banner_flavour, default_flavour, policy_flavour, reflavour
from platforms import apply_platform

from gpunode.catalog import Recogniser, load_catalog
from gpunode.checks import operator
from gpunode.collect.live import STACK_NAMESPACES
from gpunode.errors import UsageError
from gpunode.gpus import plugin_sharing
from gpunode.sim import FAULTS, host, ids, load_scenario
from gpunode.sim.build import (
    PodDraft,
    _add_daemonset,
    _add_ds_pod,
    _DsRuntime,
    add_pod,
    build_world,
    daemonset_object,
    eligible,
    redeploy_mofed,
)
from gpunode.sim.cascade import crash, driver_not_ready, pod_event, remove_validation_pods, stall
from gpunode.sim.finalize import finalize
from gpunode.sim.k8s import daemonset_pod_tolerations, event, owner_ref, tolerates, toleration
from gpunode.sim.models import GPU_MODELS, OS_INFO
from gpunode.sim.nodes import GPU_RESOURCE
from gpunode.sim.operands import CtrDef, render_container, template_spec
from gpunode.sim.podstatus import Ctr, completed, failed, running, waiting
from gpunode.sim.scenario import Component as ScenarioComponent
from gpunode.sim.scenario import Scenario, scenario_from_data
from gpunode.sim.world import NodeState, World
from gpunode.sim.writer import write

#: The image of a workload whose report names none: one whose tag names no CUDA version, since
#: the engine reads the CUDA version an image's tag names (gpunode.parse.image_cuda) and a
#: report that gives no image says nothing of it.
_WORKLOAD_IMAGE = "registry.example.com/gpu-workload:latest"
_SCHEDULER_REASONS = {"FailedScheduling", "Scheduled", "Preempted"}
_CONTROLLER_REASONS = {"NodeNotReady", "NodeReady", "RegisteredNode", "RemovingNode", "DeletingNode"}


def build_case(case: Case, out: Path) -> Path:
    """Write the bundle of ``case`` to ``out`` (a directory); returns it."""
    try:
        scenario = _scenario(case)
        world = build_world(scenario)
        for fault in scenario.faults:
            FAULTS[fault.type].apply(world, fault.node)
    except UsageError as exc:
        raise CaseError(str(exc)) from exc
    node = _node(world, case)
    apply_platform(world, node, case.platform, runtime_named=case.cluster.runtime is not None)
    _dress(world, node, case)
    driver = _driver(case)
    relabel(world, node, driver)
    if case.cluster.device_plugin == "static":
        _static_device_plugin(world)
    _shape_node(world, node, case)
    _deploy_named(world, node, case)
    _refused_daemonsets(world, node, case)
    _named_init_containers(world, node, case)
    _driver_state(world, node, case)
    _create_workloads(world, node, case)
    post: list[Any] = []
    landed: list[tuple[int, Any, str]] = []
    for i, ev in enumerate(case.evidence):
        try:
            key = _apply(world, node, case, ev, post)
        except CaseError as exc:
            raise CaseError(f"{case.id}: evidence[{i}] ({ev.__struct_config__.tag}): {exc}") from exc
        if key is not None:
            landed.append((i, ev, key))
    _never_ran(world, node, case)
    _operator_labels(world, node, case)
    if case.cluster.device_plugin == "static":
        _registered(node, case)
        _admitted(node, case)
    _gke_advertised(node, case)
    _hami_advertised(node, case)
    finalize(world)
    for fix in post:
        fix()
    if case.cluster.runtime_class is False:
        _no_runtime_class(world)
    relog(world, node, driver, _given_lines(case))
    _check_landed(world, node, case, landed)
    write(world, out)
    rewrite_files(out / "nodes" / case.node, driver)
    _unload_modules(out / "nodes" / case.node, case)
    reflavour(out / "nodes" / case.node, _kernel_module(case), _gpu_name(case))
    _compute_mode(out / "nodes" / case.node, case)
    _rename_gpu(case, node, out)
    _overlay_files(case, out)
    return out


#: nvidia-installer's lines that its run stopped on the kernel module: it was not built
#: (its own build check, DKMS, the kernel's modpost) or would not load. An install stopped
#: by an NVIDIA module that is already loaded ("appears to already be loaded") leaves that
#: one loaded, so it is not among them.
_MODULE_NOT_INSTALLED = re.compile(
    r"^\s*ERROR: (?:An error occurred while performing the step: \"(?:Building|Checking to see whether)"
    r"[^\"]*kernel module|Failed to run `[^`]*dkms build|modpost: |Unable to build the NVIDIA kernel module"
    r"|Unable to load the kernel module|The kernel module failed to load|Installation has failed)",
    re.MULTILINE)
_INSTALLER_LOG = "var/log/nvidia-installer.log"
#: DKMS's build log of the NVIDIA module (``var/lib/dkms/nvidia/<version>/build/make.log``)
#: and make's own stop in it ("make[2]: *** [<file>:<line>: <target>] Error 1"): a build that
#: failed, so DKMS installed no module for that kernel.
_DKMS_MAKE_LOG = re.compile(r"^/?var/lib/dkms/nvidia/[^/]+/build/make\.log$")
_MAKE_STOPPED = re.compile(r"^make(?:\[\d+\])?: \*\*\* .*\bError \d+\s*$", re.MULTILINE)
#: Evidence that the node's driver answers: nvidia-smi's table, the loaded module's version
#: file, the module in lsmod.
_DRIVER_ANSWERS = re.compile(r"Driver Version: *\d|^NVRM version:|^nvidia +\d", re.MULTILINE)


def _driver_loaded(case: Case) -> bool:
    """Whether the case's node has an NVIDIA kernel module loaded: ``cluster.gpu_node.
    driver_loaded`` where the case says, else not where the evidence shows the driver never
    came up and nothing shows it answering: a host driver whose installer log
    (``var/log/nvidia-installer.log``) ends its run on the kernel module or whose DKMS build
    log of the NVIDIA module (``var/lib/dkms/nvidia/<version>/build/make.log``) ends on make's
    error, or GKE's driver
    installer, the init container of GKE's device plugin, shown never finishing (an
    ``Init:`` state: the plugin waits for the driver libraries it installs)."""
    over = case.cluster.gpu_node
    if over is not None and over.driver_loaded is not None:
        return over.driver_loaded
    answers = any(isinstance(ev, NodeCmdEv | NodeFileEv) and _DRIVER_ANSWERS.search(ev.text)
                  for ev in case.evidence)
    if answers:
        return True
    for ev in case.evidence:
        if (isinstance(ev, NodeFileEv) and ev.path == _INSTALLER_LOG and case.cluster.driver_mode == "host"
                and _MODULE_NOT_INSTALLED.search(ev.text)):
            return False
        if (isinstance(ev, NodeFileEv) and _DKMS_MAKE_LOG.match(ev.path)
                and case.cluster.driver_mode == "host" and _MAKE_STOPPED.search(ev.text)):
            return False
        if (isinstance(ev, PodStateEv) and ev.component == "gke-device-plugin"
                and ev.container == "nvidia-driver-installer" and ev.state.startswith("Init:")):
            return False
    return True


def _driver_state(world: World, node: NodeState, case: Case) -> None:
    """A node whose driver is not loaded (``_driver_loaded``) shows none: no nvidia-smi
    output, no /proc/driver/nvidia/version, no nvidia modules in lsmod or the kernel log, no
    GPUs advertised or labelled, and the GPU Operator's operands waiting for the driver
    (the simulator's own driver-not-ready state). Its unloaded modules (``unloaded_modules``)
    follow: nvidia_peermem through the simulator's RDMA state, the rest after writing."""
    over = case.cluster.gpu_node
    if over is not None and "nvidia_peermem" in over.unloaded_modules:
        node.host.peermem_loaded = False
    if _driver_loaded(case):
        return
    driver_not_ready(world, node, host.boot_time(world, node))


#: Each module's kernel-log lines as the simulator writes them (both module flavours).
_MODULE_LINES = {
    "nvidia_uvm": re.compile(r"\] nvidia_uvm: "),
    "nvidia_modeset": re.compile(r"\] nvidia-modeset: "),
    "nvidia_drm": re.compile(r"\] \[drm\] (?:\[nvidia-drm\]|Initialized nvidia-drm )"),
}


def _unload_modules(root: Path, case: Case) -> None:
    """``cluster.gpu_node.unloaded_modules`` (other than nvidia_peermem, set before the
    world was written) leave the node's lsmod and kernel log: their rows go, each module
    they used counts one user fewer, and their load lines go. nvidia_drm uses
    nvidia_modeset, so a node without nvidia_modeset has no nvidia_drm either."""
    over = case.cluster.gpu_node
    gone = {str(m) for m in (over.unloaded_modules if over is not None else ()) if m != "nvidia_peermem"}
    if "nvidia_modeset" in gone:
        gone.add("nvidia_drm")
    if not gone:
        return
    lsmod = root / "cmd" / "lsmod.txt"
    if lsmod.is_file():
        lsmod.write_text(_lsmod_without(lsmod.read_text(encoding="utf-8"), gone), encoding="utf-8")
    dmesg = root / "cmd" / "dmesg.txt"
    if dmesg.is_file():
        lines = dmesg.read_text(encoding="utf-8").splitlines(keepends=True)
        kept = [ln for ln in lines if not any(_MODULE_LINES[m].search(ln) for m in gone)]
        dmesg.write_text("".join(kept), encoding="utf-8")


def _lsmod_without(text: str, gone: set[str]) -> str:
    """lsmod's table without the ``gone`` modules' rows, their users' counts and lists
    lowered (kmod's columns kept)."""
    out = []
    for line in text.splitlines():
        parts = line.split(None, 3)
        if len(parts) >= 3 and parts[0] in gone:
            continue
        users = parts[3].split(",") if len(parts) == 4 and parts[2].isdigit() else []
        left = [u for u in users if u not in gone]
        if len(left) != len(users):
            count = int(parts[2]) - (len(users) - len(left))
            out.append(f"{parts[0]:<19} {parts[1]:>8}  {count}" + (f" {','.join(left)}" if left else ""))
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def _no_runtime_class(world: World) -> None:
    """Pods and DaemonSet templates without ``runtimeClassName``, as real manifests that do
    not ask for the NVIDIA runtime are written (``cluster.runtime_class: false``)."""
    for pod in world.pods.values():
        pod["spec"].pop("runtimeClassName", None)
    for ds in world.daemonsets.values():
        ds["spec"]["template"]["spec"].pop("runtimeClassName", None)


def _static_device_plugin(world: World) -> None:
    """``cluster.device_plugin: static``: the plugin as k8s-device-plugin's own manifest runs
    it, before the node is shaped, so that reported taints and tolerations apply to it."""
    plugin = static_device_plugin()
    if any(d.name == plugin.name for d in world.ds_defs.values()):
        raise CaseError("cluster.device_plugin: static: the GPU Operator already renders the device "
                        "plugin here; list components without gpu-operator")
    _add_daemonset(world, plugin)


#: The device plugin's line once the kubelet accepted its registration (k8s-device-plugin's
#: server.go 'Registered device plugin for 'nvidia.com/gpu' with Kubelet').
_REGISTERED = re.compile(r"Registered device plugin for '([\w./-]+)' with Kubelet")


def _registered(node: NodeState, case: Case) -> None:
    """A static device plugin whose current log says the kubelet registered its resource has
    it advertised on the node, one per GPU: the scenario's capacity follows only the GPU
    Operator's plugin, so a plugin deployed from its own manifest would read as advertising
    none although its log shows the registration."""
    for ev in case.evidence:
        if isinstance(ev, LogEv) and ev.component == "device-plugin" and not ev.previous:
            for resource in _REGISTERED.findall(ev.text):
                count = str(len(node.gpus))
                node.obj["status"]["capacity"][resource] = count
                node.obj["status"]["allocatable"][resource] = count


def _admitted(node: NodeState, case: Case) -> None:
    """A GPU workload whose container ran on the node (an exit code, restarts, or Running)
    was admitted there: the kubelet admits a pod asking for nvidia.com/gpu only while the
    node advertises it (else OutOfnvidia.com/gpu / UnexpectedAdmissionError) and starts its
    containers after the plugin's Allocate (kubernetes.io's Device Plugins page: the kubelet
    advertises what a registered plugin lists; OpenShift's Device Manager page: pod admission
    passes the requested extended resources to it for allocation). A static plugin
    the report shows no log of is then advertising, one per GPU, as NVIDIA/k8s-device-plugin#106's
    node, whose README pod ran and exited 0, did. A plugin log (``_registered`` reads it), a
    capacity the evidence gives, or an event showing the node short of the resource leave
    the node as it is. The scheduler's "Insufficient nvidia.com/gpu" (FailedScheduling) does
    not show that: its fit count is what the node advertises less what the pods bound there
    request (kube-scheduler's NodeResourcesFit), so a node whose every GPU a running workload
    holds reads the same to another pod (the Karpenter thread of blog.gitcode.com's
    33c117f2: one GPU node, its pod running, the next pods Pending on it)."""
    if GPU_RESOURCE in node.obj["status"]["capacity"]:
        return
    for ev in case.evidence:
        if isinstance(ev, NodeCapacityEv) or (isinstance(ev, EventEv) and GPU_RESOURCE in ev.message
                                              and ev.reason != "FailedScheduling"):
            return
        if isinstance(ev, LogEv) and ev.component == "device-plugin":
            return
    if any(_ran_with_gpu(ev) for ev in case.evidence if isinstance(ev, WorkloadEv)):
        count = str(len(node.gpus))
        node.obj["status"]["capacity"][GPU_RESOURCE] = count
        node.obj["status"]["allocatable"][GPU_RESOURCE] = count


_PULLING = frozenset({"ErrImagePull", "ImagePullBackOff"})
#: Waiting reasons the kubelet gives only to a pod it admitted: it creates the sandbox and the
#: containers after admission, where the device manager has allocated the pod's devices
#: (kubernetes.io, Device Plugins; the kubelet's RunContainerError and CreateContainerError
#: come from starting or creating a container of an admitted pod).
_CREATING = frozenset({"RunContainerError", "CreateContainerError"})


def _ran_with_gpu(ev: WorkloadEv) -> bool:
    """The workload asks for nvidia.com/gpu (one by default) and its container has run, or
    the kubelet, having admitted the pod, was pulling its image (ErrImagePull,
    ImagePullBackOff): the kubelet pulls a pod's images only after admission, where the
    device manager allocates its devices (kubernetes.io, Device Plugins; Images)."""
    limits = ev.resources.limits if ev.resources is not None and ev.resources.limits else {GPU_RESOURCE: "1"}
    ran = (ev.exit_code is not None or bool(ev.restarts) or ev.state == "Running"
           or ev.state in _PULLING or ev.state in _CREATING)
    return GPU_RESOURCE in limits and ran


def _gke_plugin_by_default(case: Case) -> bool:
    """A GKE node pool without the GPU Operator (``components: []``) runs GKE's own device
    plugin (nvidia-gpu-device-plugin in kube-system, deployed by GKE on every GPU pool:
    cloud.google.com/kubernetes-engine/docs/how-to/gpus), so a case that does not mention
    it at all gets it Running, as the real node has it; a case whose evidence names the
    plugin (missing, failing or running), or shows the node short of GPUs (an event naming
    nvidia.com/gpu in an event or a pending pod's message), keeps what it shows."""
    if case.platform != "gke" or case.cluster is None or case.cluster.components != ():
        return False
    return not any((isinstance(ev, LogEv | PodStateEv | PodMissingEv | EventEv)
                    and ev.component == "gke-device-plugin")
                   or (isinstance(ev, EventEv | WorkloadEv) and GPU_RESOURCE in (ev.message or ""))
                   for ev in case.evidence)


def _gke_advertised(node: NodeState, case: Case) -> None:
    """GKE's own device plugin, shown Running, advertises nvidia.com/gpu one per GPU, as a
    GKE node does once GKE installed its driver (Kubernetes' e2e framework/gpu
    NumberOfNVIDIAGPUs counts the GPUs a COS node advertises through it; the pods of
    keras-team/kinetic#269 get nvidia.com/gpu: 1 from it). The scenario's capacity follows
    only the GPU Operator's plugin, so a GKE node without the Operator would otherwise read
    as advertising none while its plugin runs. Only on GKE (elsewhere, as minikube's addon,
    the plugin finds no driver GKE installed); a capacity the node already has or the
    evidence gives, an event showing the node short of the resource, and a plugin shown in
    any other state leave the node as it is."""
    if case.platform != "gke" or GPU_RESOURCE in node.obj["status"]["capacity"]:
        return
    if any(isinstance(ev, NodeCapacityEv) or (isinstance(ev, EventEv) and GPU_RESOURCE in ev.message)
           for ev in case.evidence):
        return
    states = [ev.state for ev in case.evidence
              if isinstance(ev, PodStateEv) and ev.component == "gke-device-plugin"]
    if _gke_plugin_by_default(case) or (states and all(state == "Running" for state in states)):
        count = str(len(node.gpus))
        node.obj["status"]["capacity"][GPU_RESOURCE] = count
        node.obj["status"]["allocatable"][GPU_RESOURCE] = count


#: HAMi's chart default (charts/hami/values.yaml devicePlugin.deviceSplitCount): each GPU is
#: advertised as this many nvidia.com/gpu, the vGPUs pods share it by.
_HAMI_SPLIT = 10


def _hami_advertised(node: NodeState, case: Case) -> None:
    """HAMi's device plugin, shown Running in a scenario without NVIDIA's (``components:
    []``), advertises nvidia.com/gpu, ``_HAMI_SPLIT`` per GPU, as a HAMi node does once its
    plugin registered (HAMi's README: the node's allocatable nvidia.com/gpu is the GPU count
    times deviceSplitCount). The scenario's capacity follows only NVIDIA's plugin, so such a
    node would otherwise read as advertising none while HAMi's plugin runs. A capacity the node
    already has or the evidence gives, an event showing the node short of the resource, a
    plugin log or a plugin shown in any other state leave the node as it is."""
    without_nvidia = case.cluster is not None and case.cluster.components == ()
    if not without_nvidia or GPU_RESOURCE in node.obj["status"]["capacity"]:
        return
    if any(isinstance(ev, NodeCapacityEv) or (isinstance(ev, EventEv) and GPU_RESOURCE in ev.message)
           or (isinstance(ev, LogEv) and ev.component == "hami-device-plugin")
           for ev in case.evidence):
        return
    states = [ev.state for ev in case.evidence
              if isinstance(ev, PodStateEv) and ev.component == "hami-device-plugin"]
    if states and all(state == "Running" for state in states):
        count = str(len(node.gpus) * _HAMI_SPLIT)
        node.obj["status"]["capacity"][GPU_RESOURCE] = count
        node.obj["status"]["allocatable"][GPU_RESOURCE] = count


def _shape_node(world: World, node: NodeState, case: Case) -> None:
    """The reported nodeInfo and labels first, since the operators' DaemonSets follow them:
    NFD labels the running kernel, and the Network Operator names and selects its MOFED
    DaemonSets by the NFD OS and kernel labels (which the platform set)."""
    for ev in case.evidence:
        if isinstance(ev, NodeInfoEv):
            node.obj["status"]["nodeInfo"].update(ev.fields)
    for gpu_node in world.gpu_nodes():
        _nfd_kernel_labels(gpu_node)
    for ev in case.evidence:
        if isinstance(ev, NodeLabelsEv):
            _labels(node, ev.labels)
        elif isinstance(ev, NodeTaintsEv):
            _taints(node, ev)
    redeploy_mofed(world)
    _who_tolerates(world, case)
    for ev in case.evidence:
        if isinstance(ev, DaemonSetTolerationsEv):
            _tolerations(world, ev)


def _who_tolerates(world: World, case: Case) -> None:
    for i, ev in enumerate(case.evidence):
        if isinstance(ev, NodeTaintsEv):
            try:
                _taint_tolerations(world, case, ev)
            except CaseError as exc:
                raise CaseError(f"{case.id}: evidence[{i}] (node-taints): {exc}") from exc


def _tolerations(world: World, ev: DaemonSetTolerationsEv) -> None:
    """The component's DaemonSets tolerate what the report shows, in their template and in
    their pods (with the tolerations the DaemonSet controller adds); the controller then
    keeps their pods off nodes with a taint they do not tolerate (finalize)."""
    given = [{k: v for k, v in msgspec.to_builtins(t).items() if v is not None} for t in ev.tolerations]
    keys = _component_daemonsets(world, ev.component)
    if not keys:
        raise CaseError(f"daemonset-tolerations: no DaemonSet of {ev.component} in this scenario")
    for key in keys:
        _set_tolerations(world, key, given)


def _set_tolerations(world: World, key: str, given: list[dict[str, Any]]) -> None:
    """One DaemonSet's tolerations, in its template and its pods (with the ones the
    DaemonSet controller adds), and a pod on each node it now tolerates."""
    world.ds_defs[key] = replace(world.ds_defs[key], tolerations=tuple(given))
    world.daemonsets[key]["spec"]["template"]["spec"]["tolerations"] = given
    name = world.ds_defs[key].name
    for pod in world.pods.values():
        owners = pod["metadata"].get("ownerReferences", [])
        if any(o["kind"] == "DaemonSet" and o["name"] == name for o in owners):
            pod["spec"]["tolerations"] = daemonset_pod_tolerations(list(given))
    _place_tolerated(world, key)


def _by_image_only(component: str) -> bool:
    """A component the catalog names no DaemonSet of (logging-agent, otel-agent, csi-node):
    the scenario runs one chart of many for it, with tolerations of its own choosing."""
    return not load_catalog().get(component).daemonsets


def _taint_tolerations(world: World, case: Case, ev: NodeTaintsEv) -> None:
    """Which DaemonSets tolerate the reported taints (``untolerated_by`` / ``tolerated_by``,
    README "How the builder places evidence"). By default a case whose agent's pod is
    missing from the tainted node (``pod-missing`` of a component the catalog knows by image
    only: the Fluent Bit, Alloy, Vector and OpenTelemetry collector charts ship no
    tolerations) shows that agent kept off by the taints, and every other DaemonSet running
    there, as the report shows the rest of the node's pods (the GPU stack serving its
    workloads included). Cases without such an agent keep the scenario's tolerations."""
    taints = [{"effect": t.effect, "key": t.key, **({"value": t.value} if t.value is not None else {})}
              for t in ev.taints]
    shown = {e.component for e in case.evidence if isinstance(e, DaemonSetTolerationsEv)}
    missing = {e.component for e in case.evidence if isinstance(e, PodMissingEv)}
    _check_tolerators(ev, shown)
    untolerated = ev.untolerated_by if ev.untolerated_by is not None else tuple(
        sorted(c for c in missing if c not in shown and _by_image_only(c)))
    off: set[str] = set()
    for component in untolerated:
        keys = _named_daemonsets(world, component, "untolerated_by", explicit=ev.untolerated_by is not None)
        for key in keys:
            kept = [t for t in world.ds_defs[key].tolerations if not any(tolerates([t], x) for x in taints)]
            if len(kept) != len(world.ds_defs[key].tolerations):
                _set_tolerations(world, key, kept)
            off.add(key)
    if ev.tolerated_by is not None:
        keys = [k for c in ev.tolerated_by
                for k in _named_daemonsets(world, c, "tolerated_by", explicit=True)]
    elif untolerated:
        aside = off | {k for c in missing | shown for k in _component_daemonsets(world, c)}
        keys = [k for k in world.ds_defs if k not in aside]
    else:
        keys = []
    widened = False
    for key in keys:
        have = list(world.ds_defs[key].tolerations)
        add = [toleration(x["key"], x["effect"]) for x in taints if not tolerates(have, x)]
        if add:
            _set_tolerations(world, key, [*have, *add])
            widened = widened or _operand(world, key)
    if widened:
        _policy_tolerates(world, taints)


def _check_tolerators(ev: NodeTaintsEv, shown: set[str]) -> None:
    both = set(ev.tolerated_by or ()) & set(ev.untolerated_by or ())
    if both:
        raise CaseError(f"{sorted(both)[0]} is both tolerated_by and untolerated_by")
    for component in (*(ev.tolerated_by or ()), *(ev.untolerated_by or ())):
        if component in shown:
            raise CaseError(f"{component}: its daemonset-tolerations already say what it tolerates")


def _named_daemonsets(world: World, component: str, field: str, *, explicit: bool) -> list[str]:
    keys = _component_daemonsets(world, component)
    if explicit and not keys:
        raise CaseError(f"{field}: no DaemonSet of {component} in this scenario")
    return keys


def _operand(world: World, key: str) -> bool:
    """Whether the DaemonSet is one the GPU Operator renders from its ClusterPolicy."""
    owner = world.ds_defs[key].owner or {}
    return owner.get("kind") == "ClusterPolicy"


def _policy_tolerates(world: World, taints: list[dict[str, Any]]) -> None:
    """The ClusterPolicy's ``daemonsets.tolerations``, which the operator renders into every
    operand DaemonSet, lists the taints its operands now tolerate."""
    for policy in world.resources.get("clusterpolicies", []):
        listed = policy["spec"].setdefault("daemonsets", {}).setdefault("tolerations", [])
        listed += [toleration(x["key"], x["effect"]) for x in taints if not tolerates(listed, x)]


def _place_tolerated(world: World, key: str) -> None:
    """A pod of the DaemonSet on each node it now tolerates and had none on (the controller
    creates it; finalize removes those on nodes it no longer tolerates)."""
    d = world.ds_defs[key]
    spec = template_spec(d, world.scenario.cluster.cdi)
    shared = _DsRuntime(d, spec, daemonset_pod_tolerations(spec.get("tolerations", [])),
                        d.labels | {"controller-revision-hash": ids.pod_template_hash(key),
                                    "pod-template-generation": "1"},
                        owner_ref("DaemonSet", d.name, d.namespace), world.later(seconds=d.start))
    placed = {world.places[k].node for k, pod in world.pods.items() if k in world.places
              and any(o["kind"] == "DaemonSet" and o["name"] == d.name
                      for o in pod["metadata"].get("ownerReferences", []))}
    for node in world.nodes.values():
        if node.name not in placed and eligible(d, node):
            _add_ds_pod(world, shared, node)


def _taints(node: NodeState, ev: NodeTaintsEv) -> None:
    """The reported taints merged into spec.taints (same key and effect: replaced), before
    any pod is placed, since the DaemonSet controller and the scheduler follow them."""
    given = [{"effect": t.effect, "key": t.key, **({"value": t.value} if t.value is not None else {})}
             for t in ev.taints]
    kept = [t for t in node.obj["spec"].get("taints", [])
            if not any(t["key"] == g["key"] and t["effect"] == g["effect"] for g in given)]
    node.obj["spec"]["taints"] = [*kept, *given]


_NFD = "feature.node.kubernetes.io/kernel-version."


def _deploy_named(world: World, node: NodeState, case: Case) -> None:
    """Catalog components no scenario deploys (DRA driver, HAMi, Volcano, GKE's and the
    sandbox device plugin) that the evidence names: deployed as they run for real
    (components.py), so that their pods hold the evidence."""
    table = extras()
    named = {ev.component for ev in case.evidence
             if isinstance(ev, LogEv | PodStateEv | PodMissingEv | EventEv) and ev.component in table}
    if _gke_plugin_by_default(case):
        named.add("gke-device-plugin")
    for component in sorted(c for c in named if c is not None):
        if not _stack_pods(world, node, component, anywhere=True):
            deploy(world, node, component)
    for namespace, component in sorted(set(_placed_pods(world, case).values())):
        if component in table and not _stack_pods(world, node, component, anywhere=True):
            deploy(world, node, component, namespace)
    # a label the report says the node lacks stays absent, even the one the component's
    # DaemonSet selects (HAMi's gpu=on not set on the node)
    for ev in case.evidence:
        if isinstance(ev, NodeLabelsEv):
            _labels(node, {k: v for k, v in ev.labels.items() if v is None})


def _placed(world: World, namespace: str, name: str) -> str | None:
    """The catalog component whose pod a pod the report names is: a name its DaemonSet's
    name begins (the DaemonSet controller names its pods ``<daemonset>-<suffix>``), in a
    namespace where the GPU stack runs (the collector's stack namespaces, those the
    component's real installs use, those of its DaemonSets here). A collector sees such a pod
    as the component's, not as a GPU workload (README "How the builder places evidence")."""
    table = extras()
    for comp in load_catalog().node_components():
        if comp.kind != "pod" or not any(_named_after(name, glob) for glob in comp.daemonsets):
            continue
        known = table[comp.id].namespaces if comp.id in table else ()
        if namespace in STACK_NAMESPACES or namespace in known or any(
                world.ds_defs[key].namespace == namespace for key in _component_daemonsets(world, comp.id)):
            return comp.id
    return None


def _named_after(pod: str, glob: str) -> bool:
    """Whether ``pod`` is named as a pod of a DaemonSet that ``glob`` (a catalog DaemonSet
    name, ``*`` at its end at most) names."""
    stem = glob.removesuffix("*")
    return pod.startswith(stem) if glob.endswith("*") else pod.startswith(f"{stem}-")


def _placed_pods(world: World, case: Case) -> dict[str, tuple[str, str]]:
    """``<namespace>/<pod>`` -> (namespace, component) of each pod a ``log`` with ``object``
    or a ``workload`` names that ``_placed`` makes a component's pod."""
    named: set[tuple[str, str]] = set()
    for ev in case.evidence:
        if isinstance(ev, LogEv) and ev.object is not None and ev.object.kind == "Pod" and ev.object.name:
            named.add((ev.object.namespace, ev.object.name))
        elif isinstance(ev, WorkloadEv):
            named.add((ev.namespace, ev.name))
    out = {}
    for namespace, name in sorted(named):
        component = _placed(world, namespace, name)
        if component is not None:
            out[f"{namespace}/{name}"] = (namespace, component)
    return out


def _nfd_kernel_labels(node: NodeState) -> None:
    """NFD's kernel-version labels of the kernel the node runs (when NFD labelled it)."""
    kernel = node.obj["status"]["nodeInfo"].get("kernelVersion", "")
    parts = kernel.split(".")
    if f"{_NFD}full" not in node.labels or len(parts) < 2:
        return
    node.labels.update({f"{_NFD}full": kernel, f"{_NFD}major": parts[0], f"{_NFD}minor": parts[1]})


def _check_landed(world: World, node: NodeState, case: Case, landed: list[tuple[int, Any, str]]) -> None:
    """Evidence must end up in the bundle: a pod it was written to that the controllers then
    removed (its DaemonSet no longer selects the shaped node) is a builder error, loudly."""
    for i, ev, key in landed:
        if key not in world.pods:
            tag = ev.__struct_config__.tag
            raise CaseError(
                f"{case.id}: evidence[{i}] ({tag}): pod {key} of {ev.component} was removed after it "
                f"was written: its DaemonSet does not select {node.name} as shaped"
            )


def _operator_labels(world: World, node: NodeState, case: Case) -> None:
    """The GPU Operator's node labelling (nodelabeling_controller.go): without an NVIDIA PCI
    label from NFD it sets gpu.present=false and removes every gpu.deploy.* state label,
    so no operand DaemonSet selects the node (finalize then removes their pods)."""
    if not world.scenario.has("gpu-operator") or operator.operator_sees_gpu(node.labels):
        return
    given = {k for ev in case.evidence if isinstance(ev, NodeLabelsEv) for k, v in ev.labels.items() if v}
    if operator.GPU_PRESENT in node.labels:
        node.labels[operator.GPU_PRESENT] = "false"
    for key in [k for k in node.labels if k.startswith("nvidia.com/gpu.deploy.") and k not in given]:
        del node.labels[key]
    remove_validation_pods(world, node)


_OS_IMAGES = {
    "amzn2": "Amazon Linux 2",
    "amzn2023": "Amazon Linux 2023.6.20241212",
    "centos7": "CentOS Linux 7 (Core)",
    "rhel8": "Red Hat Enterprise Linux 8.10 (Ootpa)",
    "ubuntu20.04": "Ubuntu 20.04.6 LTS",
    "ubuntu18.04": "Ubuntu 18.04.6 LTS",
    "cos": "Container-Optimized OS from Google",
    "rhcos": "Red Hat Enterprise Linux CoreOS 415.92.202402201450-0 (Plow)",
}


def _unsimulated(case: Case) -> tuple[str | None, str | None]:
    """The case's GPU model and OS when the simulator has no rendering of them."""
    over = case.cluster.gpu_node
    if over is None:
        return None, None
    gpu = over.gpu if over.gpu and over.gpu not in GPU_MODELS else None
    os_name = over.os if over.os and over.os not in OS_INFO else None
    return gpu, os_name


def _dress(world: World, node: NodeState, case: Case) -> None:
    """Label and nodeInfo show the reported GPU model and OS."""
    gpu, os_name = _unsimulated(case)
    if gpu:
        node.labels["nvidia.com/gpu.product"] = gpu
    if os_name:
        node.obj["status"]["nodeInfo"]["osImage"] = _OS_IMAGES.get(os_name, os_name)


def _driver(case: Case) -> tuple[str, str] | None:
    """The node's reported driver release and its CUDA version, when the case names one."""
    over = case.cluster.gpu_node
    if over is None:
        return None
    problem = driver_problem(over.driver_version, over.cuda_version)
    if problem is not None:
        raise CaseError(f"{case.id}: cluster.gpu_node.{problem}")
    if over.driver_version is None:
        return None
    return over.driver_version, cuda_of(over.driver_version, over.cuda_version)


def _gpu_name(case: Case) -> str | None:
    over = case.cluster.gpu_node
    return over.gpu if over is not None else None


def _kernel_module(case: Case) -> str:
    """The kernel module flavour of the case's node (tests/field/kernel_module.py): the case's
    ``kernel_module``, else the one its evidence's NVRM banners or driver policy name, else
    its driver branch's and GPU's default."""
    over = case.cluster.gpu_node
    if over is not None and over.kernel_module is not None:
        return over.kernel_module
    texts = [ev.text for ev in case.evidence if isinstance(ev, LogEv | NodeCmdEv | NodeFileEv)]
    objects = [(ev.resource, ev.object) for ev in case.evidence if isinstance(ev, ClusterObjectEv)]
    driver = over.driver_version if over is not None else None
    return banner_flavour(texts) or policy_flavour(objects) or default_flavour(driver, _gpu_name(case))


#: nvidia-smi's "Compute M." column for each ``<compute_mode>`` (NVML's names).
_COMPUTE_COLUMN = {"Default": "Default", "Exclusive_Process": "E. Process", "Exclusive_Thread": "E. Thread",
                   "Prohibited": "Prohibited"}
_TABLE_MODE = re.compile(r"(?<=%)( +)Default(?= \|$)", re.MULTILINE)


def _compute_mode(root: Path, case: Case) -> None:
    """The node's GPUs in the case's ``compute_mode``: nvidia-smi's table column (kept right
    aligned in its field) and the -q XML's ``<compute_mode>``."""
    over = case.cluster.gpu_node
    mode = over.compute_mode if over is not None else None
    if mode is None or mode == "Default":
        return
    table, xml = root / "cmd" / "nvidia-smi.txt", root / "cmd" / "nvidia-smi-q.xml"
    if table.is_file():
        column = _COMPUTE_COLUMN[mode]
        text = _TABLE_MODE.sub(lambda m: " " * (len(m[1]) + 7 - len(column)) + column,
                               table.read_text(encoding="utf-8"))
        table.write_text(text, encoding="utf-8")
    if xml.is_file():
        text = xml.read_text(encoding="utf-8").replace(
            "<compute_mode>Default</compute_mode>", f"<compute_mode>{mode}</compute_mode>")
        xml.write_text(text, encoding="utf-8")


def _given_lines(case: Case) -> set[str]:
    """Every line of the case's log evidence: what the builder's rewrites leave as reported."""
    return {line for ev in case.evidence if isinstance(ev, LogEv) for line in ev.text.split("\n")}


def _rename_gpu(case: Case, node: NodeState, out: Path) -> None:
    """nvidia-smi output names the reported GPU model instead of the simulated one."""
    gpu, _ = _unsimulated(case)
    if not gpu or node.model is None:
        return
    for path in (out / "nodes" / case.node / "cmd").glob("nvidia-smi*"):
        text = path.read_text(encoding="utf-8")
        # vGPU guests show the vGPU type as nvidia-smi prints it ("GRID A100-40C").
        shown = gpu if gpu.startswith(("NVIDIA ", "GRID ")) else f"NVIDIA {gpu}"
        text = text.replace(node.model.product, shown)
        if path.suffix == ".xml" and not _BASEBOARD_PART.search(gpu):
            text = _FABRIC_BLOCK.sub(_no_fabric, text)
        path.write_text(text, encoding="utf-8")


#: GPU products that sit on NVSwitch baseboards (SXM modules, the superchips): the simulated
#: HGX node's fabric registration stays theirs. Any other reported GPU (a PCIe card, a
#: workstation or embedded GPU, a vGPU) is in no NVSwitch fabric, and nvidia-smi -q -x prints
#: N/A in its ``<fabric>`` element, as it does on every GPU outside one.
_BASEBOARD_PART = re.compile(
    r"(?i:\bSXM\d?\b|\bHBM3e?\b|^(?:NVIDIA )?(?:A100|A800)(?:-\d+GB)?$|"
    r"\b(?:H100 80GB|H200|H800|H20|B200|B300|GB200|GB300)\b(?!.*\b(?:PCIe|NVL)\b))")
_FABRIC_BLOCK = re.compile(r"<fabric>.*?</fabric>", re.DOTALL)
_FABRIC_VALUE = re.compile(r"(<(?P<tag>state|status|cliqueId|clusterUuid)>)[^<]*(</(?P=tag)>)")


def _no_fabric(block: re.Match[str]) -> str:
    """A ``<fabric>`` element as nvidia-smi prints it for a GPU in no NVSwitch fabric."""
    return _FABRIC_VALUE.sub(lambda m: f"{m[1]}N/A{m[3]}", block[0])


# -- scenario --------------------------------------------------------------------


def _scenario(case: Case) -> Scenario:
    """The base scenario with the case's cluster overrides and faults (checked like any scenario)."""
    raw: dict[str, Any] = msgspec.to_builtins(load_scenario(case.scenario))
    cluster = raw["cluster"]
    builder_only = ("gpu_node", "runtime_class", "device_plugin")
    over = {k: v for k, v in msgspec.to_builtins(case.cluster).items()
            if k not in builder_only and v is not None}
    cluster.update(over)
    if case.cluster.gpu_node is not None:
        fields = {k: v for k, v in msgspec.to_builtins(case.cluster.gpu_node).items() if v is not None}
        # Models and OSes the simulator does not render keep its defaults; their names are
        # overlaid afterwards (_dress), since the report's names are what a collector sees.
        if fields.get("gpu") not in GPU_MODELS:
            fields.pop("gpu", None)
        if fields.get("os") not in OS_INFO:
            fields.pop("os", None)
        # The simulator renders one driver; the reported one is written over it (_driver).
        fields.pop("driver_version", None)
        fields.pop("cuda_version", None)
        # Written over the simulated node's files after the bundle (reflavour, _compute_mode).
        fields.pop("kernel_module", None)
        fields.pop("compute_mode", None)
        # The node's modules follow after the world is built (_driver_state, _unload_modules).
        fields.pop("driver_loaded", None)
        fields.pop("unloaded_modules", None)
        for entry in cluster["gpu_nodes"]:
            if entry["name"] == case.node:
                entry.update(fields)
    if case.cluster.components is None:
        cluster["components"] = [*cluster["components"], *_implied_components(case, cluster["components"])]
    raw["faults"] = [
        {"type": f.type, **({"node": f.node or case.node} if _node_scoped(f.type) else {})}
        for f in case.faults
    ]
    return scenario_from_data(raw, f"{case.id} (scenario {case.scenario})")


_DEPLOYABLE = frozenset(get_args(ScenarioComponent))


def _implied_components(case: Case, deployed: list[str]) -> list[str]:
    """Opt-in components the evidence shows running (the SR-IOV device plugin a
    NicClusterPolicy enables): a log, a pod state or an event of its pod means the
    cluster deploys it."""
    named = [
        ev.component
        for ev in case.evidence
        if isinstance(ev, LogEv | PodStateEv | EventEv) and ev.component is not None
    ]
    return sorted({c for c in named if c in _DEPLOYABLE and c not in deployed})


def _node_scoped(fault_type: str) -> bool:
    kind = FAULTS.get(fault_type)
    return kind is None or kind.scope == "node"


def _node(world: World, case: Case) -> NodeState:
    if case.node not in world.nodes:
        raise CaseError(f"{case.id}: node: {case.node!r} is not a node of scenario {case.scenario}")
    return world.node(case.node)


# -- evidence ----------------------------------------------------------------------


def _apply(world: World, node: NodeState, case: Case, ev: Any, post: list[Any]) -> str | None:
    """Put one evidence item where a collector finds it (API objects and logs here);
    returns the key of the stack pod it was written to, if any."""
    if isinstance(ev, LogEv):
        return _log(world, node, ev, case)
    if isinstance(ev, PodStateEv):
        return _pod_state(world, node, ev, post)
    if isinstance(ev, PodMissingEv):
        if _stack_pods(world, node, ev.component) or not _component_daemonsets(world, ev.component):
            world.remove_pod(_pod_key(world, node, ev.component))
        # else its DaemonSet already has no pod here (its pods were refused: _refused_daemonsets)
    elif isinstance(ev, EventEv):
        return _event(world, node, ev, post, case)
    elif isinstance(ev, WorkloadEv):
        placed = _placed(world, ev.namespace, ev.name)
        key = _pod_key(world, node, placed) if placed is not None else None
        _workload_state(world, ev, post, _admission_message(case, ev), key)
    elif isinstance(ev, ClusterObjectEv):
        _cluster_object(world, ev)
    elif not isinstance(ev, NodeInfoEv | NodeLabelsEv | NodeTaintsEv | DaemonSetTolerationsEv):  # _shape_node
        _node_object(world, node, ev)
    # node-cmd, node-file and metrics are files: written after the bundle (_overlay_files)
    return None


def _node_object(world: World, node: NodeState, ev: Any) -> None:
    """Labels, capacity, nodeInfo and conditions live on the Node object."""
    status = node.obj["status"]
    if isinstance(ev, NodeLabelsEv):
        _labels(node, ev.labels)
    elif isinstance(ev, NodeCapacityEv):
        for key, value in ev.resources.items():
            status["capacity"][key] = value
            status["allocatable"][key] = value
    elif isinstance(ev, NodeInfoEv):
        status["nodeInfo"].update(ev.fields)
    elif isinstance(ev, NodeConditionEv):
        _condition(world, node, ev)


def _stack_pods(world: World, node: NodeState, component: str, anywhere: bool = False) -> list[str]:
    """Keys of ``component``'s pods on ``node`` (any node for cluster-scoped components,
    or with ``anywhere``)."""
    catalog = load_catalog()
    scope = catalog.get(component).scope
    recogniser = Recogniser(catalog)
    out = []
    for key, pod in world.pods.items():
        place = world.places.get(key)
        if scope == "node" and not anywhere and (place is None or place.node != node.name):
            continue
        md = pod["metadata"]
        owners = [_owner_base(o["kind"], o["name"]) for o in md.get("ownerReferences", [])]
        containers = [(c["name"], c["image"]) for c in pod["spec"]["containers"]]
        if recogniser.component_of(owners, md.get("labels", {}), containers) == component:
            out.append(key)
    return sorted(out)


def _owner_base(kind: str, name: str) -> str:
    return name.rsplit("-", 1)[0] if kind == "ReplicaSet" and "-" in name else name


def _pod_key(world: World, node: NodeState, component: str, container: str | None = None) -> str:
    """The component's pod on the node; with several (validator), the one with ``container``."""
    keys = _stack_pods(world, node, component)
    if not keys:
        raise CaseError(f"no {component} pod on {node.name} in this scenario")
    if container is not None:
        having = [k for k in keys if any(c.name == container for c in world.containers(k))]
        if not having:
            # A component's Deployment (nfd-master) runs on a control-plane node, not here.
            elsewhere = _stack_pods(world, node, component, anywhere=True)
            having = [k for k in elsewhere if any(c.name == container for c in world.containers(k))]
        return having[0] if having else keys[0]
    return keys[0]


def _container(world: World, key: str, component: str, name: str | None, init: bool) -> Ctr:
    ctrs = world.containers(key)
    if name is not None:
        found = next((c for c in ctrs if c.name == name), None)
        if found is None:
            names = ", ".join(c.name for c in ctrs)
            raise CaseError(f"pod {key} has no container {name!r} (it has {names})")
        if found.init != init:
            raise CaseError(
                f"container {name!r} of {key} is {'an init' if found.init else 'a main'} container"
            )
        return found
    wanted = set(load_catalog().get(component).containers)
    pool = [c for c in ctrs if c.init == init]
    if not pool:
        raise CaseError(f"pod {key} has no {'init ' if init else ''}containers")
    return next((c for c in pool if c.name in wanted), pool[0])


def _log(world: World, node: NodeState, ev: LogEv, case: Case) -> str | None:
    component = ev.component
    if ev.object is not None and ev.object.kind == "Pod" and ev.object.name:
        component = _placed(world, ev.object.namespace, ev.object.name)  # a stack pod, by its name
        if component is not None:
            ev = msgspec.structs.replace(ev, component=component, object=None)
    if component is None:
        _workload_log(world, node, ev, case)
        return None
    key = _pod_key(world, node, component, ev.container)
    ctr = _container(world, key, component, ev.container, ev.init)
    text = ev.text if ev.text.endswith("\n") else ev.text + "\n"
    world.set_log(key, ctr.name, text, previous=ev.previous)
    if ev.previous and not _has_state(case, component, ctr.name):
        # A previous log exists only for a container that restarted: a crash loop.
        _crash(world, key, ctr, restarts=5, exit_code=1, reason="Error")
    elif not ev.init and _ends_in_exit(text) and not _has_state(case, component, ctr.name):
        # A log whose last line is a fatal or a panic was written by a process that then
        # exited (logrus/klog Fatal exit 1, a Go panic 2): its container restarts.
        world.logs.pop(f"{key}/{ctr.name}", None)
        world.set_log(key, ctr.name, text, previous=True)
        _crash(world, key, ctr, restarts=5, exit_code=2 if _PANIC.search(text) else 1, reason="Error")
    return key


def _workload_log(world: World, node: NodeState, ev: LogEv, case: Case) -> None:
    """A GPU workload's container log (NCCL, CUDA, NVML lines): the workload pod runs on
    the node (created if the scenario has none of that name) and wrote it."""
    assert ev.object is not None
    if ev.previous or ev.init:
        # the workload pod runs its one container once (restartPolicy Never): no previous
        # run, no init container
        raise CaseError("a workload's log is its running container's (no previous or init log)")
    key = _workload_pod(world, node, ev.object.namespace, ev.object.name or "gpu-pod", "Started")
    if any(isinstance(e, WorkloadEv) and e.state == "Pending" and f"{e.namespace}/{e.name}" == key
           for e in case.evidence):
        raise CaseError(f"pod {key} is Pending: it never ran, so it wrote no log")
    ctrs = world.containers(key)
    ctr = next((c for c in ctrs if c.name == ev.container), None) if ev.container else ctrs[0]
    if ctr is None:
        names = ", ".join(c.name for c in ctrs)
        raise CaseError(f"pod {key} has no container {ev.container!r} (it has {names})")
    text = ev.text if ev.text.endswith("\n") else ev.text + "\n"
    world.set_log(key, ctr.name, text)


#: Lines after which a Go program has exited: logrus/zap fatal or panic levels, klog's F
#: prefix, a runtime panic or fatal error.
_EXIT_LINE = re.compile(
    r'level="?(?:fatal|panic)|"level":"(?:fatal|panic)"|^F\d{4} \d\d:\d\d|^(?:FATA|PANI)\[|'
    r"^panic: |^fatal error: ")
_PANIC = re.compile(r"^panic: |^goroutine \d+ \[", re.MULTILINE)


def _ends_in_exit(text: str) -> bool:
    """The last line of a log ends the process, or a panic's stack trace ends the log."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return False
    return _EXIT_LINE.search(lines[-1]) is not None or _PANIC.search("\n".join(lines[-80:])) is not None


#: A kubelet ``Failed`` event whose message says the runtime could not create or start the
#: container (its OCI runtime, a hook, the shim, the spec): that container never ran.
_NOT_CREATED = re.compile(
    r"OCI runtime (?:create|start) failed|failed to create (?:containerd task|shim)"
    r"|error (?:running|executing) hook|failed to generate (?:container \S+ )?spec"
    r"|(?:createContainer|prestart|createRuntime) hook")


def _never_ran(world: World, node: NodeState, case: Case) -> None:
    """A container the runtime refuses to create wrote no log: where a case shows its pod's
    ``Failed`` create error and a crash state but no log of that container, the simulator's
    log of a healthy run (the validator's retries before its driver answered) is not what
    the node holds, and is dropped."""
    for ev in case.evidence:
        if not (isinstance(ev, EventEv) and ev.component is not None and ev.object is None
                and ev.reason == "Failed" and _NOT_CREATED.search(ev.message)):
            continue
        logged = {e.container for e in case.evidence if isinstance(e, LogEv) and e.component == ev.component}
        for state in case.evidence:
            if not (isinstance(state, PodStateEv) and state.component == ev.component):
                continue
            key = _pod_key(world, node, state.component, state.container)
            ctr = _container(world, key, state.component, state.container, state.init
                             or state.state.startswith("Init:"))
            if ctr.name not in logged:
                world.logs.pop(f"{key}/{ctr.name}", None)
                world.logs.pop(f"{key}/{ctr.name}.previous", None)


def _has_state(case: Case, component: str, container: str) -> bool:
    return any(
        isinstance(e, PodStateEv) and e.component == component and e.container in (None, container)
        for e in case.evidence
    )


def _crash(world: World, key: str, ctr: Ctr, *, restarts: int, exit_code: int, reason: str) -> None:
    """Crash loop keeping whatever logs the case supplied (current and previous)."""
    current = world.logs.get(f"{key}/{ctr.name}")
    previous = world.logs.get(f"{key}/{ctr.name}.previous")
    log = current or previous or ""
    crash(
        world,
        key,
        ctr.name,
        restarts=restarts,
        log=log,
        exit_code=exit_code,
        reason=reason,
        previous_log=previous or log,
    )


_WAITING = ("ImagePullBackOff", "ErrImagePull", "RunContainerError", "CreateContainerConfigError",
            "CreateContainerError")


def _pod_state(world: World, node: NodeState, ev: PodStateEv, post: list[Any]) -> str:
    """The kubelet's container statuses for what ``kubectl get pods`` showed."""
    key = _pod_key(world, node, ev.component, ev.container)
    init = ev.init or ev.state.startswith("Init:")
    ctr = _container(world, key, ev.component, ev.container, init)
    state = ev.state.removeprefix("Init:") if not INIT_PROGRESS.fullmatch(ev.state) else ev.state
    ev = msgspec.structs.replace(ev, state=state)
    if state in ("CrashLoopBackOff", "OOMKilled"):
        _crash_state(world, key, ctr, ev)
    elif INIT_PROGRESS.fullmatch(state):
        _init_progress(world, key, ctr, ev)
    elif state in ("PodInitializing", "ContainerCreating"):
        _not_started(world, key, ev)
    elif state == "Pending":
        _unschedule(world, key, ev.message, post)
    elif state == "Terminating":
        post.append(lambda: _terminating(world, key))
    elif state == "UnexpectedAdmissionError":
        world.logs.pop(f"{key}/{ctr.name}", None)  # its containers never ran
        post.append(lambda: _rejected_at_admission(world, key, ev.message or _ADMISSION_DEFAULT))
    else:
        _single_state(world, key, ctr, ev)
    return key


#: The kubelet's message when a pod is refused at admission and the report gives none.
_ADMISSION_DEFAULT = ("Allocate failed due to no healthy devices present; cannot allocate unhealthy devices "
                      "nvidia.com/gpu, which is unexpected")


def _crash_state(world: World, key: str, ctr: Ctr, ev: PodStateEv) -> None:
    oom = ev.state == "OOMKilled"
    code = ev.exit_code if ev.exit_code is not None else (137 if oom else 1)
    restarts = max(1, ev.restarts or 5)
    reason = "OOMKilled" if oom else ("StartError" if ev.message and code == 128 else "Error")
    _crash(world, key, ctr, restarts=restarts, exit_code=code, reason=reason)
    if ev.message:
        # describe's "Last State: Terminated ... Message:" (a runtime StartError, an OOM note)
        _set(world, key, ctr, lambda c: replace(c, last_message=ev.message.strip()))
    _blocks_rest(world, key, ctr)


def _init_progress(world: World, key: str, ctr: Ctr, ev: PodStateEv) -> None:
    """Init:N/M: init container N+1 is running (not done), what follows has not started."""
    match = INIT_PROGRESS.fullmatch(ev.state)
    assert match is not None
    inits = [c for c in world.containers(key) if c.init]
    done = int(match[1])
    if done >= len(inits):
        raise CaseError(f"pod {key} has {len(inits)} init containers, state says {ev.state}")
    stuck = inits[done] if ev.container is None else ctr
    stall(world, key, stuck.name, world.ago(minutes=47), world.log(key, stuck.name))


def _not_started(world: World, key: str, ev: PodStateEv) -> None:
    creating = ev.state == "ContainerCreating"
    reason = "ContainerCreating" if creating else "PodInitializing"
    for c in world.containers(key):
        if not c.init or creating:
            _set(world, key, c, lambda c: waiting(replace(c, restarts=0), reason, ev.message or ""))
            world.logs.pop(f"{key}/{c.name}", None)


def _single_state(world: World, key: str, ctr: Ctr, ev: PodStateEv) -> None:
    """States of one container: waiting with a reason, terminated, completed, running."""
    restarts = ev.restarts or 0
    since = world.ago(minutes=47)
    if ev.state in _WAITING:
        _set(world, key, ctr, lambda c: waiting(replace(c, restarts=restarts), ev.state, ev.message or ""))
        if restarts == 0:
            world.logs.pop(f"{key}/{ctr.name}", None)
        _blocks_rest(world, key, ctr)
    elif ev.state == "Error":
        code = ev.exit_code if ev.exit_code is not None else 1
        took = timedelta(seconds=4)
        _set(world, key, ctr, lambda c: replace(failed(c, since, took, code), restarts=restarts))
        _blocks_rest(world, key, ctr)
    elif ev.state == "Completed":
        _set(world, key, ctr, lambda c: completed(c, since, timedelta(seconds=30)))
    elif ev.state == "Running":
        _set(world, key, ctr, lambda c: replace(running(c, since), restarts=restarts))
        if ev.last_reason:  # how the last run ended, that long ago (a restart after it)
            ended = world.ago(minutes=ev.last_minutes_ago or 10)
            code = ev.exit_code if ev.exit_code is not None else (137 if ev.last_reason == "OOMKilled" else 1)
            _set(world, key, ctr, lambda c: replace(
                c, restarts=max(1, restarts), started_at=ended, last_reason=ev.last_reason,
                last_exit_code=code, last_started_at=ended - timedelta(minutes=30), last_finished_at=ended))


def _terminating(world: World, key: str) -> None:
    world.pods[key]["metadata"].update(
        deletionTimestamp=_rfc(world.ago(minutes=3)), deletionGracePeriodSeconds=30
    )


def _set(world: World, key: str, ctr: Ctr, change: Any) -> None:
    world.set_containers(key, [change(c) if c.name == ctr.name else c for c in world.containers(key)])


def _blocks_rest(world: World, key: str, ctr: Ctr) -> None:
    """A failing init container holds back every container after it (they never started)."""
    if not ctr.init:
        return
    out, seen = [], False
    for c in world.containers(key):
        if seen:
            world.logs.pop(f"{key}/{c.name}", None)
            world.logs.pop(f"{key}/{c.name}.previous", None)
        out.append(waiting(replace(c, restarts=0)) if seen else c)
        seen = seen or c.name == ctr.name
    world.set_containers(key, out)


def _unschedule(world: World, key: str, reason: str | None, post: list[Any]) -> None:
    """Never scheduled: no nodeName, no container statuses, PodScheduled=False."""
    world.set_containers(key, [waiting(replace(c, restarts=0)) for c in world.containers(key)])
    for log_key in [k for k in world.logs if k.startswith(key + "/")]:
        del world.logs[log_key]

    def fix() -> None:
        pod = world.pods[key]
        node = pod["spec"].pop("nodeName", None)
        if node and "affinity" not in pod["spec"] and _owner_kind(pod) != "":
            # Not a DaemonSet pod: pinned to its node by hostname, as validation pods were.
            pod["spec"].setdefault("nodeSelector", {})["kubernetes.io/hostname"] = node
        message = reason or "0/5 nodes are available: preemption: 0/5 nodes are available."
        pod["status"] = {
            "conditions": [
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": _rfc(world.ago(minutes=47)),
                    "message": message,
                    "reason": "Unschedulable",
                    "status": "False",
                    "type": "PodScheduled",
                }
            ],
            "phase": "Pending",
            "qosClass": pod["status"].get("qosClass", "BestEffort"),
        }

    post.append(fix)


def _owner_kind(pod: dict[str, Any]) -> str:
    """The controller kind of a pod ("" for a bare pod, such as a user's test pod)."""
    refs = pod["metadata"].get("ownerReferences", [])
    return str(refs[0]["kind"]) if refs else ""


def _rfc(moment: Any) -> str:
    return ids.rfc3339(moment)


#: Container waiting reasons only the kubelet of the pod's node sets: the pod was placed.
_KUBELET_WAITING = frozenset({"CreateContainerConfigError", "CreateContainerError", "RunContainerError",
                              "ContainerCreating"})


def _ran_later(case: Case, obj: Any) -> bool:
    """A pod the scheduler once could not place whose container the report shows running,
    exited, started or waiting at the kubelet (a Running workload, a Started event, a container
    the kubelet could not create or run): it was placed later, as when
    Karpenter or a cluster autoscaler adds the GPU node after the first FailedScheduling. The
    scheduler's event is then history, its last time before the pod ran (a collector lists
    a pod's events whatever its phase)."""
    for ev in case.evidence:
        if isinstance(ev, WorkloadEv) and (ev.name, ev.namespace) == (obj.name, obj.namespace) \
                and (ev.state == "Running" or ev.state in _KUBELET_WAITING or ev.exit_code is not None
                     or bool(ev.restarts)):
            return True
        if isinstance(ev, EventEv) and ev.reason == "Started" and ev.object is not None \
                and (ev.object.name, ev.object.namespace) == (obj.name, obj.namespace):
            return True
    return False


def _check_source(ev: EventEv) -> None:
    """An event's ``source`` is a stack component recording it on the Node; elsewhere the
    recorder follows from the object (the kubelet, the scheduler, a controller)."""
    if ev.source is not None and (ev.object is None or ev.object.kind != "Node"):
        raise CaseError("an event's source is given only for an event on the Node")


def _event(world: World, node: NodeState, ev: EventEv, post: list[Any], case: Case) -> str | None:
    count = ev.count or 1
    message = ev.message.rstrip("\n")
    _check_source(ev)
    if ev.object is not None and ev.object.kind == "Node":
        target = world.node(ev.object.name) if ev.object.name else node
        component = ev.source or ("node-controller" if ev.reason in _CONTROLLER_REASONS else "kubelet")
        world.add_event(
            event(
                "Node",
                target.obj,
                ev.reason,
                message,
                first=world.ago(minutes=49),
                last=world.ago(seconds=31),
                count=count,
                kind=ev.type,
                component=component,
                host=target.name,
            )
        )
        return None
    if ev.object is not None and ev.object.kind == "DaemonSet":
        _daemonset_event(world, node, ev)
        return None
    if ev.object is not None and ev.object.kind in CONTROLLER_KINDS:
        _controller_event(world, ev)
        return None
    if ev.object is not None:
        key = _workload_pod(world, node, ev.object.namespace, ev.object.name or "gpu-pod", ev.reason)
        if ev.reason == "UnexpectedAdmissionError":
            _rejected_at_admission(world, key, message)
        if ev.reason == "FailedScheduling" and not _ran_later(case, ev.object):
            _unschedule(world, key, ev.message, post)
    elif ev.component is not None:
        key = _pod_key(world, node, ev.component)
        if not _state_given(case, ev.component):
            _state_of_event(world, key, ev, message)
    else:
        raise CaseError("a pod event names its component or object")
    if ev.reason in _SCHEDULER_REASONS:
        pod = world.pods[key]
        past = ev.reason == "FailedScheduling" and _ran_later(case, ev.object)
        world.add_event(
            event(
                "Pod",
                pod,
                ev.reason,
                message,
                first=world.ago(minutes=49),
                last=world.ago(minutes=41) if past else world.ago(seconds=31),
                count=count,
                kind=ev.type,
                component=pod["spec"].get("schedulerName", "default-scheduler"),
            )
        )
        return key
    pod_event(world, key, ev.reason, message, count=count, kind=ev.type)
    return key


#: The kubelet's event for a startup or readiness probe that fails: it says so only while the
#: probe fails, and until one passes the container is not ready (a failing startup probe also
#: holds back the readiness and liveness probes; liveness failures restart it instead).
_NOT_READY_PROBE = re.compile(r"(?:Startup|Readiness) probe failed\b")


def _probe_failing(world: World, key: str) -> None:
    """A running container whose startup or readiness probe fails, as the kubelet reports it
    where the case gives no state: running and not ready."""
    ctr = next(c for c in world.containers(key) if not c.init)
    _set(world, key, ctr, lambda c: replace(c, ready=False))


def _daemonset_event(world: World, node: NodeState, ev: EventEv) -> None:
    """An event of a DaemonSet (``FailedCreate`` when a quota, an admission webhook or pod
    security refuses its pods), recorded by the DaemonSet controller in the DaemonSet's
    namespace: the DaemonSet named, else the one that runs the component's pods."""
    assert ev.object is not None
    ds = _named_daemonset(world, ev.object.name) if ev.object.name else _component_daemonset(world, node, ev)
    world.add_event(event("DaemonSet", ds, ev.reason, ev.message.rstrip("\n"), first=world.ago(minutes=49),
                          last=world.ago(seconds=31), count=ev.count or 1, kind=ev.type,
                          component="daemonset-controller"))


#: The API group of each workload controller kind (involvedObject.apiVersion).
_CONTROLLER_API = {"Job": "batch/v1"}


def _controller_event(world: World, ev: EventEv) -> None:
    """An event of a workload's controller (``FailedCreate`` when a ResourceQuota or an
    admission webhook refuses the pods a ReplicaSet, Job or StatefulSet creates, a
    Deployment's ``ScalingReplicaSet``), recorded by that controller in its namespace; the
    controller object itself need not be in the bundle (only Deployments are collected)."""
    assert ev.object is not None and ev.object.name is not None
    kind, name, namespace = ev.object.kind, ev.object.name, ev.object.namespace
    uid, version = ids.uid_and_version(f"{kind}:{namespace}/{name}")
    owner = {"metadata": {"name": name, "namespace": namespace, "uid": uid, "resourceVersion": version}}
    obj = event(kind, owner, ev.reason, ev.message.rstrip("\n"), first=world.ago(minutes=49),
                last=world.ago(seconds=31), count=ev.count or 1, kind=ev.type,
                component=CONTROLLER_KINDS[kind])
    obj["involvedObject"]["apiVersion"] = _CONTROLLER_API.get(kind, "apps/v1")
    world.add_event(obj)


def _named_daemonset(world: World, name: str) -> dict[str, Any]:
    named = [ds for ds in world.daemonsets.values() if ds["metadata"]["name"] == name]
    if not named:
        raise CaseError(f"no DaemonSet {name!r} in this scenario")
    return named[0]


def _component_daemonset(world: World, node: NodeState, ev: EventEv) -> dict[str, Any]:
    assert ev.component is not None
    found = _component_daemonsets(world, ev.component)
    if not found:
        raise CaseError(f"no DaemonSet of {ev.component} in this scenario")
    return world.daemonsets[found[0]]


def _component_daemonsets(world: World, component: str) -> list[str]:
    """Keys of the component's DaemonSets: those the catalog names it by, else (agents the
    catalog knows by image only: logging-agent, otel-agent) those whose pod template the
    catalog recognises as the component, as it recognises their pods."""
    patterns = load_catalog().get(component).daemonsets
    if patterns:
        return [k for k, d in world.ds_defs.items() if any(fnmatch(d.name, p) for p in patterns)]
    recogniser = Recogniser(load_catalog())
    out = []
    for key, ds in world.daemonsets.items():
        template = ds["spec"]["template"]
        containers = [(c["name"], c["image"]) for c in template["spec"]["containers"]]
        labels = template["metadata"].get("labels", {})
        if recogniser.component_of([ds["metadata"]["name"]], labels, containers) == component:
            out.append(key)
    return out


#: The kubelet's "Failed" events that are about pulling an image (the pod-state says so).
_PULL_FAILURE = ("Failed to pull image", "Error: ErrImagePull", "Error: ImagePullBackOff", "Back-off pulling")


def _state_given(case: Case, component: str) -> bool:
    return any(isinstance(ev, PodStateEv) and ev.component == component for ev in case.evidence)


def _failed_to_start(world: World, key: str, message: str) -> None:
    """A kubelet ``Failed`` event with no state reported: the state the kubelet shows for
    it. A spec the runtime could not generate leaves the container waiting in
    CreateContainerError; a start refused by the runtime or its hook ends the attempt as
    ``StartError`` (exit 128, the runtime's message) and the container crash-loops."""
    if message.startswith(_PULL_FAILURE):
        return
    ctr = next(c for c in world.containers(key) if not c.init)
    if "failed to generate container" in message or message.startswith("Error: CreateContainerError"):
        _set(world, key, ctr, lambda c: waiting(c, "CreateContainerError", message))
        world.logs.pop(f"{key}/{ctr.name}", None)
        _blocks_rest(world, key, ctr)
        return
    _crash(world, key, ctr, restarts=5, exit_code=128, reason="StartError")
    _set(world, key, ctr, lambda c: replace(c, last_message=message))
    _blocks_rest(world, key, ctr)


def _state_of_event(world: World, key: str, ev: EventEv, message: str) -> None:
    """The container state the kubelet shows while it raises a component pod's event, where
    the case gives none: a start that failed, an image reference it cannot parse, a probe
    that fails."""
    if ev.reason == "Failed" and ev.type == "Warning":
        _failed_to_start(world, key, message)
    if ev.reason == "InspectFailed" and ev.type == "Warning":
        _invalid_image(world, key, message)
    if ev.reason == "Unhealthy" and _NOT_READY_PROBE.match(message):
        _probe_failing(world, key)


def _invalid_image(world: World, key: str, message: str) -> None:
    """A kubelet ``InspectFailed`` event with no state reported: the image reference does not
    parse, so the kubelet leaves the container waiting in ``InvalidImageName`` with the
    event's message (kubelet images.EnsureImageExists) and starts nothing after it."""
    ctr = next(c for c in world.containers(key) if not c.init)
    _set(world, key, ctr, lambda c: waiting(replace(c, restarts=0), "InvalidImageName", message))
    world.logs.pop(f"{key}/{ctr.name}", None)
    _blocks_rest(world, key, ctr)


def _rejected_at_admission(world: World, key: str, message: str) -> None:
    """A pod the kubelet rejected at admission: Failed, with the reason and message the
    kubelet sets (its containers never got a status)."""
    status = world.pods[key]["status"]
    status.update(phase="Failed", reason="UnexpectedAdmissionError", message=message)
    status.pop("containerStatuses", None)
    status.pop("conditions", None)


def _workload_pod(world: World, node: NodeState, namespace: str, name: str, reason: str, *,
                  shape: WorkloadEv | None = None) -> str:
    """A user's GPU pod on ``node`` (one nvidia.com/gpu, or as ``shape`` gives its spec);
    it has not started, like the report's."""
    key = f"{namespace}/{name}"
    if key in world.pods:
        return key
    image = (shape.image if shape else None) or _WORKLOAD_IMAGE
    ctr_name = shape.container if shape else "cuda"
    resources = _workload_resources(shape)
    spec: dict[str, Any] = {
        "containers": [
            {
                "image": image,
                "imagePullPolicy": "IfNotPresent",
                "name": ctr_name,
                "command": ["nvidia-smi"],
                "resources": resources,
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
            }
        ],
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": "Never",
        "schedulerName": "default-scheduler",
        "serviceAccountName": "default",
        "tolerations": [{"effect": "NoSchedule", "key": GPU_RESOURCE, "operator": "Exists"}],
    }
    if shape is not None:
        _shape_spec(spec, shape)
    at = world.ago(minutes=50)
    if reason == "Started":  # it runs (and logs)
        ctr = running(Ctr(ctr_name, image), world.ago(minutes=48))
    else:
        waiting_reason = "RunContainerError" if reason == "Failed" else "ContainerCreating"
        ctr = waiting(Ctr(ctr_name, image), waiting_reason)
    add_pod(world, node, PodDraft(name, namespace, {"app": name}, None, spec), [ctr], at,
            qos=_qos(resources))
    return key


def _workload_resources(shape: WorkloadEv | None) -> dict[str, Any]:
    """The container's resources: one nvidia.com/gpu, or the reported ones; requests not
    given default to the limits, as the API server fills them in."""
    if shape is None or shape.resources is None:
        limits = {GPU_RESOURCE: "1"}
        return {"limits": limits, "requests": dict(limits)}
    out: dict[str, Any] = {}
    if shape.resources.limits:
        out["limits"] = dict(shape.resources.limits)
    requests = {**shape.resources.limits, **shape.resources.requests}
    if requests:
        out["requests"] = requests
    return out


def _qos(resources: dict[str, Any]) -> str:
    """The pod's QoS class from its one container's cpu and memory (extended resources such
    as GPUs do not count): Guaranteed when both are limited and requested equally."""
    limits, requests = resources.get("limits", {}), resources.get("requests", {})
    compute = ("cpu", "memory")
    if not any(k in limits or k in requests for k in compute):
        return "BestEffort"
    if all(k in limits and requests.get(k) == limits[k] for k in compute):
        return "Guaranteed"
    return "Burstable"


def _shape_spec(spec: dict[str, Any], shape: WorkloadEv) -> None:
    """The reported scheduler, RuntimeClass and ResourceClaims; a pod that restarts is
    restarted by its kubelet (restartPolicy Always)."""
    if shape.scheduler_name:
        spec["schedulerName"] = shape.scheduler_name
    if shape.runtime_class_name:
        spec["runtimeClassName"] = shape.runtime_class_name
    if shape.resource_claims:
        spec["resourceClaims"] = [{k: v for k, v in msgspec.to_builtins(c).items() if v is not None}
                                  for c in shape.resource_claims]
        spec["containers"][0]["resources"]["claims"] = [{"name": c.name} for c in shape.resource_claims]
    if shape.env:
        spec["containers"][0]["env"] = [{"name": k, "value": v} for k, v in shape.env.items()]
    if shape.state in ("CrashLoopBackOff", "OOMKilled") or shape.restarts:
        spec["restartPolicy"] = "Always"


def _create_workloads(world: World, node: NodeState, case: Case) -> None:
    """Every ``workload`` of the case, created with its spec before any evidence addresses
    it (an event or log of the same pod finds it); its state is set in evidence order."""
    for ev in case.evidence:
        if isinstance(ev, WorkloadEv) and _placed(world, ev.namespace, ev.name) is None:
            _workload_pod(world, node, ev.namespace, ev.name, "Started", shape=ev)


def _admission_message(case: Case, ev: WorkloadEv) -> str:
    """The kubelet's refusal of the workload at admission: the workload's own message, else
    that of the case's ``UnexpectedAdmissionError`` event of the same pod (the kubelet
    writes the same words into the pod's status and its event), else the usual one."""
    if ev.message:
        return ev.message
    said = [e.message.rstrip("\n") for e in case.evidence
            if isinstance(e, EventEv) and e.reason == "UnexpectedAdmissionError" and e.object is not None
            and e.object.kind == "Pod" and (e.object.name or "gpu-pod", e.object.namespace) == (ev.name,
                                                                                               ev.namespace)]
    return said[-1] if said else _ADMISSION_DEFAULT


def _workload_state(world: World, ev: WorkloadEv, post: list[Any], refusal: str,
                    key: str | None = None) -> None:
    """The workload's state as the kubelet (or, Pending, the scheduler) reports it; ``key``:
    the component's pod it is placed as (``_placed``), else the workload's own."""
    ctrs = world.containers(key or f"{ev.namespace}/{ev.name}")
    ctr = ctrs[0] if key is None else next((c for c in ctrs if c.name == ev.container),
                                           next(c for c in ctrs if not c.init))
    key = key or f"{ev.namespace}/{ev.name}"
    restarts = ev.restarts or 0
    since = world.ago(minutes=47)
    if ev.state == "Pending":
        _pending_workload(world, key, ev, post)
    elif ev.state in ("CrashLoopBackOff", "OOMKilled"):
        oom = ev.state == "OOMKilled"
        code = ev.exit_code if ev.exit_code is not None else (137 if oom else 1)
        reason = ev.reason or ("OOMKilled" if oom else "Error")
        _crash(world, key, ctr, restarts=max(1, restarts or 5), exit_code=code, reason=reason)
        if ev.message:
            _set(world, key, ctr, lambda c: replace(c, last_message=ev.message.strip()))
    elif ev.state in ("Error", "Completed"):
        code = ev.exit_code if ev.exit_code is not None else (1 if ev.state == "Error" else 0)
        reason = ev.reason or ("Error" if ev.state == "Error" else "Completed")
        took = timedelta(seconds=30)
        _set(world, key, ctr,
             lambda c: replace(failed(c, since, took, code), restarts=restarts, reason=reason))
        if ev.message:
            post.append(lambda: _terminated_message(world, key, ev.message or ""))
    elif ev.state == "UnexpectedAdmissionError":
        world.logs.pop(f"{key}/{ctr.name}", None)
        post.append(lambda: _rejected_at_admission(world, key, refusal))
    elif ev.state == "Running":
        _set(world, key, ctr, lambda c: replace(running(c, since), restarts=restarts))
        if restarts and ev.reason:
            code = ev.exit_code if ev.exit_code is not None else (137 if ev.reason == "OOMKilled" else 1)
            _set(world, key, ctr, lambda c: replace(c, last_reason=ev.reason or "Error", last_exit_code=code,
                                                    last_started_at=since - timedelta(minutes=30),
                                                    last_finished_at=since, last_message=ev.message or ""))
    else:  # ContainerCreating and the waiting reasons
        _set(world, key, ctr, lambda c: waiting(replace(c, restarts=restarts), ev.state, ev.message or ""))
        if restarts == 0:
            world.logs.pop(f"{key}/{ctr.name}", None)


def _pending_workload(world: World, key: str, ev: WorkloadEv, post: list[Any]) -> None:
    """Not scheduled: no nodeName, no container statuses. With the scheduler's message, its
    PodScheduled=False condition; without one (no scheduler of that name runs, or it has not
    seen the pod), no condition at all, as the API server creates the pod."""
    if ev.message or (ev.scheduler_name or "default-scheduler") == "default-scheduler":
        _unschedule(world, key, ev.message, post)
        return
    _unschedule(world, key, None, post)

    def unseen() -> None:
        world.pods[key]["status"].pop("conditions", None)

    post.append(unseen)


def _terminated_message(world: World, key: str, message: str) -> None:
    """The terminated state's message (the container's termination log or the runtime's
    start error), which the simulator's status does not carry."""
    for status in world.pods[key]["status"].get("containerStatuses", []):
        terminated = status.get("state", {}).get("terminated")
        if terminated is not None:
            terminated["message"] = message.strip()


def _labels(node: NodeState, labels: dict[str, str | None]) -> None:
    for key, value in labels.items():
        if value is None:
            node.labels.pop(key, None)
        else:
            node.labels[key] = value


def _condition(world: World, node: NodeState, ev: NodeConditionEv) -> None:
    at = _rfc(world.ago(minutes=6))
    conditions = node.obj["status"]["conditions"]
    entry = next((c for c in conditions if c["type"] == ev.type), None)
    if entry is None:
        entry = {"lastHeartbeatTime": _rfc(world.ago(seconds=20)), "type": ev.type}
        conditions.append(entry)
    entry |= {"lastTransitionTime": at, "message": ev.message, "reason": ev.reason, "status": ev.status}
    if ev.type == "Ready" and ev.status != "True":
        key = "node.kubernetes.io/not-ready" if ev.status == "False" else "node.kubernetes.io/unreachable"
        node.obj["spec"]["taints"] = [
            *[
                t
                for t in node.obj["spec"].get("taints", [])
                if not t["key"].startswith("node.kubernetes.io/")
            ],
            {"effect": "NoSchedule", "key": key, "timeAdded": at},
            {"effect": "NoExecute", "key": key, "timeAdded": at},
        ]


def _cluster_object(world: World, ev: ClusterObjectEv) -> None:
    obj = ev.object
    items = world.resources.setdefault(ev.resource, [])
    name = obj.get("metadata", {}).get("name")
    if not name:
        raise CaseError("a cluster object needs metadata.name")
    if ev.resource == "events":
        obj = _rehome_event(world, obj)
    if ev.resource == "configmaps":
        obj = _place_plugin_config(world, obj)
    items[:] = [o for o in items if o["metadata"]["name"] != name]
    items.append(obj)


def _place_plugin_config(world: World, obj: dict[str, Any]) -> dict[str, Any]:
    """A device-plugin config ConfigMap is placed where this bundle's plugin reads it: in
    the plugin's namespace, named by the ClusterPolicy's spec.devicePlugin.config (the
    reporter's plugin may have run in another namespace, from its own chart)."""
    data = obj.get("data") or {}
    keys = [k for k, v in data.items() if isinstance(v, str) and plugin_sharing(v) is not None]
    plugin = next((ds for ds in world.daemonsets.values()
                   if ds["metadata"]["name"] == "nvidia-device-plugin-daemonset"), None)
    if not keys or plugin is None:
        return obj
    namespace = plugin["metadata"]["namespace"]
    name = obj["metadata"]["name"]
    for policy in world.resources.get("clusterpolicies", []):
        config = {"name": name, **({"default": keys[0]} if len(keys) == 1 else {})}
        policy["spec"].setdefault("devicePlugin", {})["config"] = config
    return {**obj, "metadata": {**obj["metadata"], "namespace": namespace}}


def _rehome_event(world: World, obj: dict[str, Any]) -> dict[str, Any]:
    """An event about a DaemonSet lives in that DaemonSet's namespace: the reporter's
    operands may have run in another namespace (gpu-operator-resources on old operator
    versions) than this bundle's, so the event follows the DaemonSet of that name."""
    involved = obj.get("involvedObject", {})
    if involved.get("kind") != "DaemonSet":
        return obj
    named = [ds for ds in world.daemonsets.values() if ds["metadata"]["name"] == involved.get("name")]
    if len(named) != 1:
        return obj
    namespace = named[0]["metadata"]["namespace"]
    return {
        **obj,
        "metadata": {**obj.get("metadata", {}), "namespace": namespace},
        "involvedObject": {**involved, "namespace": namespace},
    }


# -- DaemonSets and containers the evidence names -----------------------------------

#: An event that says a DaemonSet's pods could not be created (the DaemonSet controller's
#: FailedCreate: a Pod Security or SCC refusal, an admission webhook, a quota).
_REFUSED_REASONS = {"FailedCreate"}


def _refused_daemonsets(world: World, node: NodeState, case: Case) -> None:
    """A FailedCreate event of a DaemonSet the bundle lacks, the component's DaemonSet as the
    report names it: the component's DaemonSet is deployed under that name and namespace (its
    template the scenario's) in place of the scenario's, with no pod, since the controller
    could create none. The component is the event's, else the one component the case's
    ``pod-missing`` names."""
    missing = {ev.component for ev in case.evidence if isinstance(ev, PodMissingEv)}
    name: str | None
    reason: str | None
    for ev in case.evidence:
        if isinstance(ev, EventEv) and ev.object is not None and ev.object.kind == "DaemonSet":
            name, namespace, reason = ev.object.name, ev.object.namespace, ev.reason
            component = ev.component or (next(iter(missing)) if len(missing) == 1 else None)
        elif isinstance(ev, ClusterObjectEv) and ev.resource == "events":
            involved = ev.object.get("involvedObject") or {}
            if involved.get("kind") != "DaemonSet":
                continue
            name, reason = involved.get("name"), ev.object.get("reason")
            namespace = involved.get("namespace") or ev.object.get("metadata", {}).get("namespace", "default")
            component = next(iter(missing)) if len(missing) == 1 else None
        else:
            continue
        if (reason not in _REFUSED_REASONS or not name or component is None
                or any(ds["metadata"]["name"] == name for ds in world.daemonsets.values())):
            continue
        keys = _component_daemonsets(world, component)
        if not keys:
            continue
        old = world.ds_defs[keys[0]]
        for key in keys:
            _remove_daemonset(world, key)
        d = replace(old, name=name, namespace=namespace)
        world.daemonsets[f"{namespace}/{name}"] = daemonset_object(
            d, world.scenario.cluster.cdi, world.later(seconds=old.start))
        world.ds_defs[f"{namespace}/{name}"] = d


def _remove_daemonset(world: World, key: str) -> None:
    name = world.ds_defs[key].name
    for pod_key, pod in list(world.pods.items()):
        owners = pod["metadata"].get("ownerReferences", [])
        if any(o["kind"] == "DaemonSet" and o["name"] == name for o in owners):
            world.remove_pod(pod_key)
    world.daemonsets.pop(key)
    d = world.ds_defs.pop(key)
    for ds_pod in [k for k in world.ds_pods if k[0] == d.key]:
        del world.ds_pods[ds_pod]


def _named_init_containers(world: World, node: NodeState, case: Case) -> None:
    """An init container the evidence names (a ``log`` or ``pod-state`` with ``init: true``
    or an ``Init:`` state) that the component's pod lacks is one of its DaemonSet's: the
    report shows the pod has it (GKE's device plugin's driver installer, an agent's setup
    step). It is added after the pod's own init containers, in the DaemonSet's template and
    every pod of it (done, as a healthy pod's are), with the pod's first container's image
    (the report names none); the evidence then gives its log and state."""
    for ev in case.evidence:
        if not isinstance(ev, LogEv | PodStateEv) or ev.component is None or ev.container is None:
            continue
        if not (ev.init or (isinstance(ev, PodStateEv) and ev.state.startswith("Init:"))):
            continue
        keys = _stack_pods(world, node, ev.component)
        if not keys or any(c.name == ev.container for k in keys for c in world.containers(k)):
            continue
        pod = world.pods[keys[0]]
        owner = next((o["name"] for o in pod["metadata"].get("ownerReferences", [])
                      if o["kind"] == "DaemonSet"), None)
        ds_key = f"{pod['metadata']['namespace']}/{owner}"
        if owner is None or ds_key not in world.ds_defs:
            continue
        d = world.ds_defs[ds_key]
        added = CtrDef(ev.container, d.containers[0].image)
        world.ds_defs[ds_key] = replace(d, init=(*d.init, added))
        world.daemonsets[ds_key]["spec"]["template"]["spec"].setdefault("initContainers", []).append(
            render_container(added))
        for key, other in world.pods.items():
            if any(o["kind"] == "DaemonSet" and o["name"] == owner
                   for o in other["metadata"].get("ownerReferences", [])):
                _add_init(world, key, added)


def _add_init(world: World, key: str, added: CtrDef) -> None:
    """``added`` ran to completion just before the pod's main containers started."""
    world.pods[key]["spec"].setdefault("initContainers", []).append(render_container(added))
    ctrs = world.containers(key)
    first_main = next((c for c in ctrs if not c.init), None)
    start = (first_main.started_at if first_main is not None and first_main.started_at
             else world.ago(minutes=50))
    took = timedelta(seconds=added.takes)
    done = Ctr(added.name, added.image, init=True)
    done = completed(done, start - took - timedelta(seconds=1), took)
    at = max((i for i, c in enumerate(ctrs) if c.init), default=-1) + 1
    world.set_containers(key, [*ctrs[:at], done, *ctrs[at:]])


# -- node files --------------------------------------------------------------------

_SMI_TABLE = re.compile(r"Driver Version:\s*\d")


def _overlay_files(case: Case, out: Path) -> None:
    """Node command output, files and metrics, where the node probe writes them."""
    root = out / "nodes" / case.node
    given = {ev.name for ev in case.evidence if isinstance(ev, NodeCmdEv)}
    for ev in case.evidence:
        if isinstance(ev, NodeCmdEv):
            _put(root / "cmd" / ev.name, ev.text)
            if (
                ev.name == "nvidia-smi.txt"
                and "nvidia-smi-q.xml" not in given
                and not _SMI_TABLE.search(ev.text)
            ):
                # nvidia-smi failed: it printed its error and no XML report exists.
                (root / "cmd" / "nvidia-smi-q.xml").unlink(missing_ok=True)
        elif isinstance(ev, GpuFabricEv):
            _fabric(root / "cmd" / "nvidia-smi-q.xml", ev)
        elif isinstance(ev, NodeFileEv):
            _put(root / "files" / ev.path.lstrip("/"), ev.text)
        elif isinstance(ev, MetricsEv):
            _put(root / "metrics" / ev.name, ev.text)


#: ``nvidia-smi -q`` Fabric field names -> their ``<fabric>`` element in ``nvidia-smi -q -x``.
_FABRIC_FIELDS = {
    "State": "state", "Status": "status", "CliqueId": "cliqueId", "ClusterUUID": "clusterUuid",
    "Summary": "summary", "Bandwidth": "bandwidth",
    "Route Recovery in progress": "route_recovery_in_progress", "Route Unhealthy": "route_unhealthy",
    "Access Timeout Recovery": "access_timeout_recovery",
    "Incorrect Configuration": "incorrect_configuration", "Partition Assigned": "partition_assigned",
}
_FABRIC_LINE = re.compile(r"^\s*(?P<name>[A-Za-z][A-Za-z ]*?)\s*:\s*(?P<value>.*?)\s*$")
_GPU_BLOCK = re.compile(r"<gpu id=.*?</gpu>", re.DOTALL)


def _fabric(path: Path, ev: GpuFabricEv) -> None:
    """The pasted Fabric section, written where nvidia-smi -q -x has it: each named GPU's
    ``<fabric>`` children (the XML the collector keeps; nvidia-smi prints both from one state)."""
    if not path.exists():
        raise CaseError("gpu-fabric: the node has no nvidia-smi-q.xml to hold it")
    values = {}
    for line in ev.text.splitlines():
        found = _FABRIC_LINE.match(line)
        if found and found["name"] in _FABRIC_FIELDS:
            values[_FABRIC_FIELDS[found["name"]]] = found["value"]
    if not values:
        raise CaseError("gpu-fabric: no field of nvidia-smi -q's Fabric section in the text")
    xml = path.read_text(encoding="utf-8")
    blocks = list(_GPU_BLOCK.finditer(xml))
    wanted = set(ev.gpus) or set(range(len(blocks)))
    if not wanted <= set(range(len(blocks))):
        raise CaseError(f"gpu-fabric: gpus {sorted(wanted)} but the node has {len(blocks)} GPUs")
    out, at = [], 0
    for index, block in enumerate(blocks):
        text = block.group(0)
        if index in wanted:
            for tag, value in values.items():
                text = re.sub(rf"(<fabric>.*?<{tag}>)[^<]*(</{tag}>)", lambda m, v=value: m[1] + v + m[2],
                              text, count=1, flags=re.DOTALL)
        out += [xml[at:block.start()], text]
        at = block.end()
    path.write_text("".join(out) + xml[at:], encoding="utf-8")


def _put(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
