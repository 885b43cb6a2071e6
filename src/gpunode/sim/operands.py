"""The DaemonSets a GPU cluster runs: names, labels, selectors and containers.

Names, labels, container names and images follow the GPU Operator v25.3 and Network
Operator v25.1 manifests (see shared/reference/gpu-stack-facts.md §1.2, §2.2). Each
`DsDef` renders to a DaemonSet object and to the spec its pods share.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gpunode.sim import ids
from gpunode.sim.k8s import Obj, toleration
from gpunode.sim.models import IMAGES, doca_image, driver_image, k8s_image
from gpunode.sim.scenario import Scenario

GPU_NS = "gpu-operator"
NET_NS = "network-operator"
NODE_CRITICAL = "system-node-critical"
GPU_TOLERATION = toleration("nvidia.com/gpu", "NoSchedule")
CP_TOLERATION = toleration("node-role.kubernetes.io/control-plane", "NoSchedule", "Equal", "")
ALL_TOLERATION = toleration(None, None)
VALIDATIONS = "/run/nvidia/validations"
WAIT_TOOLKIT = (
    f"until [ -f {VALIDATIONS}/toolkit-ready ]; do echo waiting for nvidia container "
    "stack to be setup; sleep 5; done"
)

# env values starting with "field:" become a downward-API fieldRef.
Env = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class CtrDef:
    """One container of a pod template."""

    name: str
    image: str
    command: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    env: Env = ()
    ports: tuple[tuple[str, int], ...] = ()
    privileged: bool = False
    takes: int = 5
    probe: Obj | None = None


@dataclass(frozen=True)
class DsDef:
    """A DaemonSet and the template of its pods."""

    key: str
    name: str
    namespace: str
    labels: dict[str, str]
    containers: tuple[CtrDef, ...]
    init: tuple[CtrDef, ...] = ()
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: tuple[Obj, ...] = ()
    service_account: str = "default"
    priority_class: str | None = None
    gpu_runtime: bool = False
    host_network: bool = False
    host_pid: bool = False
    start: int = 0
    owner: Obj | None = None
    ds_labels: dict[str, str] = field(default_factory=dict)
    on_delete: bool = False
    match_labels: dict[str, str] | None = None

    @property
    def selector(self) -> dict[str, str]:
        """matchLabels: as the manifest says, else the identifying subset of the template labels."""
        if self.match_labels is not None:
            return dict(self.match_labels)
        keys = ("app", "k8s-app", "app.kubernetes.io/name", "app.kubernetes.io/instance", "role")
        return {k: v for k, v in self.labels.items() if k in keys}


def _env(*pairs: tuple[str, str]) -> Env:
    return tuple(pairs)


NODE_NAME = ("NODE_NAME", "field:spec.nodeName")
OPERATOR_NS = ("OPERATOR_NAMESPACE", "field:metadata.namespace")


def _operand(
    key: str,
    name: str,
    containers: tuple[CtrDef, ...],
    init: tuple[CtrDef, ...],
    *,
    deploy: str,
    sa: str,
    start: int,
    gpu_runtime: bool = True,
    extra_labels: dict[str, str] | None = None,
) -> DsDef:
    """A GPU Operator operand: gated by `nvidia.com/gpu.deploy.<deploy>=true`."""
    return DsDef(
        key=key,
        name=name,
        namespace=GPU_NS,
        labels={"app": name} | (extra_labels or {}),
        containers=containers,
        init=init,
        node_selector={f"nvidia.com/gpu.deploy.{deploy}": "true"},
        tolerations=(GPU_TOLERATION,),
        service_account=sa,
        priority_class=NODE_CRITICAL,
        gpu_runtime=gpu_runtime,
        start=start,
        owner={
            "apiVersion": "nvidia.com/v1",
            "blockOwnerDeletion": True,
            "controller": True,
            "kind": "ClusterPolicy",
            "name": "cluster-policy",
            "uid": ids.uid("/cluster-policy"),
        },
        ds_labels={
            "app": name,
            "app.kubernetes.io/managed-by": "gpu-operator",
            "helm.sh/chart": "gpu-operator-v25.3.0",
        },
    )


def _toolkit_wait(takes: int = 300) -> CtrDef:
    """The `toolkit-validation` init container every GPU operand waits in."""
    return CtrDef(
        "toolkit-validation",
        IMAGES["validator"],
        ("sh", "-c"),
        (WAIT_TOOLKIT,),
        _env(("NVIDIA_VISIBLE_DEVICES", "all")),
        takes=takes,
        privileged=True,
    )


def _validator_step(component: str, takes: int, extra: Env = ()) -> CtrDef:
    """One `nvidia-validator` init container (driver/toolkit/cuda/plugin)."""
    wait = "true" if component == "driver" else "false"
    env = _env(("WITH_WAIT", wait), ("COMPONENT", component)) + extra
    return CtrDef(
        f"{component}-validation",
        IMAGES["validator"],
        ("sh", "-c"),
        ("nvidia-validator",),
        env,
        privileged=True,
        takes=takes,
    )


def driver_def(scenario: Scenario, os_tag: str, rdma: bool) -> DsDef:
    """The driver DaemonSet (`nvidia-driver-daemonset`)."""
    probe = {
        "exec": {"command": ["sh", "/usr/local/bin/nvidia-driver-startup-probe.sh"]},
        "failureThreshold": 120,
        "initialDelaySeconds": 60,
        "periodSeconds": 10,
        "successThreshold": 1,
        "timeoutSeconds": 60,
    }
    ctrs = [
        CtrDef(
            "nvidia-driver-ctr",
            driver_image(os_tag),
            ("nvidia-driver",),
            ("init",),
            _env(("GPU_DIRECT_RDMA_ENABLED", "true" if rdma else "false"), NODE_NAME),
            privileged=True,
            probe=probe,
        )
    ]
    if rdma:
        ctrs.append(
            CtrDef(
                "nvidia-peermem-ctr",
                driver_image(os_tag),
                ("nvidia-driver",),
                ("reload_nvidia_peermem",),
                privileged=True,
            )
        )
    manager = CtrDef(
        "k8s-driver-manager",
        IMAGES["driver-manager"],
        ("driver-manager",),
        ("uninstall_driver",),
        _env(
            NODE_NAME,
            ("NVIDIA_VISIBLE_DEVICES", "void"),
            ("ENABLE_GPU_POD_EVICTION", "true"),
            ("ENABLE_AUTO_DRAIN", "false"),
            ("DRAIN_USE_FORCE", "false"),
            ("DRAIN_POD_SELECTOR_LABEL", ""),
            ("DRAIN_TIMEOUT_SECONDS", "0s"),
            ("DRAIN_DELETE_EMPTYDIR_DATA", "false"),
            OPERATOR_NS,
        ),
        privileged=True,
        takes=12,
    )
    labels = {"app.kubernetes.io/component": "nvidia-driver", "nvidia.com/precompiled": "false"}
    d = _operand(
        "driver",
        "nvidia-driver-daemonset",
        tuple(ctrs),
        (manager,),
        deploy="driver",
        sa="nvidia-driver",
        start=0,
        gpu_runtime=False,
        extra_labels=labels,
    )
    # the manifest's hostPID: true (assets/state-driver): the host's processes and, through
    # /proc/1/root, its files are in sight (collect's IMEX read relies on it)
    return replace(d, on_delete=True, host_pid=True)


def toolkit_def(scenario: Scenario) -> DsDef:
    """The container toolkit DaemonSet; its env says which runtime config it patches."""
    runtime = scenario.cluster.runtime
    env = _runtime_env(runtime, scenario.cluster.cdi)
    ctr = CtrDef(
        "nvidia-container-toolkit-ctr",
        IMAGES["toolkit"],
        ("/bin/bash", "-c"),
        ("nvidia-toolkit",),
        env,
        privileged=True,
    )
    driver_wait = _validator_step("driver", 270)
    return _operand(
        "toolkit",
        "nvidia-container-toolkit-daemonset",
        (ctr,),
        (driver_wait,),
        deploy="container-toolkit",
        sa="nvidia-container-toolkit",
        start=5,
        gpu_runtime=False,
    )


def _runtime_env(runtime: str, cdi: bool) -> Env:
    """Toolkit env for containerd (v2/v3 config) or CRI-O, CDI or legacy."""
    common = _env(
        ("ROOT", "/usr/local/nvidia"),
        ("NVIDIA_VISIBLE_DEVICES", "void"),
        ("TOOLKIT_PID_FILE", "/run/nvidia/toolkit/toolkit.pid"),
        ("CDI_ENABLED", "true" if cdi else "false"),
        ("NVIDIA_RUNTIME_SET_AS_DEFAULT", "false" if cdi else "true"),
    )
    if runtime == "crio":
        return common + _env(
            ("RUNTIME", "crio"),
            ("CRIO_CONFIG", "/runtime/config-dir/crio.conf"),
            ("RUNTIME_DROP_IN_CONFIG", "/runtime/config-dir.d/99-nvidia.toml"),
        )
    return common + _env(
        ("RUNTIME", "containerd"),
        ("CONTAINERD_CONFIG", "/runtime/config-dir/config.toml"),
        ("CONTAINERD_SOCKET", "/runtime/sock-dir/containerd.sock"),
        ("CONTAINERD_RUNTIME_CLASS", "nvidia"),
        ("RUNTIME_DROP_IN_CONFIG", "/runtime/config-dir.d/99-nvidia.toml"),
    )


def device_plugin_def(scenario: Scenario) -> DsDef:
    """The NVIDIA device plugin DaemonSet."""
    cdi = scenario.cluster.cdi
    env = _env(
        ("PASS_DEVICE_SPECS", "true"),
        ("FAIL_ON_INIT_ERROR", "true"),
        ("DEVICE_LIST_STRATEGY", "cdi-annotations" if cdi else "envvar"),
        ("DEVICE_ID_STRATEGY", "uuid"),
        ("NVIDIA_VISIBLE_DEVICES", "all"),
        ("NVIDIA_DRIVER_CAPABILITIES", "all"),
        ("MPS_ROOT", "/run/nvidia/mps"),
        ("MIG_STRATEGY", "single"),
        ("NVIDIA_MIG_MONITOR_DEVICES", "all"),
        ("CDI_ENABLED", "true" if cdi else "false"),
        ("CDI_ANNOTATION_PREFIX", "nvidia.cdi.k8s.io/"),
        ("NVIDIA_CDI_HOOK_PATH", "/usr/local/nvidia/toolkit/nvidia-cdi-hook"),
    )
    ctr = CtrDef(
        "nvidia-device-plugin",
        IMAGES["device-plugin"],
        ("/bin/bash", "-c"),
        (
            "[[ -f /run/nvidia/validations/host-driver-ready ]] && driver_root=/ || "
            "driver_root=/run/nvidia/driver; export NVIDIA_DRIVER_ROOT=$driver_root; "
            "exec nvidia-device-plugin;",
        ),
        env,
        privileged=True,
    )
    return _operand(
        "device-plugin",
        "nvidia-device-plugin-daemonset",
        (ctr,),
        (_toolkit_wait(),),
        deploy="device-plugin",
        sa="nvidia-device-plugin",
        start=10,
    )


def gfd_def() -> DsDef:
    """GPU Feature Discovery (shipped in the device plugin image since v0.15)."""
    env = _env(
        ("GFD_SLEEP_INTERVAL", "60s"),
        ("GFD_FAIL_ON_INIT_ERROR", "true"),
        ("MIG_STRATEGY", "single"),
        ("NVIDIA_MIG_MONITOR_DEVICES", "all"),
    )
    ctr = CtrDef(
        "gpu-feature-discovery", IMAGES["device-plugin"], ("gpu-feature-discovery",), (), env, privileged=True
    )
    return _operand(
        "gfd",
        "gpu-feature-discovery",
        (ctr,),
        (_toolkit_wait(),),
        deploy="gpu-feature-discovery",
        sa="nvidia-gpu-feature-discovery",
        start=10,
        extra_labels={"app.kubernetes.io/part-of": "nvidia-gpu"},
    )


def dcgm_exporter_def() -> DsDef:
    """DCGM exporter with the operator's default collectors file."""
    env = _env(
        ("DCGM_EXPORTER_LISTEN", ":9400"),
        ("DCGM_EXPORTER_KUBERNETES", "true"),
        ("DCGM_EXPORTER_COLLECTORS", "/etc/dcgm-exporter/dcp-metrics-included.csv"),
    )
    ctr = CtrDef(
        "nvidia-dcgm-exporter",
        IMAGES["dcgm-exporter"],
        (),
        (),
        env,
        ports=(("metrics", 9400),),
        privileged=True,
    )
    return _operand(
        "dcgm-exporter",
        "nvidia-dcgm-exporter",
        (ctr,),
        (_toolkit_wait(),),
        deploy="dcgm-exporter",
        sa="nvidia-dcgm-exporter",
        start=10,
    )


def mig_manager_def() -> DsDef:
    """MIG manager (only on nodes whose GPUs are MIG-capable)."""
    env = _env(
        NODE_NAME,
        ("CONFIG_FILE", "/mig-parted-config/config.yaml"),
        ("GPU_CLIENTS_FILE", "/gpu-clients/clients.yaml"),
        ("WITH_REBOOT", "false"),
        ("WITH_SHUTDOWN_HOST_GPU_CLIENTS", "true"),
        ("DEFAULT_GPU_CLIENTS_NAMESPACE", GPU_NS),
    )
    ctr = CtrDef(
        "nvidia-mig-manager", IMAGES["mig-manager"], ("nvidia-mig-manager",), (), env, privileged=True
    )
    return _operand(
        "mig-manager",
        "nvidia-mig-manager",
        (ctr,),
        (_toolkit_wait(),),
        deploy="mig-manager",
        sa="nvidia-mig-manager",
        start=10,
    )


def validator_def() -> DsDef:
    """The operator validator: four ordered init validations, then sleep."""
    steps = (
        _validator_step("driver", 270),
        _validator_step("toolkit", 8),
        _validator_step(
            "cuda",
            25,
            _env(NODE_NAME, ("VALIDATOR_IMAGE", IMAGES["validator"]), ("VALIDATOR_RUNTIME_CLASS", "nvidia")),
        ),
        _validator_step(
            "plugin", 30, _env(NODE_NAME, ("MIG_STRATEGY", "single"), ("VALIDATOR_RUNTIME_CLASS", "nvidia"))
        ),
    )
    main = CtrDef(
        "nvidia-operator-validator",
        IMAGES["validator"],
        ("sh", "-c"),
        ("echo all validations are successful; sleep infinity",),
    )
    return _operand(
        "validator",
        "nvidia-operator-validator",
        (main,),
        steps,
        deploy="operator-validator",
        sa="nvidia-operator-validator",
        start=10,
        extra_labels={"app.kubernetes.io/part-of": "gpu-operator"},
    )


def nfd_worker_def() -> DsDef:
    """NFD worker from the GPU Operator's sub-chart (runs on every node)."""
    labels = {
        "app.kubernetes.io/instance": "gpu-operator",
        "app.kubernetes.io/name": "node-feature-discovery",
        "role": "worker",
    }
    ctr = CtrDef(
        "worker",
        IMAGES["nfd"],
        ("nfd-worker",),
        ("-feature-gates=NodeFeatureGroupAPI=false", "-metrics=8081", "-grpc-health=8082"),
        _env(
            ("NODE_NAME", "field:spec.nodeName"),
            ("POD_NAME", "field:metadata.name"),
            ("POD_UID", "field:metadata.uid"),
        ),
        ports=(("metrics", 8081), ("health", 8082)),
    )
    return DsDef(
        "nfd-worker",
        "gpu-operator-node-feature-discovery-worker",
        GPU_NS,
        labels,
        (ctr,),
        tolerations=(CP_TOLERATION, GPU_TOLERATION),
        service_account="gpu-operator-node-feature-discovery-worker",
        start=-3600,
        ds_labels=labels | {"app.kubernetes.io/managed-by": "Helm"},
    )


def mofed_def(os_tag: str, os_id: str, version_id: str, kernel: str) -> DsDef:
    """The DOCA/MOFED driver DaemonSet for one (OS, kernel) pair."""
    name = f"mofed-{os_tag}-{ids.pod_template_hash('kernel:' + kernel)}-ds"
    app = name.removesuffix("-ds")
    init = CtrDef(
        "network-operator-init-container",
        IMAGES["network-operator-init"],
        ("/network-operator-init-container",),
        (
            "--configmap-name",
            "ofed-init-container-config",
            "--configmap-namespace",
            NET_NS,
            "--configmap-key",
            "config.json",
        ),
        _env(NODE_NAME),
        takes=2,
    )
    probe = {
        "exec": {"command": ["sh", "-c", "lsmod | grep mlx5_core"]},
        "failureThreshold": 1,
        "initialDelaySeconds": 10,
        "periodSeconds": 30,
        "successThreshold": 1,
        "timeoutSeconds": 1,
    }
    ctr = CtrDef(
        "mofed-container",
        doca_image(os_tag),
        (),
        (),
        _env(
            ("CREATE_IFNAMES_UDEV", "true"),
            ("UNLOAD_STORAGE_MODULES", "true"),
            ("RESTORE_DRIVER_ON_POD_TERMINATION", "true"),
        ),
        privileged=True,
        probe=probe,
    )
    selector = {
        "feature.node.kubernetes.io/kernel-version.full": kernel,
        "feature.node.kubernetes.io/pci-15b3.present": "true",
        "feature.node.kubernetes.io/system-os_release.ID": os_id,
        "feature.node.kubernetes.io/system-os_release.VERSION_ID": version_id,
    }
    return DsDef(
        "mofed",
        name,
        NET_NS,
        {"app": app, "nvidia.com/ofed-driver": ""},
        (ctr,),
        (init,),
        selector,
        (GPU_TOLERATION,),
        "network-operator-ofed-driver",
        NODE_CRITICAL,
        host_network=True,
        start=-900,
        owner=_ncp_owner(),
        ds_labels={"app": app, "nvidia.com/ofed-driver": ""},
    )


def rdma_def() -> DsDef:
    """RDMA shared device plugin, gated on MOFED readiness."""
    ctr = CtrDef(
        "rdma-shared-dp",
        IMAGES["rdma-shared-dp"],
        ("/bin/k8s-rdma-shared-dp",),
        ("--use-cdi",),
        privileged=True,
    )
    selector = {
        "feature.node.kubernetes.io/pci-15b3.present": "true",
        "network.nvidia.com/operator.mofed.wait": "false",
    }
    return DsDef(
        "rdma",
        "rdma-shared-dp-ds",
        NET_NS,
        {"app": "rdma-shared-dp"},
        (ctr,),
        (),
        selector,
        (GPU_TOLERATION,),
        "rdma-shared",
        NODE_CRITICAL,
        host_network=True,
        start=-600,
        owner=_ncp_owner(),
        ds_labels={"app": "rdma-shared-dp"},
    )


SRIOV_DP = "network-operator-sriov-device-plugin"


def sriov_dp_def() -> DsDef:
    """SR-IOV network device plugin (NicClusterPolicy.spec.sriovDevicePlugin), gated on
    MOFED readiness like the RDMA plugin; selected by its ``name`` label."""
    ctr = CtrDef(
        "kube-sriovdp",
        IMAGES["sriov-dp"],
        (),
        ("--log-dir=sriovdp", "--log-level=10"),
        privileged=True,
    )
    selector = {
        "feature.node.kubernetes.io/pci-15b3.present": "true",
        "network.nvidia.com/operator.mofed.wait": "false",
    }
    labels = {"name": SRIOV_DP, "tier": "node", "app": "sriovdp", "ds-owner": "nic-cluster-policy"}
    return DsDef(
        "sriov-dp",
        SRIOV_DP,
        NET_NS,
        labels,
        (ctr,),
        (),
        selector,
        (toleration("nvidia.com/gpu", "NoSchedule"),),
        SRIOV_DP,
        NODE_CRITICAL,
        host_network=True,
        start=-600,
        owner=_ncp_owner(),
        ds_labels={"tier": "node", "app": "sriovdp", "ds-owner": "nic-cluster-policy"},
        match_labels={"name": SRIOV_DP},
    )


def _ncp_owner() -> Obj:
    return {
        "apiVersion": "mellanox.com/v1alpha1",
        "blockOwnerDeletion": True,
        "controller": True,
        "kind": "NicClusterPolicy",
        "name": "nic-cluster-policy",
        "uid": ids.uid("/nic-cluster-policy"),
    }


def agent_defs(scenario: Scenario) -> list[DsDef]:
    """Observability, logging and storage agents chosen by the scenario."""
    out: list[DsDef] = []
    if scenario.has("node-exporter"):
        out.append(_node_exporter())
    if scenario.has("logging-agent"):
        labels = {"app.kubernetes.io/instance": "fluent-bit", "app.kubernetes.io/name": "fluent-bit"}
        ctr = CtrDef(
            "fluent-bit",
            IMAGES["fluent-bit"],
            ("/fluent-bit/bin/fluent-bit",),
            ("--workdir=/fluent-bit/etc", "--config=/fluent-bit/etc/conf/fluent-bit.conf"),
            ports=(("http", 2020),),
        )
        out.append(
            DsDef(
                "fluent-bit",
                "fluent-bit",
                "logging",
                labels,
                (ctr,),
                tolerations=(ALL_TOLERATION,),
                service_account="fluent-bit",
                start=-86400 * 9,
                ds_labels=labels | {"app.kubernetes.io/managed-by": "Helm"},
            )
        )
    if scenario.has("otel-agent"):
        out.append(_otel())
    if scenario.has("csi-node"):
        out.append(_csi_nfs())
    return out


def _node_exporter() -> DsDef:
    labels = {
        "app.kubernetes.io/instance": "kube-prometheus-stack",
        "app.kubernetes.io/name": "prometheus-node-exporter",
        "jobLabel": "node-exporter",
    }
    ctr = CtrDef(
        "node-exporter",
        IMAGES["node-exporter"],
        (),
        (
            "--path.procfs=/host/proc",
            "--path.sysfs=/host/sys",
            "--path.rootfs=/host/root",
            "--path.udev.data=/host/root/run/udev/data",
            "--web.listen-address=[$(HOST_IP)]:9100",
        ),
        _env(("HOST_IP", "0.0.0.0")),
        ports=(("http-metrics", 9100),),
    )
    return DsDef(
        "node-exporter",
        "kube-prometheus-stack-prometheus-node-exporter",
        "monitoring",
        labels,
        (ctr,),
        tolerations=(toleration(None, "NoSchedule"),),
        service_account="kube-prometheus-stack-prometheus-node-exporter",
        host_network=True,
        start=-86400 * 10,
        ds_labels=labels | {"app.kubernetes.io/managed-by": "Helm"},
    )


def _otel() -> DsDef:
    labels = {
        "app.kubernetes.io/instance": "otel-agent",
        "app.kubernetes.io/name": "opentelemetry-collector",
        "component": "agent-collector",
    }
    ctr = CtrDef(
        "opentelemetry-collector",
        IMAGES["otel"],
        (),
        ("--config=/conf/relay.yaml",),
        _env(("MY_POD_IP", "field:status.podIP"), ("K8S_NODE_NAME", "field:spec.nodeName")),
        ports=(("otlp", 4317), ("otlp-http", 4318), ("metrics", 8888)),
    )
    return DsDef(
        "otel-agent",
        "otel-agent-opentelemetry-collector-agent",
        "opentelemetry",
        labels,
        (ctr,),
        tolerations=(GPU_TOLERATION,),
        service_account="otel-agent-opentelemetry-collector",
        start=-86400 * 8,
        ds_labels=labels | {"app.kubernetes.io/managed-by": "Helm"},
    )


def _csi_nfs() -> DsDef:
    sock = "/csi/csi.sock"
    ctrs = (
        CtrDef(
            "liveness-probe",
            IMAGES["csi-liveness"],
            (),
            (f"--csi-address={sock}", "--probe-timeout=3s", "--http-endpoint=localhost:29653", "--v=2"),
        ),
        CtrDef(
            "node-driver-registrar",
            IMAGES["csi-registrar"],
            (),
            ("--v=2", f"--csi-address={sock}", "--kubelet-registration-path=$(DRIVER_REG_SOCK_PATH)"),
            _env(
                ("DRIVER_REG_SOCK_PATH", "/var/lib/kubelet/plugins/csi-nfsplugin/csi.sock"),
                ("KUBE_NODE_NAME", "field:spec.nodeName"),
            ),
        ),
        CtrDef(
            "nfs",
            IMAGES["csi-nfs"],
            (),
            (
                "--v=5",
                "--nodeid=$(NODE_ID)",
                "--endpoint=$(CSI_ENDPOINT)",
                "--drivername=nfs.csi.k8s.io",
                "--mount-permissions=0",
                "--default-ondelete-policy=delete",
            ),
            _env(("NODE_ID", "field:spec.nodeName"), ("CSI_ENDPOINT", "unix:///csi/csi.sock")),
            privileged=True,
        ),
    )
    return DsDef(
        "csi-node",
        "csi-nfs-node",
        "kube-system",
        {"app": "csi-nfs-node"},
        ctrs,
        tolerations=(GPU_TOLERATION,),
        service_account="csi-nfs-node-sa",
        priority_class=NODE_CRITICAL,
        host_network=True,
        start=-86400 * 12,
        ds_labels={
            "app.kubernetes.io/instance": "csi-driver-nfs",
            "app.kubernetes.io/managed-by": "Helm",
            "app.kubernetes.io/name": "csi-driver-nfs",
        },
    )


def base_defs(scenario: Scenario) -> list[DsDef]:
    """kube-proxy and the CNI agent, present on every node."""
    version = scenario.cluster.kubernetes_version
    proxy = CtrDef(
        "kube-proxy",
        k8s_image("kube-proxy", version),
        ("/usr/local/bin/kube-proxy",),
        ("--config=/var/lib/kube-proxy/config.conf", "--hostname-override=$(NODE_NAME)"),
        _env(NODE_NAME),
        privileged=True,
    )
    defs = [
        DsDef(
            "kube-proxy",
            "kube-proxy",
            "kube-system",
            {"k8s-app": "kube-proxy"},
            (proxy,),
            tolerations=(ALL_TOLERATION,),
            service_account="kube-proxy",
            priority_class=NODE_CRITICAL,
            host_network=True,
            start=-86400 * 48,
            ds_labels={"k8s-app": "kube-proxy"},
        )
    ]
    defs.append(_cilium() if scenario.cluster.cni == "cilium" else _calico())
    return defs


def _cilium() -> DsDef:
    img = IMAGES["cilium"]
    inits = tuple(
        CtrDef(n, img, ("sh", "-c"), (), takes=1)
        for n in (
            "config",
            "mount-cgroup",
            "apply-sysctl-overwrites",
            "mount-bpf-fs",
            "clean-cilium-state",
            "install-cni-binaries",
        )
    )
    agent = CtrDef(
        "cilium-agent",
        img,
        ("cilium-agent",),
        ("--config-dir=/tmp/cilium/config-map",),
        _env(("K8S_NODE_NAME", "field:spec.nodeName"), ("CILIUM_K8S_NAMESPACE", "field:metadata.namespace")),
        privileged=True,
    )
    labels = {
        "app.kubernetes.io/name": "cilium-agent",
        "app.kubernetes.io/part-of": "cilium",
        "k8s-app": "cilium",
    }
    return DsDef(
        "cni",
        "cilium",
        "kube-system",
        labels,
        (agent,),
        inits,
        tolerations=(ALL_TOLERATION,),
        service_account="cilium",
        priority_class=NODE_CRITICAL,
        host_network=True,
        start=-86400 * 48,
        ds_labels={"app.kubernetes.io/managed-by": "Helm", "k8s-app": "cilium"},
    )


def _calico() -> DsDef:
    inits = (
        CtrDef("flexvol-driver", IMAGES["calico"].replace("node", "pod2daemon-flexvol"), takes=1),
        CtrDef("install-cni", IMAGES["calico-cni"], ("/opt/cni/bin/install",), takes=2),
    )
    node = CtrDef(
        "calico-node",
        IMAGES["calico"],
        (),
        (),
        _env(("DATASTORE_TYPE", "kubernetes"), ("NODENAME", "field:spec.nodeName")),
        privileged=True,
    )
    return DsDef(
        "cni",
        "calico-node",
        "calico-system",
        {"k8s-app": "calico-node"},
        (node,),
        inits,
        tolerations=(ALL_TOLERATION,),
        service_account="calico-node",
        priority_class=NODE_CRITICAL,
        host_network=True,
        start=-86400 * 48,
        ds_labels={"k8s-app": "calico-node"},
    )


# -- rendering -----------------------------------------------------------------


def render_env(env: Env) -> list[Obj]:
    """Env pairs to the API's env list (fieldRef for `field:` values)."""
    out: list[Obj] = []
    for name, value in env:
        if value.startswith("field:"):
            ref = {"apiVersion": "v1", "fieldPath": value.removeprefix("field:")}
            out.append({"name": name, "valueFrom": {"fieldRef": ref}})
        else:
            out.append({"name": name, "value": value})
    return out


def render_container(c: CtrDef) -> Obj:
    """A container spec with the defaults the API server fills in."""
    out: Obj = {}
    if c.args:
        out["args"] = list(c.args)
    if c.command:
        out["command"] = list(c.command)
    if c.env:
        out["env"] = render_env(c.env)
    out["image"] = c.image
    out["imagePullPolicy"] = "IfNotPresent"
    out["name"] = c.name
    if c.ports:
        out["ports"] = [{"containerPort": p, "name": n, "protocol": "TCP"} for n, p in c.ports]
    if c.probe:
        key = "readinessProbe" if c.probe.get("failureThreshold") == 1 else "startupProbe"
        out[key] = c.probe
    out["resources"] = {}
    if c.privileged:
        out["securityContext"] = {"privileged": True}
    out["terminationMessagePath"] = "/dev/termination-log"
    out["terminationMessagePolicy"] = "File"
    return out


def template_spec(d: DsDef, cdi: bool) -> Obj:
    """The pod template spec shared by every pod of `d`."""
    spec: Obj = {"containers": [render_container(c) for c in d.containers]}
    spec["dnsPolicy"] = "ClusterFirstWithHostNet" if d.host_network else "ClusterFirst"
    if d.host_network:
        spec["hostNetwork"] = True
    if d.host_pid:
        spec["hostPID"] = True
    if d.init:
        spec["initContainers"] = [render_container(c) for c in d.init]
    if d.node_selector:
        spec["nodeSelector"] = dict(d.node_selector)
    if d.priority_class:
        spec["priorityClassName"] = d.priority_class
    spec["restartPolicy"] = "Always"
    if d.gpu_runtime and cdi:
        spec["runtimeClassName"] = "nvidia"
    spec["schedulerName"] = "default-scheduler"
    spec["securityContext"] = {}
    spec["serviceAccount"] = d.service_account
    spec["serviceAccountName"] = d.service_account
    spec["terminationGracePeriodSeconds"] = 30
    if d.tolerations:
        spec["tolerations"] = list(d.tolerations)
    return spec
