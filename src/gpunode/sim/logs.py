"""Healthy container logs of the GPU stack, plus the reusable fragments faults splice in.

Message texts follow the components' real output (shared/reference/gpu-stack-facts.md
§3.3, §5.5, §6.5, §9); timestamps use each component's own format.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from gpunode.sim.logtext import fluentbit, join, klog, logrus, slog, stdlog, ticks, zap_json
from gpunode.sim.models import DOCA_DRIVER_VERSION, DRIVER_VERSION, SRIOV_DP_CONFIG
from gpunode.sim.world import NIC_BUSES, NodeState, World


@dataclass(frozen=True)
class LogCtx:
    """What a log template needs: where the container runs and since when."""

    world: World
    node: NodeState
    pod_key: str
    started: datetime

    @property
    def pod_name(self) -> str:
        return self.pod_key.split("/", 1)[1]

    @property
    def kernel(self) -> str:
        return self.node.spec.kernel if self.node.spec else "5.15.0-131-generic"

    @property
    def rdma(self) -> bool:
        return bool(self.node.spec and self.node.spec.nics and self.world.scenario.has("network-operator"))


# -- driver container ------------------------------------------------------------


def driver_preamble(kernel: str) -> list[str]:
    """What nvidia-driver prints before it touches the kernel."""
    return [
        "DRIVER_ARCH is x86_64",
        f"Creating directory NVIDIA-Linux-x86_64-{DRIVER_VERSION}",
        "Verifying archive integrity... OK",
        f"Uncompressing NVIDIA Accelerated Graphics Driver for Linux-x86_64 {DRIVER_VERSION}" + "." * 60,
        "",
        "WARNING: Unable to determine the default X library path. The path /tmp/null/lib will be used, "
        "but this path was not detected in the ldconfig(8) cache, and no directory exists at this path, "
        "so it is likely that libraries installed there will not be found by the loader.",
        "",
        "",
        "WARNING: You specified the '--no-kernel-modules' command line option, nvidia-installer will not "
        "install any kernel modules as part of this driver installation, and it will not remove existing "
        "NVIDIA kernel modules not part of an earlier NVIDIA driver installation.  Please ensure that NVIDIA "
        "kernel modules matching this driver version are installed separately.",
        "",
        "",
        "========== NVIDIA Software Installer ==========",
        "",
        f"Starting installation of NVIDIA driver version {DRIVER_VERSION} for Linux kernel version {kernel}",
        "",
        "Stopping NVIDIA persistence daemon...",
        "Unloading NVIDIA driver kernel modules...",
        "Unmounting NVIDIA driver rootfs...",
        "Checking NVIDIA driver packages...",
        "Updating the package cache...",
    ]


def driver_build(kernel: str) -> list[str]:
    """Kernel resolution and module build, up to the installer."""
    short = kernel.rsplit("-", 1)[0]
    return [
        "Resolving Linux kernel version...",
        f"Proceeding with Linux kernel version {kernel}",
        "Installing Linux kernel headers...",
        "Installing Linux kernel module files...",
        "Generating Linux kernel version string...",
        "Compiling NVIDIA driver kernel modules...",
        "Relinking NVIDIA driver kernel modules...",
        f"Building NVIDIA driver package nvidia-modules-{short}...",
        "Installing NVIDIA driver kernel modules...",
        "",
        "WARNING: The nvidia-drm module will not be installed. As a result, DRM-KMS will not function "
        "with this installation of the NVIDIA driver.",
        "",
    ]


def driver_load(rdma: bool, fabric_manager: bool = True) -> list[str]:
    """Loading modules and daemons after a successful install."""
    out = [
        "Parsing kernel module parameters...",
        "Configuring the following firmware search path in '/sys/module/firmware_class/parameters/path': "
        "/run/nvidia/driver/lib/firmware",
        "Loading ipmi and i2c_core kernel modules...",
        "Loading NVIDIA driver kernel modules...",
        "+ modprobe nvidia",
        "+ modprobe nvidia-uvm",
        "+ modprobe nvidia-modeset",
        "+ set +o xtrace -o nounset",
    ]
    if rdma:
        out += [
            "Mellanox device found at 0000:29:00.0",
            "Loading NVIDIA Peer Memory kernel module...",
            "+ modprobe nvidia-peermem",
            "+ set +o xtrace -o nounset",
        ]
    out.append("Starting NVIDIA persistence daemon...")
    if fabric_manager:
        out.append("Starting NVIDIA fabric manager daemon...")
    return out


DRIVER_DONE = ["Mounting NVIDIA driver rootfs...", "Done, now waiting for signal"]
DRIVER_EXIT = [
    "Stopping NVIDIA persistence daemon...",
    "Unloading NVIDIA driver kernel modules...",
    "Unmounting NVIDIA driver rootfs...",
]


def driver_log(ctx: LogCtx) -> str:
    """Full successful install of the driver container."""
    hgx = bool(ctx.node.model and ctx.node.model.hgx)
    return join(
        driver_preamble(ctx.kernel) + driver_build(ctx.kernel) + driver_load(ctx.rdma, hgx) + DRIVER_DONE
    )


def driver_manager_log(ctx: LogCtx) -> str:
    t = ticks(ctx.started, 120)
    return join(
        [
            logrus(t[0], "info", "Starting driver-manager"),
            logrus(
                t[1],
                "info",
                "Getting current value of the 'nvidia.com/gpu.deploy.operator-validator' node label",
            ),
            logrus(t[2], "info", "Current value of 'nvidia.com/gpu.deploy.operator-validator=true'"),
            logrus(t[3], "info", "Checking if the NVIDIA driver is installed on the host"),
            logrus(
                t[4], "info", "NVIDIA driver is not installed on the host, performing driver uninstall checks"
            ),
            logrus(
                t[5], "info", "Auto eviction of GPU pods on node " + ctx.node.name + " is enabled by the user"
            ),
            logrus(
                t[6],
                "info",
                "Shutting down all GPU clients in the current namespace by disabling their "
                "component-specific nodeSelector labels",
            ),
            logrus(t[9], "info", "Waiting for the operator-validator to shutdown"),
            logrus(t[12], "info", "Unloading NVIDIA driver kernel modules..."),
            logrus(t[13], "info", "NVIDIA driver kernel modules are not loaded, nothing to unload"),
            logrus(t[14], "info", "Unmounting NVIDIA driver rootfs..."),
            logrus(
                t[15],
                "info",
                "Rescheduling all GPU clients in the current namespace by enabling their "
                "component-specific nodeSelector labels",
            ),
        ]
    )


def peermem_log(ctx: LogCtx) -> str:
    return join(
        ["waiting for mellanox ofed and nvidia drivers to be installed"] * 22
        + ["successfully loaded nvidia-peermem module, now waiting for signal"]
    )


# -- validator and operand init containers --------------------------------------


def validator_header(at: datetime) -> list[str]:
    return [logrus(at, "info", "version: 0fbb8ae4, commit: 0fbb8ae4")]


def driver_validation_log(ctx: LogCtx) -> str:
    t = ticks(ctx.started, 4000)
    if ctx.node.host.host_driver:
        return join(
            [
                *validator_header(t[0]),
                logrus(t[0], "info", "Detected a pre-installed driver on the host"),
                "running command chroot with args [/host nvidia-smi]",
                *smi_summary(ctx),
            ]
        )
    waited = driver_validation_waiting(
        ctx, 4, "chroot: failed to run command 'nvidia-smi': No such file or directory"
    )
    return waited + join(
        ["running command chroot with args [/run/nvidia/driver nvidia-smi]", *smi_summary(ctx)]
    )


def driver_validation_waiting(ctx: LogCtx, attempts: int, error: str) -> str:
    """A `driver-validation` init container still waiting for a driver that never comes."""
    t = ticks(ctx.started, 4000)
    lines = [
        *validator_header(t[0]),
        logrus(t[0], "info", "Attempting to validate a driver container installation"),
        logrus(t[0], "info", "Driver is not pre-installed on the host. Checking driver container status."),
    ]
    for _ in range(attempts):
        lines += [
            "running command chroot with args [/run/nvidia/driver nvidia-smi]",
            error,
            "command failed, retrying after 5 seconds",
        ]
    return join(lines)


def smi_summary(ctx: LogCtx) -> list[str]:
    """The short nvidia-smi header the validator echoes."""
    return [
        f"{ctx.started + timedelta(seconds=21):%a %b %d %H:%M:%S %Y}",
        "+-----------------------------------------------------------------------------------------+",
        f"| NVIDIA-SMI {DRIVER_VERSION}             Driver Version: {DRIVER_VERSION}     "
        "CUDA Version: 12.8     |",
        "+-----------------------------------------------------------------------------------------+",
    ]


def toolkit_validation_log(ctx: LogCtx) -> str:
    t = ticks(ctx.started, 200)
    return join(validator_header(t[0]) + smi_summary(ctx)[1:])


def wait_toolkit_log(ctx: LogCtx, count: int = 6) -> str:
    """An operand's `toolkit-validation` init container (until-loop on toolkit-ready)."""
    return join(["waiting for nvidia container stack to be setup"] * count)


def cuda_validation_log(ctx: LogCtx) -> str:
    t = ticks(ctx.started, 3000)
    pod = ctx.world.ds_pods.get(("cuda-validator", ctx.node.name), "/nvidia-cuda-validator-xxxxx").split("/")[
        1
    ]
    return join(
        [
            *validator_header(t[0]),
            logrus(t[1], "info", f"pod {pod} is curently in Pending phase"),
            logrus(t[3], "info", f"pod {pod} have run successfully"),
        ]
    )


def plugin_validation_log(ctx: LogCtx) -> str:
    t = ticks(ctx.started, 3000)
    pod = ctx.world.ds_pods.get(("plugin-validator", ctx.node.name), "/x").split("/")[1]
    count = ctx.node.spec.gpus if ctx.node.spec else 8
    return join(
        [
            *validator_header(t[0]),
            logrus(t[0], "info", "GPU resources are not yet discovered by the node, retry: 1"),
            logrus(t[2], "info", f"Found {count} GPU devices on the node"),
            logrus(t[3], "info", f"pod {pod} is curently in Pending phase"),
            logrus(t[5], "info", f"pod {pod} have run successfully"),
        ]
    )


# -- toolkit -------------------------------------------------------------------


def toolkit_log(ctx: LogCtx) -> str:
    runtime = "crio" if ctx.world.scenario.cluster.runtime == "crio" else "containerd"
    config_name = "config.toml" if runtime == "containerd" else "crio.conf"
    t = ticks(ctx.started, 80)
    lines = [
        logrus(t[0], "info", "Starting nvidia-toolkit"),
        logrus(t[1], "info", "disabling device node creation since --cdi-enabled=false")
        if not ctx.world.scenario.cluster.cdi
        else logrus(t[1], "info", "Verifying Flags"),
        logrus(t[2], "info", "Installing toolkit"),
        logrus(t[3], "info", "Using source root /run/nvidia/driver"),
        logrus(t[4], "info", "Installing NVIDIA container toolkit to '/usr/local/nvidia/toolkit'"),
        logrus(t[5], "info", "Removing existing NVIDIA container toolkit installation"),
        logrus(t[6], "info", "Creating directory '/usr/local/nvidia/toolkit'"),
        logrus(
            t[9],
            "info",
            "Installing executable '/usr/bin/nvidia-container-runtime' to /usr/local/nvidia/toolkit",
        ),
        logrus(t[10], "info", "Installing executable '/usr/bin/nvidia-ctk' to /usr/local/nvidia/toolkit"),
        logrus(t[12], "info", "Generating CDI spec for management containers"),
        logrus(t[13], "info", "Created CDI spec: /var/run/cdi/management.nvidia.com-gpu.yaml"),
        logrus(t[14], "info", "Installing CDI hook: /usr/local/nvidia/toolkit/nvidia-cdi-hook"),
        logrus(t[15], "info", f"Starting 'setup' for {runtime}"),
        logrus(
            t[16],
            "info",
            f"Loading config from /runtime/config-dir/{config_name}",
        ),
        logrus(t[17], "info", "Flushing config to /runtime/config-dir.d/99-nvidia.toml")
        if ctx.world.scenario.cluster.cdi
        else logrus(t[17], "info", "Flushing config to /runtime/config-dir/config.toml"),
        logrus(t[18], "info", f"Sending SIGHUP signal to {runtime}"),
        logrus(t[19], "info", f"Successfully signaled {runtime}"),
        logrus(t[20], "info", f"Completed 'setup' for {runtime}"),
        logrus(t[21], "info", "Waiting for signal"),
    ]
    return join(lines)


# -- device plugin, GFD, DCGM exporter, MIG manager --------------------------------


def device_plugin_start(t: Sequence[datetime]) -> list[str]:
    """Plugin start-up up to the point where it talks to NVML."""
    return [
        klog(
            t[0],
            "main.go:235",
            '"Starting NVIDIA Device Plugin" version=<\n\tf1a9fa0d\n\tcommit: '
            "f1a9fa0d0aa3d4a7e0a14b7a1f8f3b9a4a7d1e2c\n >",
        ),
        klog(t[1], "main.go:238", "Starting FS watcher for /var/lib/kubelet/device-plugins"),
        klog(t[2], "main.go:245", "Starting OS watcher."),
        klog(t[3], "main.go:260", "Starting Plugins."),
        klog(t[4], "main.go:317", "Loading configuration."),
        klog(t[5], "main.go:342", "Updating config with default resource matching patterns."),
        klog(
            t[6],
            "main.go:353",
            '\nRunning with config:\n{\n  "version": "v1",\n  "flags": {\n'
            '    "migStrategy": "single",\n    "failOnInitError": true,\n'
            '    "mpsRoot": "/run/nvidia/mps",\n    "nvidiaDriverRoot": "/run/nvidia/driver",\n'
            '    "plugin": {\n      "passDeviceSpecs": true,\n      "deviceListStrategy": [\n'
            '        "envvar"\n      ],\n      "deviceIDStrategy": "uuid"\n    }\n  },\n'
            '  "resources": {\n    "gpus": [\n      {\n        "pattern": "*",\n'
            '        "name": "nvidia.com/gpu"\n      }\n    ]\n  },\n  "sharing": {\n'
            '    "timeSlicing": {}\n  }\n}',
        ),
        klog(t[7], "main.go:356", "Retrieving plugins."),
    ]


def device_plugin_log(ctx: LogCtx) -> str:
    t = ticks(ctx.started, 3)
    return join(
        [
            *device_plugin_start(t),
            klog(t[8], "factory.go:104", "Detected NVML platform: found NVML library"),
            klog(
                t[9], "factory.go:104", "Detected non-Tegra platform: /sys/devices/soc0/family file not found"
            ),
            klog(t[30], "server.go:195", "Starting GRPC server for 'nvidia.com/gpu'"),
            klog(
                t[31],
                "server.go:139",
                "Starting to serve 'nvidia.com/gpu' on /var/lib/kubelet/device-plugins/nvidia-gpu.sock",
            ),
            klog(t[33], "server.go:146", "Registered device plugin for 'nvidia.com/gpu' with Kubelet"),
        ]
    )


NVML_HINTS = [
    "If this is a GPU node, did you set the docker default runtime to `nvidia`?",
    "You can check the prerequisites at: https://github.com/NVIDIA/k8s-device-plugin#prerequisites",
    "You can learn how to set the runtime at: https://github.com/NVIDIA/k8s-device-plugin#quick-start",
    "If this is not a GPU node, you should set up a toleration or nodeSelector to only deploy this "
    "plugin on GPU nodes",
]


def nvml_failure(t: Sequence[datetime], error: str) -> list[str]:
    """What the plugin prints when NVML cannot be initialised."""
    lines = [
        klog(
            t[8],
            "factory.go:104",
            "Detected non-NVML platform: could not load NVML library: "
            "libnvidia-ml.so.1: cannot open shared object file: No such file or directory",
        )
        if error == "ERROR_LIBRARY_NOT_FOUND"
        else klog(t[8], "factory.go:104", "Detected NVML platform: found NVML library")
    ]
    lines.append(klog(t[9], "nvml_manager.go:57", f"Failed to initialize NVML: {error}.", "E"))
    lines += [klog(t[10 + i], "nvml_manager.go:58", hint, "E") for i, hint in enumerate(NVML_HINTS)]
    return lines


def gfd_log(ctx: LogCtx) -> str:
    t = ticks(ctx.started, 5)
    return join(
        [
            klog(t[0], "main.go:163", "Starting OS watcher."),
            klog(t[1], "main.go:168", "Loading configuration."),
            klog(
                t[2],
                "main.go:180",
                '\nRunning with config:\n{\n  "version": "v1",\n  "flags": {\n'
                '    "migStrategy": "single",\n    "failOnInitError": true,\n'
                '    "gfd": {\n      "oneshot": false,\n      "noTimestamp": false,\n'
                '      "sleepInterval": "1m0s",\n      "outputFile": '
                '"/etc/kubernetes/node-feature-discovery/features.d/gfd",\n'
                '      "machineTypeFile": "/sys/class/dmi/id/product_name"\n    }\n  }\n}',
            ),
            klog(t[3], "factory.go:104", "Detected NVML platform: found NVML library"),
            klog(
                t[4], "factory.go:104", "Detected non-Tegra platform: /sys/devices/soc0/family file not found"
            ),
            klog(t[40], "main.go:256", "Creating Labelers"),
            klog(
                t[200],
                "output.go:82",
                "Writing labels to output file /etc/kubernetes/node-feature-discovery/features.d/gfd",
            ),
            klog(t[201], "main.go:283", "Sleeping for 60000000000"),
        ]
    )


def dcgm_start(t: Sequence[datetime]) -> list[str]:
    return [
        slog(t[0], "INFO", "Starting dcgm-exporter", "Version=4.1.1-4.0.4"),
        slog(t[1], "INFO", "Attempting to initialize DCGM."),
    ]


def dcgm_exporter_log(ctx: LogCtx) -> str:
    t = ticks(ctx.started, 40)
    return join(
        [
            *dcgm_start(t),
            slog(t[20], "INFO", "DCGM successfully initialized!"),
            slog(t[21], "INFO", "Collecting DCP Metrics"),
            slog(t[22], "INFO", "Falling back to metric file '/etc/dcgm-exporter/dcp-metrics-included.csv'"),
            slog(t[23], "INFO", "Initializing system entities of type 'GPU'"),
            slog(t[24], "INFO", "Not collecting NvSwitch metrics; no fields to watch for device type: 3"),
            slog(t[25], "INFO", "Not collecting NvLink metrics; no fields to watch for device type: 6"),
            slog(t[26], "INFO", "Not collecting CPU metrics; no fields to watch for device type: 7"),
            slog(t[27], "INFO", "Not collecting CPU Core metrics; no fields to watch for device type: 8"),
            slog(t[28], "INFO", "Kubernetes metrics collection enabled!"),
            slog(t[29], "INFO", "Pipeline starting"),
            slog(t[30], "INFO", "Starting webserver"),
            slog(t[31], "INFO", "Listening on", "address=[::]:9400"),
            slog(t[32], "INFO", "TLS is disabled.", "http2=false address=[::]:9400"),
        ]
    )


def mig_manager_log(ctx: LogCtx) -> str:
    t = ticks(ctx.started, 500)
    return join(
        [
            logrus(t[0], "info", "Waiting for change to 'nvidia.com/mig.config' label"),
            logrus(t[1], "info", "Updating to MIG config: all-disabled"),
            "Getting current value of the 'nvidia.com/gpu.deploy.device-plugin' node label",
            "Current value of 'nvidia.com/gpu.deploy.device-plugin=true'",
            "Asserting that the requested configuration is present in the configuration file",
            "Selected MIG configuration is valid",
            "Getting current value of the 'nvidia.com/mig.config.state' node label",
            "Current value of 'nvidia.com/mig.config.state=success'",
            "Checking if the selected MIG config is currently applied or not",
            "Selected MIG configuration currently applied",
            logrus(t[9], "info", "Waiting for change to 'nvidia.com/mig.config' label"),
        ]
    )


# -- Network Operator ------------------------------------------------------------


def mofed_log(ctx: LogCtx) -> str:
    t = ticks(ctx.started, 1500)
    os_tag = ctx.node.spec.os if ctx.node.spec else "ubuntu22.04"
    return join(
        [
            f"[{t[0]:%Y-%m-%dT%H:%M:%S}+00:00] Starting DOCA-OFED driver container {DOCA_DRIVER_VERSION} "
            f"({os_tag}), kernel {ctx.kernel}",
            f"[{t[1]:%Y-%m-%dT%H:%M:%S}+00:00] Unsetting driver ready state",
            f"[{t[2]:%Y-%m-%dT%H:%M:%S}+00:00] Found precompiled driver packages for kernel {ctx.kernel}",
            f"[{t[3]:%Y-%m-%dT%H:%M:%S}+00:00] Installing OFED driver packages",
            f"[{t[40]:%Y-%m-%dT%H:%M:%S}+00:00] Restarting openibd",
            "Unloading HCA driver:                                      [  OK  ]",
            "Loading HCA driver and Access Layer:                       [  OK  ]",
            f"[{t[60]:%Y-%m-%dT%H:%M:%S}+00:00] Setting driver ready state",
            f"[{t[61]:%Y-%m-%dT%H:%M:%S}+00:00] Driver container ready, waiting for termination signal",
        ]
    )


def rdma_start(t: Sequence[datetime], device_ids: str = "") -> list[str]:
    """The RDMA shared device plugin's startup, up to the config it loaded; faults reuse it."""
    return [
        stdlog(t[0], "Starting K8s RDMA Shared Device Plugin version= master"),
        stdlog(t[1], "resource manager reading configs"),
        stdlog(t[2], "Reading /k8s-rdma-shared-dev-plugin/config.json"),
        stdlog(
            t[3],
            "loaded config: [{ResourceName:rdma_shared_device_a ResourcePrefix: RdmaHcaMax:63 "
            f"Devices:[] Selectors:{{Vendors:[15b3] DeviceIDs:[{device_ids}] Drivers:[] IfNames:[] "
            "LinkTypes:[]}}] ",
        ),
    ]


def rdma_log(ctx: LogCtx) -> str:
    t = ticks(ctx.started, 2)
    count = ctx.node.spec.nics if ctx.node.spec else 2
    lines = [
        *rdma_start(t),
        stdlog(t[4], "no periodic update interval is set, use default interval 60 seconds"),
        stdlog(t[5], "Discovering host devices"),
        stdlog(t[6], "discovering host network devices"),
    ]
    for i in range(count):
        lines.append(
            stdlog(
                t[7 + i],
                f"DiscoverHostDevices(): device found: 0000:{NIC_BUSES[i].lower()}:00.0"
                "\t02          \tMellanox Technolo...\tMT2910 Family [ConnectX-7]",
            )
        )
    lines += [
        stdlog(t[20], "Initializing resource servers"),
        stdlog(
            t[21],
            "Resource: &{ResourceName:rdma_shared_device_a ResourcePrefix:rdma RdmaHcaMax:63 "
            "Devices:[] Selectors:{Vendors:[15b3] DeviceIDs:[] Drivers:[] IfNames:[] LinkTypes:[]}}",
        ),
        stdlog(t[22], "rdma_shared_device_a.sock gets registered successfully at Kubelet"),
        stdlog(t[23], 'exposing "63" devices'),
        stdlog(t[24], "Starting OS watcher."),
    ]
    return join(lines)


def sriov_dp_log(ctx: LogCtx) -> str:
    """The SR-IOV network device plugin (klog) finding the NICs' VFs and registering."""
    t = ticks(ctx.started, 2)
    nics = ctx.node.spec.nics if ctx.node.spec else 2
    res = "nvidia.com/hostdev"
    lines = [
        klog(t[0], "manager.go:57", "Using Kubelet Plugin Registry Mode"),
        klog(t[1], "main.go:44", "resource manager reading configs"),
        klog(t[2], "manager.go:86", f"raw ResourceList: {SRIOV_DP_CONFIG}"),
        klog(
            t[3],
            "manager.go:106",
            "unmarshalled ResourceList: [{ResourcePrefix:nvidia.com ResourceName:hostdev "
            "DeviceType:netDevice ExcludeTopology:false}]",
        ),
        klog(t[4], "manager.go:217", f'validating resource name "{res}"'),
        klog(t[5], "main.go:60", "Discovering host devices"),
    ]
    for i in range(nics):
        lines.append(
            klog(
                t[6 + i],
                "netDeviceProvider.go:67",
                f"netdevice AddTargetDevices(): device found: 0000:{NIC_BUSES[i].lower()}:00.1\t02"
                "          \tMellanox Technolo...\tConnectX Family mlx5Gen Virtual Function",
            )
        )
    lines += [
        klog(t[20], "main.go:66", "Initializing resource servers"),
        klog(t[21], "manager.go:121", "Creating new ResourcePool: hostdev"),
        klog(t[22], "manager.go:142", "New resource server is created for hostdev ResourcePool"),
        klog(t[23], "main.go:72", "Starting all servers..."),
        klog(t[24], "server.go:254", "starting hostdev device plugin endpoint at: nvidia.com_hostdev.sock"),
        klog(t[25], "main.go:77", "All servers started."),
        klog(t[26], "main.go:78", "Listening for term signals"),
        klog(
            t[27], "server.go:117", "Plugin: nvidia.com_hostdev.sock gets registered successfully at Kubelet"
        ),
    ]
    return join(lines)


# -- cluster-wide controllers and agents -------------------------------------------


def operator_log(ctx: LogCtx) -> str:
    t = ticks(ctx.started, 250)
    lg = "controllers.ClusterPolicy"
    lines = [
        zap_json(t[0], "info", "setup", "starting manager"),
        zap_json(t[1], "info", "", "Starting EventSource", '"controller":"clusterpolicy-controller"'),
        zap_json(
            t[3],
            "info",
            lg,
            "Kubernetes version detected",
            '"version":"' + ctx.world.scenario.cluster.kubernetes_version + '"',
        ),
        zap_json(t[4], "info", lg, "Operator metrics initialized."),
        zap_json(t[5], "info", lg, "Getting assets from: ", '"path:":"/opt/gpu-operator/pre-requisites"'),
        zap_json(
            t[9], "info", lg, "Number of nodes with GPU label", f'"NodeCount":{len(ctx.world.gpu_nodes())}'
        ),
        zap_json(
            t[10],
            "info",
            lg,
            "Using container runtime: "
            + ("crio" if ctx.world.scenario.cluster.runtime == "crio" else "containerd"),
        ),
        zap_json(
            t[40], "info", lg, "ClusterPolicy is ready as all resources have been successfully reconciled"
        ),
    ]
    return join(lines)


def network_operator_log(ctx: LogCtx) -> str:
    t = ticks(ctx.started, 300)
    return join(
        [
            zap_json(t[0], "info", "setup", "starting manager"),
            zap_json(
                t[5],
                "info",
                "controllers.NicClusterPolicy",
                "Reconciling NicClusterPolicy",
                '"name":"nic-cluster-policy"',
            ),
            zap_json(
                t[9],
                "info",
                "controllers.NicClusterPolicy",
                "NicClusterPolicy is ready",
                '"name":"nic-cluster-policy"',
            ),
        ]
    )


def nfd_worker_log(ctx: LogCtx) -> str:
    t = ticks(ctx.started, 8)
    return join(
        [
            klog(
                t[0],
                "main.go:66",
                '"-server is deprecated, will be removed in a future release along '
                'with the deprecated gRPC API"',
            ),
            klog(
                t[1],
                "nfd-worker.go:320",
                '"Node Feature Discovery Worker" version="v0.17.2" '
                f'nodeName="{ctx.node.name}" namespace="gpu-operator"',
            ),
            klog(
                t[2],
                "nfd-worker.go:568",
                '"configuration file parsed" path="/etc/kubernetes/node-feature-discovery/nfd-worker.conf"',
            ),
            klog(t[3], "nfd-worker.go:600", '"configuration successfully updated" configuration={...}'),
            klog(t[4], "metrics.go:44", '"metrics server starting" port=":8081"'),
            klog(t[20], "nfd-worker.go:612", '"starting feature discovery..."'),
            klog(t[60], "nfd-worker.go:625", '"feature discovery completed"'),
            klog(t[61], "nfd-worker.go:699", f'"creating NodeFeature object" nodefeature="{ctx.node.name}"'),
        ]
    )


def csi_registrar_log(ctx: LogCtx) -> str:
    t = ticks(ctx.started, 6)
    return join(
        [
            klog(t[0], "main.go:150", "Version: v2.12.0"),
            klog(t[1], "main.go:151", "Running node-driver-registrar in mode="),
            klog(t[2], "main.go:175", 'Attempting to open a gRPC connection with: "/csi/csi.sock"'),
            klog(t[3], "main.go:183", "Calling CSI driver to discover driver name"),
            klog(t[4], "main.go:193", 'CSI driver name: "nfs.csi.k8s.io"'),
            klog(
                t[5],
                "node_register.go:56",
                "Starting Registration Server at: /registration/nfs.csi.k8s.io-reg.sock",
            ),
            klog(
                t[6],
                "node_register.go:66",
                "Registration Server started at: /registration/nfs.csi.k8s.io-reg.sock",
            ),
            klog(t[7], "node_register.go:96", 'Skipping HTTP server because endpoint is set to: ""'),
            klog(t[300], "main.go:90", "Received GetInfo call: &InfoRequest{}"),
            klog(
                t[301],
                "main.go:101",
                "Received NotifyRegistrationStatus call: &RegistrationStatus{PluginRegistered:true,Error:,}",
            ),
        ]
    )


def fluentbit_log(ctx: LogCtx) -> str:
    t = ticks(ctx.started, 30)
    return join(
        [
            "Fluent Bit v3.2.2",
            "* Copyright (C) 2015-2024 The Fluent Bit Authors",
            "* Fluent Bit is a CNCF sub-project under the umbrella of Fluentd",
            "* https://fluentbit.io",
            "",
            fluentbit(t[0], "info", "fluent bit", "version=3.2.2, commit=a59c8b6f71, pid=1"),
            fluentbit(
                t[1],
                "info",
                "storage",
                "ver=1.5.2, type=memory, sync=normal, checksum=off, max_chunks_up=128",
            ),
            fluentbit(t[2], "info", "cmetrics", "version=0.9.9"),
            fluentbit(t[3], "info", "input:tail:tail.0", "initializing"),
            fluentbit(
                t[4], "info", "filter:kubernetes:kubernetes.0", "https=1 host=kubernetes.default.svc port=443"
            ),
            fluentbit(t[5], "info", "filter:kubernetes:kubernetes.0", "connectivity OK"),
            fluentbit(t[6], "info", "sp", "stream processor started"),
        ]
    )


def node_exporter_log(ctx: LogCtx) -> str:
    t = ticks(ctx.started, 2)
    return join(
        [
            slog(
                t[0],
                "INFO",
                "Starting node_exporter",
                'source=node_exporter.go:193 version="(version=1.8.2, '
                'branch=HEAD, revision=f1e0e8360aa60b6cb5e5cc1560bed348fc2c1895)"',
            ),
            slog(t[1], "INFO", "Enabled collectors", "source=node_exporter.go:111"),
            slog(t[2], "INFO", "infiniband", "source=node_exporter.go:118 collector=infiniband"),
            slog(t[3], "INFO", "Listening on", f"source=tls_config.go:347 address=[{ctx.node.ip}]:9100"),
            slog(
                t[4],
                "INFO",
                "TLS is disabled.",
                f"source=tls_config.go:350 http2=false address=[{ctx.node.ip}]:9100",
            ),
        ]
    )


def _zap_console(at: datetime, where: str, message: str) -> str:
    """The collector's console encoder: `<ts>\tinfo\t<caller>\t<message>`."""
    return f"{at:%Y-%m-%dT%H:%M:%S}.{at.microsecond // 1000:03d}Z\tinfo\t{where}\t{message}"


def otel_log(ctx: LogCtx) -> str:
    t = ticks(ctx.started, 20)
    return join(
        [
            _zap_console(t[0], "service@v0.115.0/service.go:166", "Setting up own telemetry..."),
            _zap_console(
                t[5],
                "service@v0.115.0/service.go:238",
                'Starting otelcol-k8s...\t{"Version": "0.115.1", "NumCPU": 224}',
            ),
            _zap_console(
                t[9],
                "otlpreceiver@v0.115.0/otlp.go:112",
                'Starting GRPC server\t{"endpoint": "0.0.0.0:4317"}',
            ),
            _zap_console(
                t[12],
                "service@v0.115.0/service.go:261",
                "Everything is ready. Begin running and processing data.",
            ),
        ]
    )


# -- registry ------------------------------------------------------------------

LogFn = Callable[[LogCtx], str]

HEALTHY: dict[str, LogFn] = {
    "k8s-driver-manager": driver_manager_log,
    "nvidia-driver-ctr": driver_log,
    "nvidia-peermem-ctr": peermem_log,
    "driver-validation": driver_validation_log,
    "toolkit-validation": toolkit_validation_log,
    "cuda-validation": cuda_validation_log,
    "plugin-validation": plugin_validation_log,
    "nvidia-container-toolkit-ctr": toolkit_log,
    "nvidia-device-plugin": device_plugin_log,
    "gpu-feature-discovery": gfd_log,
    "nvidia-dcgm-exporter": dcgm_exporter_log,
    "nvidia-mig-manager": mig_manager_log,
    "nvidia-operator-validator": lambda ctx: "all validations are successful\n",
    "mofed-container": mofed_log,
    "rdma-shared-dp": rdma_log,
    "kube-sriovdp": sriov_dp_log,
    "worker": nfd_worker_log,
    "node-driver-registrar": csi_registrar_log,
    "fluent-bit": fluentbit_log,
    "node-exporter": node_exporter_log,
    "opentelemetry-collector": otel_log,
}
CONTROLLERS: dict[str, LogFn] = {"gpu-operator": operator_log, "network-operator": network_operator_log}


def write_healthy(world: World, operand: str, node: NodeState, pod_key: str) -> None:
    """Store healthy logs for every container of a freshly built DaemonSet pod."""
    if not world.with_logs:
        return
    for ctr in world.ctrs[pod_key]:
        fn = HEALTHY.get(ctr.name)
        if fn is None or ctr.started_at is None:
            continue
        if ctr.name == "toolkit-validation" and operand != "validator":
            world.set_log(pod_key, ctr.name, wait_toolkit_log(LogCtx(world, node, pod_key, ctr.started_at)))
            continue
        world.set_log(pod_key, ctr.name, fn(LogCtx(world, node, pod_key, ctr.started_at)))


def write_controller(world: World, component: str, pod_key: str) -> None:
    """Logs of a cluster-scoped controller pod."""
    fn = CONTROLLERS.get(component)
    if fn is None or not world.with_logs:
        return
    ctr = world.ctrs[pod_key][0]
    node = world.node(world.places[pod_key].node)
    assert ctr.started_at is not None
    world.set_log(pod_key, ctr.name, fn(LogCtx(world, node, pod_key, ctr.started_at)))
