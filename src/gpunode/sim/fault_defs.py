"""The fault catalogue (registered into `faults.FAULTS` by the `@fault` decorator).

Each function receives the healthy World and the node name (None for cluster-wide
faults) and edits facts, pods, logs and events into what the real stack shows.
"""

from __future__ import annotations

from dataclasses import replace

from gpunode.errors import UsageError
from gpunode.sim import cluster_objects, host, ids, links, logs
from gpunode.sim.cascade import (
    append_log,
    crash,
    driver_not_ready,
    drop_gpus,
    edit_ctr,
    pod,
    pod_event,
    reboot,
    remove_validation_pods,
    stall,
    toolkit_not_ready,
    wait_lines,
)
from gpunode.sim.faults import fault
from gpunode.sim.k8s import event
from gpunode.sim.logtext import join, klog, logrus, slog, stdlog, ticks, zap_json
from gpunode.sim.models import DRIVER_VERSION, driver_image
from gpunode.sim.nodes import RDMA_RESOURCE, set_resource
from gpunode.sim.podstatus import crashloop, running, waiting
from gpunode.sim.world import Gpu, NodeState, World


def _node(world: World, name: str | None) -> NodeState:
    assert name is not None, "node-scoped fault without a node"
    return world.node(name)


def _kernel_log(world: World, node: NodeState, minutes_ago: int, messages: list[str]) -> None:
    node.host.kernel_events += host.nvrm_kernel_lines(world, node, world.ago(minutes=minutes_ago), messages)


# -- layer 0: kubelet, runtime, GPUs ------------------------------------------------


@fault("node_not_ready", "kubelet", "node", "The kubelet stopped reporting: node Unknown, unreachable taints")
def node_not_ready(world: World, name: str | None) -> None:
    node = _node(world, name)
    last = ids.rfc3339(world.ago(minutes=7, seconds=12))
    gone = ids.rfc3339(world.ago(minutes=6, seconds=21))
    for cond in node.obj["status"]["conditions"]:
        if cond["type"] != "NetworkUnavailable":
            cond |= {
                "lastHeartbeatTime": last,
                "lastTransitionTime": gone,
                "message": "Kubelet stopped posting node status.",
                "reason": "NodeStatusUnknown",
                "status": "Unknown",
            }
    node.obj["spec"]["taints"] = [
        {"effect": "NoSchedule", "key": "node.kubernetes.io/unreachable", "timeAdded": gone},
        {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "timeAdded": gone},
    ]
    node.host.reachable = False
    world.warnings.append(f"{node.name}: node data not collected (node unreachable)")
    world.add_event(
        event(
            "Node",
            node.obj,
            "NodeNotReady",
            f"Node {node.name} status is now: NodeNotReady",
            first=world.ago(minutes=6, seconds=21),
            last=world.ago(minutes=6, seconds=21),
            kind="Normal",
            component="node-controller",
        )
    )


@fault(
    "container_runtime_down", "container-runtime", "node", "containerd is down: PLEG unhealthy, node NotReady"
)
def container_runtime_down(world: World, name: str | None) -> None:
    node = _node(world, name)
    since = ids.rfc3339(world.ago(minutes=5, seconds=2))
    for cond in node.obj["status"]["conditions"]:
        if cond["type"] == "Ready":
            cond |= {
                "lastTransitionTime": since,
                "message": "container runtime is down, PLEG is not healthy: "
                "pleg was last seen active 5m2s ago; threshold is 3m0s",
                "reason": "KubeletNotReady",
                "status": "False",
            }
    node.obj["spec"]["taints"] = [
        {"effect": "NoSchedule", "key": "node.kubernetes.io/not-ready", "timeAdded": since},
        {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "timeAdded": since},
    ]
    world.add_event(
        event(
            "Node",
            node.obj,
            "NodeNotReady",
            f"Node {node.name} status is now: NodeNotReady",
            first=world.ago(minutes=5),
            last=world.ago(minutes=5),
            kind="Normal",
            component="node-controller",
        )
    )


def _xid_header(gpu: Gpu) -> list[str]:
    return [f"NVRM: GPU at PCI:{gpu.kernel_pci}: {gpu.uuid}", f"NVRM: GPU Board Serial Number: {gpu.serial}"]


def _plugin_marks_unhealthy(world: World, node: NodeState, gpu: Gpu, xids: tuple[int, ...]) -> None:
    """The device plugin's health checker withdraws the GPU on a critical Xid."""
    key, _ = pod(world, "device-plugin", node)
    t = ticks(world.ago(minutes=37), 2)
    lines: list[str] = []
    for i, xid in enumerate(xids):
        lines += [
            klog(
                t[3 * i],
                "health.go:168",
                f"Processing event {{Device:{{Handle:0x7f2c4c{gpu.index:02x}e8f0}} "
                f"EventType:8 EventData:{xid} GpuInstanceId:4294967295 ComputeInstanceId:4294967295}}",
            ),
            klog(
                t[3 * i + 1],
                "health.go:194",
                f"XidCriticalError: Xid={xid} on Device={gpu.uuid}; marking device as unhealthy.",
            ),
            klog(t[3 * i + 2], "server.go:310", f"'nvidia.com/gpu' device marked unhealthy: {gpu.uuid}"),
        ]
    append_log(world, key, "nvidia-device-plugin", lines)
    count = node.spec.gpus if node.spec else len(node.gpus)
    drop_gpus(node, str(count), str(count - 1))


@fault("gpu_fallen_off_bus", "gpu-hardware", "node", "GPU 4 fell off the PCIe bus (Xid 79)")
def gpu_fallen_off_bus(world: World, name: str | None) -> None:
    node = _node(world, name)
    gpu = node.gpus[4 if len(node.gpus) > 4 else -1]
    gpu.lost, gpu.last_xid = True, 79
    pci = gpu.bus_id[4:].lower()
    _kernel_log(
        world,
        node,
        37,
        [
            *_xid_header(gpu),
            f"NVRM: Xid (PCI:{gpu.kernel_pci}): 79, pid='<unknown>', name=<unknown>, "
            "GPU has fallen off the bus.",
            f"NVRM: GPU {pci}: GPU has fallen off the bus.",
            f"NVRM: The NVIDIA GPU {pci}",
            "NVRM: (PCI ID: 10de:2330) installed in this system has",
            "NVRM: fallen off the bus and is not responding to commands.",
            f"NVRM: Xid (PCI:{gpu.kernel_pci}): 154, GPU recovery action changed from 0x0 (None) to 0x2 "
            "(Node Reboot Required)",
        ],
    )
    _plugin_marks_unhealthy(world, node, gpu, (79,))


@fault(
    "uncorrectable_ecc",
    "gpu-hardware",
    "node",
    "Uncorrectable ECC error on GPU 2 (Xid 48, row remap pending)",
)
def uncorrectable_ecc(world: World, name: str | None) -> None:
    node = _node(world, name)
    gpu = node.gpus[2 if len(node.gpus) > 2 else 0]
    gpu.dbe_volatile, gpu.remapped_unc, gpu.remap_pending, gpu.last_xid = 2, 1, True, 48
    _kernel_log(
        world,
        node,
        37,
        [
            *_xid_header(gpu),
            f"NVRM: Xid (PCI:{gpu.kernel_pci}): 48, pid=2459107, name=python, Ch 00000008, "
            "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer "
            "at partition 6, subpartition 0.",
            f"NVRM: Xid (PCI:{gpu.kernel_pci}): 63, pid=2459107, name=python, Row Remapper: New row "
            "(0x00000000000a3f28) was marked for remapping, reset gpu to activate.",
            f"NVRM: Xid (PCI:{gpu.kernel_pci}): 154, GPU recovery action changed from 0x0 (None) to 0x1 "
            "(GPU Reset Required)",
        ],
    )
    _plugin_marks_unhealthy(world, node, gpu, (48, 63))


# -- layer 1: driver ----------------------------------------------------------------


def _driver_crash(world: World, node: NodeState, failure: list[str], restarts: int = 13) -> None:
    """Reboot 52 minutes ago, driver container crash-looping with `failure`, everything above waiting."""
    since = world.ago(minutes=52)
    reboot(world, node, since)
    key, _ = pod(world, "driver", node)
    kernel = node.spec.kernel if node.spec else ""
    text = join(logs.driver_preamble(kernel) + failure + logs.DRIVER_EXIT)
    crash(world, key, "nvidia-driver-ctr", restarts=restarts, log=text)
    if world.log(key, "nvidia-peermem-ctr"):
        world.set_log(
            key,
            "nvidia-peermem-ctr",
            wait_lines(
                world, since, "waiting for mellanox ofed and nvidia drivers to be installed", every=10
            ),
        )
    driver_not_ready(world, node, since)


@fault(
    "kernel_headers_missing", "driver", "node", "No kernel headers for the node's kernel: driver build fails"
)
def kernel_headers_missing(world: World, name: str | None) -> None:
    _driver_crash(
        world,
        _node(world, name),
        ["Resolving Linux kernel version...", "Could not resolve Linux kernel version"],
    )


def _build_and_install(node: NodeState) -> list[str]:
    kernel = node.spec.kernel if node.spec else ""
    return logs.driver_build(kernel)[:-3]


@fault("secure_boot_enabled", "driver", "node", "Secure Boot rejects the self-built, unsigned nvidia module")
def secure_boot_enabled(world: World, name: str | None) -> None:
    node = _node(world, name)
    node.host.secure_boot = True
    _driver_crash(
        world,
        node,
        [
            *_build_and_install(node),
            "modprobe: ERROR: could not insert 'nvidia': Key was rejected by service",
            "",
            "ERROR: The kernel module failed to load. Secure boot is enabled on this system, so "
            "this is likely because it was not signed by a key that is trusted by the kernel. "
            "Please try installing the driver again, and sign the kernel module when prompted "
            "to do so.",
            "",
            *_INSTALL_FAILED,
        ],
    )
    _kernel_log(world, node, 3, ["Loading of unsigned module is rejected"])


_INSTALL_FAILED = [
    "ERROR: Installation has failed.  Please see the file '/var/log/nvidia-installer.log' for "
    "details.  You may find suggestions on fixing installation problems in the README available on "
    "the Linux driver download page at www.nvidia.com.",
    "",
]


@fault("nouveau_loaded", "driver", "node", "nouveau holds the GPUs: the nvidia module cannot bind")
def nouveau_loaded(world: World, name: str | None) -> None:
    node = _node(world, name)
    node.host.extra_modules += [
        ("nouveau", 2875392, "0"),
        ("drm_ttm_helper", 16384, "1 nouveau"),
        ("ttm", 86016, "2 drm_ttm_helper,nouveau"),
        ("mxm_wmi", 16384, "1 nouveau"),
    ]
    _driver_crash(
        world,
        node,
        [
            *_build_and_install(node),
            "modprobe: ERROR: could not insert 'nvidia': No such device",
            "",
            "ERROR: Unable to load the kernel module 'nvidia.ko'.  This happens most frequently "
            "when this kernel module was built against the wrong or improperly configured kernel "
            "sources, with a version of gcc that differs from the one used to build the target "
            "kernel, or if another driver, such as nouveau, is present and prevents the NVIDIA "
            "kernel module from obtaining ownership of the NVIDIA device(s), or no NVIDIA device "
            "installed in this system is supported by this NVIDIA Linux graphics driver release.",
            "",
            "Please see the log entries 'Kernel module load error' and 'Kernel messages' at "
            "the end of the file '/var/log/nvidia-installer.log' for more information.",
            "",
            *_INSTALL_FAILED,
        ],
    )
    boot = [f"nouveau {g.bus_id[4:].lower()}: enabling device (0000 -> 0002)" for g in node.gpus[:2]]
    node.host.kernel_events += host.nvrm_kernel_lines(world, node, world.ago(minutes=51, seconds=44), boot)
    _kernel_log(
        world,
        node,
        3,
        [
            f"NVRM: The NVIDIA probe routine was not called for {len(node.gpus)} device(s).",
            "NVRM: This can occur when a driver such as: ",
            "NVRM: nouveau, rivafb, nvidiafb or rivatv ",
            "NVRM: was loaded and obtained ownership of the NVIDIA device(s).",
            "NVRM: Try unloading the conflicting kernel module (and/or",
            "NVRM: reconfigure your kernel without the conflicting",
            "NVRM: driver(s)), then try loading the NVIDIA kernel module",
            "NVRM: again.",
            "NVRM: No NVIDIA devices probed.",
        ],
    )


@fault("driver_image_not_found", "driver", "node", "No driver image for the node's OS: ImagePullBackOff")
def driver_image_not_found(world: World, name: str | None) -> None:
    node = _node(world, name)
    key, p = pod(world, "driver", node)
    image = driver_image(node.os.driver_tag if node.os else "ubuntu24.04")
    for spec in p["spec"]["containers"]:
        spec["image"] = image
    since = world.ago(minutes=52)
    reason = f'Back-off pulling image "{image}"'
    mains = ("nvidia-driver-ctr", "nvidia-peermem-ctr")
    world.set_containers(
        key,
        [
            waiting(replace(c, image=image), "ImagePullBackOff", reason) if c.name in mains else c
            for c in world.containers(key)
        ],
    )
    for name_ in mains:
        world.logs.pop(f"{key}/{name_}", None)
    failed = (
        f'Failed to pull image "{image}": rpc error: code = NotFound desc = failed to pull and unpack image '
        f'"{image}": failed to resolve reference "{image}": {image}: not found'
    )
    pod_event(
        world,
        key,
        "Pulling",
        f'Pulling image "{image}"',
        count=14,
        kind="Normal",
        container="nvidia-driver-ctr",
        first=since,
    )
    pod_event(world, key, "Failed", failed, count=14, container="nvidia-driver-ctr", first=since)
    pod_event(
        world, key, "Failed", "Error: ErrImagePull", count=14, container="nvidia-driver-ctr", first=since
    )
    pod_event(
        world, key, "BackOff", reason, count=211, kind="Normal", container="nvidia-driver-ctr", first=since
    )
    pod_event(
        world, key, "Failed", "Error: ImagePullBackOff", count=211, container="nvidia-driver-ctr", first=since
    )
    driver_not_ready(world, node, since)


@fault(
    "driver_library_mismatch", "driver", "node", "Old kernel module still loaded: NVML/RM version mismatch"
)
def driver_library_mismatch(world: World, name: str | None) -> None:
    node = _node(world, name)
    old = "550.127.08"
    node.host.module_version = old
    node.host.nvml_error = (
        "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 570.133\n"
    )
    node.host.driver_loaded = False
    node.host.validations.pop(".driver-ctr-ready", None)
    _kernel_log(
        world,
        node,
        9,
        [
            f"NVRM: API mismatch: the client has the version {DRIVER_VERSION}, but",
            f"NVRM: this kernel module has the version {old}.  Please",
            "NVRM: make sure that this kernel module and all NVIDIA driver",
            "NVRM: components have the same version.",
        ],
    )
    key, _ = pod(world, "driver", node)
    edit_ctr(world, key, "nvidia-driver-ctr", lambda c: replace(c, ready=False))
    probe = (
        "Startup probe failed: Failed to initialize NVML: Driver/library version mismatch\n"
        "NVML library version: 570.133\nnvidia-smi failed"
    )
    pod_event(world, key, "Unhealthy", probe, count=297, container="nvidia-driver-ctr")
    _nvml_crashes(world, node, "ERROR_LIB_RM_VERSION_MISMATCH", "Driver/library version mismatch")
    for marker in ("cuda-ready", "plugin-ready"):
        node.host.validations.pop(marker, None)
    validator = world.ds_pod_key("validator", node.name)
    if validator:
        since = world.ago(minutes=9)
        ctx = logs.LogCtx(world, node, validator, since)
        error = "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 570.133"
        stall(world, validator, "driver-validation", since, logs.driver_validation_waiting(ctx, 100, error))
    remove_validation_pods(world, node)
    drop_gpus(node, "0", "0")


def _nvml_crashes(world: World, node: NodeState, code: str, text: str) -> None:
    """Device plugin, GFD and DCGM exporter exit at start-up because NVML cannot initialise."""
    t = ticks(world.ago(minutes=2), 3)
    key, _ = pod(world, "device-plugin", node)
    plugin = [
        *logs.device_plugin_start(t),
        *logs.nvml_failure(t, code),
        klog(
            t[20],
            "main.go:173",
            f"error starting plugins: error creating plugin manager: unable to "
            f"create plugin manager: nvml init failed: {code}",
            "E",
        ),
    ]
    crash(world, key, "nvidia-device-plugin", restarts=11, log=join(plugin))
    dcgm_key = world.ds_pod_key("dcgm-exporter", node.name)
    if dcgm_key:
        dcgm = [
            *logs.dcgm_start(t),
            slog(
                t[9],
                "ERROR",
                "Encountered a failure.",
                f'err="error initializing DCGM: NVML init failed: {text}"',
            ),
        ]
        crash(world, dcgm_key, "nvidia-dcgm-exporter", restarts=11, log=join(dcgm))
    gfd_key = world.ds_pod_key("gfd", node.name)
    if gfd_key:
        gfd = [
            klog(t[0], "main.go:163", "Starting OS watcher."),
            klog(t[2], "main.go:168", "Loading configuration."),
            klog(t[4], "main.go:127", f"error creating NVML labeler: failed to initialize NVML: {code}", "E"),
        ]
        crash(world, gfd_key, "gpu-feature-discovery", restarts=11, log=join(gfd))


@fault(
    "fabric_manager_not_running",
    "fabric-manager",
    "node",
    "Fabric Manager failed: NVSwitch fabric never set up",
)
def fabric_manager_not_running(world: World, name: str | None) -> None:
    node = _node(world, name)
    node.host.fabric_state, node.host.fabric_status = "In Progress", "N/A"
    node.host.validations.pop("cuda-ready", None)
    node.host.validations.pop("plugin-ready", None)
    key = world.ds_pod_key("driver", node.name)
    if key is not None:  # with a host driver, Fabric Manager is a host service: no pod log to show
        _fabric_manager_log(world, node, key)
    _cuda_validation_fails(world, node)


#: The Fabric Manager a driver image wrongly bundled (NVIDIA/gpu-driver-container#735: an
#: unpinned package resolved to the next branch's release at image build time).
_BUNDLED_FM_VERSION = "575.57.08"


@fault(
    "fabric_manager_version_mismatch",
    "driver",
    "node",
    "The driver image's Fabric Manager is another version than its driver and refuses to start",
)
def fabric_manager_version_mismatch(world: World, name: str | None) -> None:
    """The driver container installs and loads the driver, then its bundled nv-fabricmanager
    aborts on its version check; the container fails fast (gpu-driver-container#908: a
    Fabric Manager that does not come up ends the container) and unloads the driver."""
    node = _node(world, name)
    kernel = node.spec.kernel if node.spec else ""
    _driver_crash(
        world,
        node,
        [
            *logs.driver_build(kernel),
            *logs.driver_load(bool(node.spec and node.spec.nics), fabric_manager=True),
            f"fabric manager NVIDIA GPU driver interface version {_BUNDLED_FM_VERSION} don't match with "
            f"driver version {DRIVER_VERSION}. Please update with matching NVIDIA driver package.",
        ],
        restarts=9,
    )


@fault(
    "peermem_not_loaded",
    "driver",
    "node",
    "nvidia-peermem cannot load: the MOFED it was built against is not the one running",
)
def peermem_not_loaded(world: World, name: str | None) -> None:
    """The driver runs; its peermem container crash-loops on modprobe, the kernel refusing
    the ib_core symbols (NVIDIA/gpu-operator#2868), so GPUDirect RDMA is off."""
    node = _node(world, name)
    key, _ = pod(world, "driver", node)
    if not world.log(key, "nvidia-peermem-ctr"):
        raise UsageError(f"peermem_not_loaded needs RDMA on {node.name}: NICs and the network-operator")
    node.host.peermem_loaded = False
    failure = join(
        [
            "DRIVER_ARCH is x86_64",
            "modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument",
            "failed to load nvidia-peermem module",
        ]
    )
    crash(world, key, "nvidia-peermem-ctr", restarts=14, log=failure)
    messages = []
    for symbol in ("ib_register_peer_memory_client", "ib_unregister_peer_memory_client"):
        messages += [
            f"nvidia_peermem: disagrees about version of symbol {symbol}",
            f"nvidia_peermem: Unknown symbol {symbol} (err -22)",
        ]
    for minutes in (61, 56, 51):
        _kernel_log(world, node, minutes, messages)


def _fabric_manager_log(world: World, node: NodeState, key: str) -> None:
    """The driver container loads the modules, then Fabric Manager fails to start."""
    kernel = node.spec.kernel if node.spec else ""
    text = join(
        [
            *logs.driver_preamble(kernel),
            *logs.driver_build(kernel),
            *logs.driver_load(bool(node.spec and node.spec.nics), fabric_manager=True),
            "request to query NVSwitch device information from NVSwitch driver failed with "
            "error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]",
            "Fabric Manager failed to start. Please check /var/log/fabricmanager.log",
            *logs.DRIVER_DONE,
        ]
    )
    world.set_log(key, "nvidia-driver-ctr", text)


def _cuda_validation_fails(world: World, node: NodeState) -> None:
    """vectorAdd cannot allocate: the validator's cuda step crash-loops, plugin step never starts."""
    from gpunode.sim.build import add_validation_pod

    remove_validation_pods(world, node)
    failure = (
        "[Vector addition of 50000 elements]\n"
        "Failed to allocate device vector A (error code system not yet initialized)!\n"
    )
    cuda = add_validation_pod(world, node, "cuda", world.ago(minutes=3), fail=failure)
    edit_ctr(
        world,
        cuda,
        "cuda-validation",
        lambda c: crashloop(
            c, 1, last_start=world.ago(minutes=2, seconds=50), last_end=world.ago(minutes=2, seconds=49)
        ),
    )
    edit_ctr(world, cuda, "nvidia-cuda-validator", lambda c: waiting(replace(c, restarts=0)))
    world.set_log(cuda, "cuda-validation", failure, previous=True)
    key, _ = pod(world, "validator", node)
    validator_pod = cuda.split("/")[1]
    t = ticks(world.ago(minutes=3, seconds=10), 5000)
    lines = [*logs.validator_header(t[0])]
    lines += [logrus(t[i], "info", f"pod {validator_pod} is curently in Pending phase") for i in range(1, 30)]
    lines += [
        "Error: error validating cuda workload: gave up waiting for pod " + validator_pod + " to be ready"
    ]
    crash(world, key, "cuda-validation", restarts=9, log=join(lines))
    for later in ("plugin-validation", "nvidia-operator-validator"):
        edit_ctr(world, key, later, lambda c: waiting(replace(c, restarts=0)))
        world.logs.pop(f"{key}/{later}", None)


# -- layer 1: network -------------------------------------------------------------------


@fault("mofed_build_failed", "ofed", "node", "No precompiled DOCA/MOFED driver and the source build failed")
def mofed_build_failed(world: World, name: str | None) -> None:
    node = _node(world, name)
    key, _ = pod(world, "mofed", node)
    kernel = node.spec.kernel if node.spec else ""
    since = world.ago(hours=1, minutes=48)
    edit_ctr(world, key, "mofed-container", lambda c: replace(running(c, since, ready=False), restarts=0))
    t = ticks(since, 2500)

    def stamp(i: int) -> str:
        return f"[{t[i]:%Y-%m-%dT%H:%M:%S}+00:00]"

    world.set_log(
        key,
        "mofed-container",
        join(
            [
                f"{stamp(0)} Starting DOCA-OFED driver container 25.01-0.6.0.0-0, kernel {kernel}",
                f"{stamp(1)} Unsetting driver ready state",
                f"{stamp(2)} No OFED driver found for kernel {kernel}",
                f"{stamp(3)} Building OFED driver from source for kernel {kernel}",
                f"{stamp(4)} Installing build dependencies: linux-headers-{kernel}",
                f"{stamp(60)} Building mlnx-ofed-kernel DEB",
                "dpkg-buildpackage: error: debian/rules binary subprocess returned exit status 2",
                f"{stamp(61)} Failed to build mlnx-ofed-kernel DEB",
                f"{stamp(62)} Driver build failed, see /tmp/build/mlnx-ofed-kernel/build.log",
            ]
        ),
    )
    pod_event(world, key, "Unhealthy", "Readiness probe failed: ", count=212, container="mofed-container")
    node.labels["network.nvidia.com/operator.mofed.wait"] = "true"
    node.host.mofed_loaded = False
    set_resource(node.obj, RDMA_RESOURCE, None, None)
    for ncp in world.resources.get("nicclusterpolicies", []):
        ncp["status"] = cluster_objects.nic_status(
            world,
            ofed_ready=False,
            message=(
                f"Driver container is not ready on node {node.name}: waiting for OFED driver to be ready"
            ),
        )


@fault("rdma_selector_no_devices", "rdma-device-plugin", "node", "RDMA plugin's selectors match no device")
def rdma_selector_no_devices(world: World, name: str | None) -> None:
    node = _node(world, name)
    key, _ = pod(world, "rdma", node)
    start = world.places[key].scheduled
    t = ticks(start, 2)
    world.set_log(
        key,
        "rdma-shared-dp",
        join(
            [
                *logs.rdma_start(t, device_ids="101d"),
                stdlog(t[4], "Discovering host devices"),
                stdlog(t[5], "discovering host network devices"),
                stdlog(t[6], "Initializing resource servers"),
                stdlog(t[7], "Warning: no Rdma Devices were found for resource rdma_shared_device_a"),
                stdlog(t[8], "rdma_shared_device_a.sock gets registered successfully at Kubelet"),
                stdlog(t[9], 'exposing "0" devices'),
            ]
        ),
    )
    set_resource(node.obj, RDMA_RESOURCE, "0", "0")


# -- layer 2: container toolkit ------------------------------------------------------


@fault("containerd_not_patched", "container-toolkit", "node", "Toolkit points at the wrong containerd config")
def containerd_not_patched(world: World, name: str | None) -> None:
    node = _node(world, name)
    key, p = pod(world, "toolkit", node)
    for ctr in p["spec"]["containers"]:
        for env in ctr.get("env", []):
            if env["name"] == "CONTAINERD_CONFIG":
                env["value"] = "/runtime/config-dir/config.toml"
    start = world.ago(minutes=1, seconds=40)
    t = ticks(start, 60)
    text = join(
        [
            logrus(t[0], "info", "Starting nvidia-toolkit"),
            logrus(t[2], "info", "Installing toolkit"),
            logrus(t[8], "info", "Starting 'setup' for containerd"),
            logrus(t[9], "info", "Loading config from /runtime/config-dir/config.toml"),
            logrus(
                t[10],
                "error",
                "unable to setup runtime: unable to load config: failed to load config: open "
                "/runtime/config-dir/config.toml: no such file or directory",
            ),
            logrus(t[11], "info", "Shutting Down"),
            logrus(
                t[12],
                "error",
                "error running nvidia-toolkit: unable to setup runtime: unable to load config: "
                "failed to load config: open /runtime/config-dir/config.toml: no such file or directory",
            ),
        ]
    )
    crash(world, key, "nvidia-container-toolkit-ctr", restarts=14, log=text)
    node.host.runtime_patched = False
    toolkit_not_ready(world, node, world.ago(minutes=51))


@fault(
    "runtime_handler_missing", "container-toolkit", "node", "Config patched but containerd never reloaded it"
)
def runtime_handler_missing(world: World, name: str | None) -> None:
    node = _node(world, name)
    toolkit_not_ready(world, node, world.ago(minutes=44))


# -- layer 3: device plugin, CSI ------------------------------------------------------


@fault(
    "device_plugin_zero_gpus",
    "device-plugin",
    "node",
    "Device plugin runs without the NVIDIA runtime: 0 GPUs",
)
def device_plugin_zero_gpus(world: World, name: str | None) -> None:
    node = _node(world, name)
    key, p = pod(world, "device-plugin", node)
    p["spec"].pop("runtimeClassName", None)
    for env in p["spec"]["containers"][0].get("env", []):
        if env["name"] == "FAIL_ON_INIT_ERROR":
            env["value"] = "false"
    start = world.ago(hours=3, minutes=12)
    edit_ctr(world, key, "nvidia-device-plugin", lambda c: replace(running(c, start), restarts=1))
    t = ticks(start, 3)
    world.set_log(
        key,
        "nvidia-device-plugin",
        join(
            [
                *logs.device_plugin_start(t),
                *logs.nvml_failure(t, "ERROR_LIBRARY_NOT_FOUND"),
                klog(t[20], "main.go:346", "No devices found. Waiting indefinitely."),
            ]
        ),
    )
    drop_gpus(node, "0", "0")


@fault(
    "mig_strategy_mismatch",
    "device-plugin",
    "node",
    "MIG strategy single with mixed MIG profiles on the node",
)
def mig_strategy_mismatch(world: World, name: str | None) -> None:
    node = _node(world, name)
    for gpu in node.gpus:
        gpu.mig = True
    node.host.mig_profiles = ("1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb")
    node.labels["nvidia.com/mig.config"] = "all-balanced"
    node.labels["nvidia.com/mig.config.state"] = "success"
    key, _ = pod(world, "device-plugin", node)
    t = ticks(world.ago(minutes=2), 3)
    text = join(
        [
            *logs.device_plugin_start(t),
            klog(t[8], "factory.go:104", "Detected NVML platform: found NVML library"),
            klog(
                t[12],
                "main.go:173",
                "error starting plugins: error getting plugins: failed to construct "
                "NVML resource managers: error building device map: error building device map from config."
                "resources: invalid MIG configuration: "
                "Invalid configuration detected for mig-strategy=single: "
                "more than one MIG device type present on node",
                "E",
            ),
        ]
    )
    crash(world, key, "nvidia-device-plugin", restarts=16, log=text)
    mig_key = world.ds_pod_key("mig-manager", node.name)
    if mig_key:
        append_log(
            world,
            mig_key,
            "nvidia-mig-manager",
            [
                logrus(world.ago(hours=1, minutes=5), "info", "Updating to MIG config: all-balanced"),
                "Applying the selected MIG config to the node",
                "MIG configuration applied successfully",
                "Restarting all GPU clients previously shutdown by reenabling their component-specific "
                "nodeSelector labels",
                logrus(
                    world.ago(hours=1, minutes=2), "info", "Successfully updated to MIG config: all-balanced"
                ),
                logrus(
                    world.ago(hours=1, minutes=2),
                    "info",
                    "Waiting for change to 'nvidia.com/mig.config' label",
                ),
            ],
        )
    remove_validation_pods(world, node)
    drop_gpus(node, "0", "0")


@fault("csi_registration_failed", "csi-node", "node", "CSI node-driver-registrar cannot register the plugin")
def csi_registration_failed(world: World, name: str | None) -> None:
    node = _node(world, name)
    key, _ = pod(world, "csi-node", node)
    t = ticks(world.ago(minutes=3), 7)
    err = (
        "RegisterPlugin error -- plugin registration failed with err: rpc error: code = Unknown desc = "
        "failed to get plugin info using RPC GetInfo at socket "
        "/var/lib/kubelet/plugins/csi-nfsplugin/csi.sock"
    )
    text = join(
        [
            klog(t[0], "main.go:150", "Version: v2.12.0"),
            klog(t[1], "main.go:175", 'Attempting to open a gRPC connection with: "/csi/csi.sock"'),
            klog(t[2], "main.go:193", 'CSI driver name: "nfs.csi.k8s.io"'),
            klog(
                t[3],
                "node_register.go:66",
                "Registration Server started at: /registration/nfs.csi.k8s.io-reg.sock",
            ),
            klog(t[40], "main.go:90", "Received GetInfo call: &InfoRequest{}"),
            klog(
                t[41],
                "main.go:101",
                f"Received NotifyRegistrationStatus call: &RegistrationStatus{{PluginRegistered:"
                f"false,Error:{err},}}",
            ),
            klog(
                t[42],
                "main.go:103",
                f"Registration process failed with error: {err}, restarting registration container.",
                "E",
            ),
        ]
    )
    crash(world, key, "node-driver-registrar", restarts=9, log=text)
    for csinode in world.resources.get("csinodes", []):
        if csinode["metadata"]["name"] == node.name:
            csinode["spec"]["drivers"] = None


# -- layer 4: agents ----------------------------------------------------------------------


@fault(
    "dcgm_hostengine_unreachable",
    "dcgm-exporter",
    "node",
    "Exporter cannot reach the standalone DCGM hostengine",
)
def dcgm_hostengine_unreachable(world: World, name: str | None) -> None:
    node = _node(world, name)
    key, p = pod(world, "dcgm-exporter", node)
    p["spec"]["containers"][0]["env"].append(
        {"name": "DCGM_REMOTE_HOSTENGINE_INFO", "value": "nvidia-dcgm:5555"}
    )
    t = ticks(world.ago(minutes=4), 30)
    text = join(
        [
            slog(t[0], "INFO", "Starting dcgm-exporter", "Version=4.1.1-4.0.4"),
            slog(t[1], "INFO", "Attempting to connect to remote hostengine at nvidia-dcgm:5555"),
            slog(
                t[90],
                "ERROR",
                "Failed to connect to remote hostengine",
                'err="Host engine connection invalid/disconnected"',
            ),
            slog(
                t[91],
                "ERROR",
                "Encountered a failure.",
                'stacktrace="goroutine 1 [running]:\\nruntime/debug.Stack()"',
            ),
        ]
    )
    crash(world, key, "nvidia-dcgm-exporter", restarts=15, log=text)


@fault(
    "logging_agent_oomkilled",
    "logging-agent",
    "node",
    "Fluent Bit exceeds its memory limit and is OOM-killed",
)
def logging_agent_oomkilled(world: World, name: str | None) -> None:
    node = _node(world, name)
    key, p = pod(world, "fluent-bit", node)
    p["spec"]["containers"][0]["resources"] = {
        "limits": {"memory": "128Mi"},
        "requests": {"cpu": "100m", "memory": "128Mi"},
    }
    world.places[key] = replace(world.places[key], qos="Burstable")
    ctx = logs.LogCtx(world, node, key, world.ago(minutes=6))
    crash(
        world, key, "fluent-bit", restarts=12, log=logs.fluentbit_log(ctx), exit_code=137, reason="OOMKilled"
    )


# -- cluster scope ----------------------------------------------------------------------


_NFD_NODE_LABELS = ("feature.node.kubernetes.io/", "nvidia.com/", "network.nvidia.com/")


@fault("nfd_not_deployed", "nfd", "cluster", "NFD is not installed: no node is ever recognised as a GPU node")
def nfd_not_deployed(world: World, name: str | None) -> None:
    for key in [k for k in world.daemonsets if k.endswith("/gpu-operator-node-feature-discovery-worker")]:
        del world.daemonsets[key]
        del world.ds_defs[key]
    for key in [k for k in world.deployments if "node-feature-discovery" in k]:
        del world.deployments[key]
    for key in [k for k, p in world.pods.items() if "node-feature-discovery" in p["metadata"]["name"]]:
        world.remove_pod(key)
    for node in world.nodes.values():
        for label in [k for k in node.labels if k.startswith(_NFD_NODE_LABELS)]:
            del node.labels[label]
        drop_gpus(node)
        set_resource(node.obj, RDMA_RESOURCE, None, None)
        remove_validation_pods(world, node)
        node.data = False
    message = "NFD labels missing in the cluster, GPU nodes cannot be discovered."
    _policy_error(world, "NFDLabelsMissing", message)
    _operator_log_error(world, message)


def _policy_error(world: World, reason: str, message: str) -> None:
    for policy in world.resources.get("clusterpolicies", []):
        policy["status"] = cluster_objects.policy_status(world, ready=False, reason=reason, message=message)


def _operator_log_error(world: World, message: str) -> None:
    key = world.ds_pod_key("gpu-operator", "")
    if key is None:
        return
    t = ticks(world.ago(minutes=3), 15000)
    append_log(
        world,
        key,
        "gpu-operator",
        [zap_json(t[i], "error", "controllers.ClusterPolicy", message) for i in range(4)],
    )


@fault("gpu_operator_crashloop", "gpu-operator", "cluster", "GPU Operator controller panics in a crash loop")
def gpu_operator_crashloop(world: World, name: str | None) -> None:
    """A crash with no reason of its own in the pod status (a Go panic, exit 2): the state is
    the cause. An operator killed at its memory limit is ``oom_killed`` instead."""
    key = world.ds_pod_key("gpu-operator", "")
    assert key is not None, "scenario has no gpu-operator pod"
    t = ticks(world.ago(minutes=4), 300)
    text = join(
        [
            zap_json(t[0], "info", "setup", "starting manager"),
            zap_json(
                t[2],
                "info",
                "controllers.ClusterPolicy",
                "Kubernetes version detected",
                f'"version":"{world.scenario.cluster.kubernetes_version}"',
            ),
            zap_json(t[3], "info", "controllers.ClusterPolicy", "Operator metrics initialized."),
            "panic: runtime error: invalid memory address or nil pointer dereference",
            "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x1b2f4c6]",
        ]
    )
    crash(world, key, "gpu-operator", restarts=17, log=text, exit_code=2, reason="Error")


@fault(
    "clusterpolicy_invalid", "gpu-operator", "cluster", "ClusterPolicy names a ConfigMap that does not exist"
)
def clusterpolicy_invalid(world: World, name: str | None) -> None:
    for policy in world.resources.get("clusterpolicies", []):
        policy["spec"]["devicePlugin"]["config"] = {"default": "any", "name": "time-slicing-config"}
        policy["metadata"]["generation"] = 2
    message = (
        'failed to get ConfigMap "time-slicing-config" from namespace "gpu-operator" set in '
        'spec.devicePlugin.config.name: configmaps "time-slicing-config" not found'
    )
    _policy_error(world, "ReconcileFailed", message)
    _operator_log_error(world, message)


# --- the links (issue 26): every GPU node's links collected, one node's broken ------------


def _links(world: World, name: str | None, *, roce: bool = False) -> tuple[NodeState, links.LinkPlan]:
    """Every GPU node's links as collect reads them, healthy; the faulty node's plan to
    break (written by ``_write_links`` once the fault has changed it)."""
    for node in world.gpu_nodes():
        node.host.links = links.render(node, links.healthy_plan(node, roce=roce))
    node = _node(world, name)
    return node, links.healthy_plan(node, roce=roce)


def _write_links(node: NodeState, plan: links.LinkPlan) -> None:
    node.host.links = links.render(node, plan)


@fault("nvlink_inactive", "nvlink-fabric", "node", "Two NVLinks of one GPU stay inactive after a reset")
def nvlink_inactive(world: World, name: str | None) -> None:
    node, plan = _links(world, name)
    plan.inactive = {3: (3, 5)}
    _write_links(node, plan)


@fault("nvlink_down", "nvlink-fabric", "node", "Every NVLink of one GPU is down")
def nvlink_down(world: World, name: str | None) -> None:
    node, plan = _links(world, name)
    links_per_gpu, _ = links.nvlink_shape(node)
    plan.inactive = {5: tuple(range(links_per_gpu))}
    _write_links(node, plan)


@fault("nvlink_crc_errors", "nvlink-fabric", "node", "An NVLink counts thousands of CRC and replay errors")
def nvlink_crc_errors(world: World, name: str | None) -> None:
    node, plan = _links(world, name)
    plan.errors = {(2, 7): {"crc": 4182, "replay": 913}}
    _write_links(node, plan)


@fault("nvlink_recovery_errors", "nvlink-fabric", "node", "An NVLink retrained (recovery events) under load")
def nvlink_recovery_errors(world: World, name: str | None) -> None:
    node, plan = _links(world, name)
    plan.errors = {(0, 14): {"recovery": 505}}
    _write_links(node, plan)


_CLUSTER = "6a130f54-faaa-4b8f-847f-be44ab70f917"


def _fabric_domain(world: World, clique: str = "32766") -> None:
    """Every GPU registered in one NVLink domain (an NVL rack's trays)."""
    for node in world.gpu_nodes():
        node.host.fabric_gpus = {g.bus_id: (_CLUSTER, clique, "Healthy") for g in node.gpus}


@fault("fabric_clique_mismatch", "nvlink-fabric", "node", "One GPU registered in another NVLink clique")
def fabric_clique_mismatch(world: World, name: str | None) -> None:
    _links(world, name)
    _fabric_domain(world)
    node = _node(world, name)
    odd = node.gpus[6].bus_id
    node.host.fabric_gpus[odd] = (_CLUSTER, "32767", "Healthy")


@fault("fabric_health_degraded", "nvlink-fabric", "node", "The GPUs' fabric health summary is Unhealthy")
def fabric_health_degraded(world: World, name: str | None) -> None:
    _links(world, name)
    _fabric_domain(world)
    node = _node(world, name)
    node.host.fabric_gpus = {g.bus_id: (_CLUSTER, "32766", "Unhealthy") for g in node.gpus}


def _imex_domain(world: World, name: str | None) -> tuple[NodeState, links.Imex]:
    """Every GPU node in one NVLink domain with its links collected and IMEX healthy (the
    host service, its node list naming every node of the domain); the faulty node's IMEX
    to break (written by ``_write_imex``)."""
    _fabric_domain(world)
    _links(world, name)
    peers = [n.ip for n in world.gpu_nodes()]
    for node in world.gpu_nodes():
        node.host.links["imex.txt"] = links.imex_read(links.Imex(peers, pid=_imex_pid(node)))
    node = _node(world, name)
    return node, links.Imex(peers, pid=_imex_pid(node))


def _imex_pid(node: NodeState) -> int:
    return 3000 + ids.number("imex" + node.name, 4000)


def _write_imex(node: NodeState, imex: links.Imex) -> None:
    node.host.links["imex.txt"] = links.imex_read(imex)


@fault("imex_not_running", "imex", "node", "nvidia-imex is enabled with its node list but has exited")
def imex_not_running(world: World, name: str | None) -> None:
    node, imex = _imex_domain(world, name)
    imex.running = False
    _write_imex(node, imex)


@fault(
    "imex_nodes_config_missing",
    "imex",
    "node",
    "nvidia-imex runs with an empty node list (a job prolog cleared it and never wrote it back)",
)
def imex_nodes_config_missing(world: World, name: str | None) -> None:
    node, imex = _imex_domain(world, name)
    imex.peers = []
    _write_imex(node, imex)


@fault("imex_channel_missing", "imex", "node", "nvidia-imex runs but no IMEX channel device was created")
def imex_channel_missing(world: World, name: str | None) -> None:
    node, imex = _imex_domain(world, name)
    imex.channels = ()
    _write_imex(node, imex)


@fault("fabric_registration_failed", "fabric-manager", "node", "Fabric registration ended in an error")
def fabric_registration_failed(world: World, name: str | None) -> None:
    _links(world, name)
    node = _node(world, name)
    node.host.fabric_state, node.host.fabric_status = "Completed", "Insufficient Resources"


def _port_fault(world: World, name: str | None, change: dict[str, object], *, roce: bool = False) -> None:
    node, plan = _links(world, name, roce=roce)
    for key, value in change.items():
        setattr(plan.ports[-1], key, value)
    _write_links(node, plan)


@fault("ib_port_polling", "rdma-links", "node", "An InfiniBand port polls: its cable or switch port is dead")
def ib_port_polling(world: World, name: str | None) -> None:
    _port_fault(world, name, {"state": "1: DOWN", "phys": "2: Polling", "rate": "10 Gb/sec (4X SDR)"})


@fault("ib_port_no_subnet_manager", "rdma-links", "node", "An IB port waits in INIT for a subnet manager")
def ib_port_no_subnet_manager(world: World, name: str | None) -> None:
    _port_fault(world, name, {"state": "2: INIT"})


@fault("rdma_port_down", "rdma-links", "node", "An RDMA port is down")
def rdma_port_down(world: World, name: str | None) -> None:
    _port_fault(world, name, {"state": "1: DOWN", "phys": "1: Sleep"})


@fault("rdma_rate_below_peers", "rdma-links", "node", "A 400 Gb/s port trained at 200 Gb/s")
def rdma_rate_below_peers(world: World, name: str | None) -> None:
    _port_fault(world, name, {"rate": "200 Gb/sec (4X HDR)"})


@fault("roce_mtu_mismatch", "rdma-links", "node", "One RoCE interface kept the default 1500-byte MTU")
def roce_mtu_mismatch(world: World, name: str | None) -> None:
    _port_fault(world, name, {"mtu": 1500}, roce=True)


@fault("rdma_link_layer_mismatch", "rdma-links", "node", "One port runs Ethernet among InfiniBand peers")
def rdma_link_layer_mismatch(world: World, name: str | None) -> None:
    _port_fault(world, name, {"layer": "Ethernet", "netdev": "ens8f0np0", "mtu": 9000})


@fault("ib_port_errors", "rdma-links", "node", "An InfiniBand port counts symbol errors and link downs")
def ib_port_errors(world: World, name: str | None) -> None:
    counters = {"symbol_error": 65535, "link_downed": 12, "link_error_recovery": 3}
    _port_fault(world, name, {"counters": counters})


@fault("sriov_vfs_missing", "rdma-links", "node", "One NIC lost its SR-IOV virtual functions after a reboot")
def sriov_vfs_missing(world: World, name: str | None) -> None:
    node, plan = _links(world, name)
    for port in plan.ports:
        port.vfs = (8, 16)
    plan.ports[-1].vfs = (0, 16)
    _write_links(node, plan)


@fault("nic_gpu_affinity_missing", "gpudirect-rdma", "node", "A GPU's rail NIC sits across the CPUs")
def nic_gpu_affinity_missing(world: World, name: str | None) -> None:
    node, plan = _links(world, name)
    plan.far_gpus = (7,)
    _write_links(node, plan)


@fault(
    "nccl_socket_fallback",
    "gpudirect-rdma",
    "node",
    "A training pod came without its RDMA resource: NCCL found no InfiniBand device and uses sockets",
)
def nccl_socket_fallback(world: World, name: str | None) -> None:
    """The node's ports are up (every GPU node's links collected, healthy); the training pod
    placed there runs with NCCL_DEBUG=INFO but without rdma/rdma_shared_device_a, so it has no
    /dev/infiniband and its log says NET/IB : No device found, then NET/Socket (finalize)."""
    node, _ = _links(world, name)
    world.nccl_socket_nodes.add(node.name)
