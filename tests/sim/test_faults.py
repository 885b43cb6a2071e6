"""Each fault's bundle shows the signals (and the cascade) the real stack shows."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable

from sim_helpers import Bundle, condition, status_of

from gpunode.catalog import load_catalog
from gpunode.sim import FAULTS, list_scenarios, load_scenario

Build = Callable[[str], Bundle]
NODE = "gpu-wk-02"
OPERANDS = (
    "nvidia-device-plugin-daemonset-",
    "gpu-feature-discovery-",
    "nvidia-dcgm-exporter-",
    "nvidia-mig-manager-",
)


def _xml_gpus(bundle: Bundle, node: str = NODE) -> ET.Element:
    text = bundle.node_file(node, "cmd/nvidia-smi-q.xml").read_text()
    return ET.fromstring(text.split("\n", 2)[2])


def _alloc(bundle: Bundle, resource: str = "nvidia.com/gpu") -> str | None:
    value = bundle.node(NODE)["status"]["allocatable"].get(resource)
    return None if value is None else str(value)


def _assert_driver_cascade(bundle: Bundle) -> None:
    """Everything above the driver waits in its first init container; no GPU is advertised."""
    toolkit = bundle.pod_on(NODE, "nvidia-container-toolkit-daemonset-")
    assert "running" in status_of(toolkit, "driver-validation")["state"]
    assert (
        status_of(toolkit, "nvidia-container-toolkit-ctr")["state"]["waiting"]["reason"] == "PodInitializing"
    )
    assert "failed to run command 'nvidia-smi'" in bundle.log(toolkit, "driver-validation")
    for prefix in OPERANDS:
        pod = bundle.pod_on(NODE, prefix)
        assert pod["status"]["phase"] == "Pending", prefix
        assert "running" in status_of(pod, "toolkit-validation")["state"], prefix
        assert "waiting for nvidia container stack to be setup" in bundle.log(pod, "toolkit-validation")
    validator = bundle.pod_on(NODE, "nvidia-operator-validator-")
    assert "running" in status_of(validator, "driver-validation")["state"]
    assert status_of(validator, "cuda-validation")["state"]["waiting"]["reason"] == "PodInitializing"
    assert not bundle.pods_on(NODE, "nvidia-cuda-validator-")
    assert _alloc(bundle) is None
    assert "nvidia.com/gpu.product" not in bundle.node(NODE)["metadata"]["labels"]
    assert not bundle.node_file(NODE, "cmd/nvidia-smi-q.xml").exists()
    assert not bundle.node_file(NODE, "metrics/dcgm-exporter.prom").exists()
    assert not bundle.node_file(NODE, "files/run/nvidia/validations").exists()
    assert "NVRM: loading" not in bundle.node_file(NODE, "cmd/dmesg.txt").read_text()
    assert bundle.pod_on("gpu-wk-01", "nvidia-driver-daemonset-")["status"]["phase"] == "Running"


def _assert_driver_crashloop(bundle: Bundle, signature: str) -> None:
    driver = bundle.pod_on(NODE, "nvidia-driver-daemonset-")
    ctr = status_of(driver, "nvidia-driver-ctr")
    assert ctr["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert ctr["restartCount"] > 3 and ctr["lastState"]["terminated"]["exitCode"] == 1
    assert signature in bundle.log(driver, "nvidia-driver-ctr")
    assert signature in bundle.log(driver, "nvidia-driver-ctr", previous=True)
    _assert_driver_cascade(bundle)


def test_every_fault_has_a_bundled_scenario() -> None:
    names = {name for name, _ in list_scenarios()}
    for code in FAULTS:
        name = "fault-" + code.replace("_", "-")
        assert name in names, name
        scenario = load_scenario(name)
        assert [f.type for f in scenario.faults] == [code]
        assert scenario.faults[0].node == (NODE if FAULTS[code].scope == "node" else None)


def test_registry_entries_name_catalog_components() -> None:
    components = set(load_catalog().ids)
    assert len(FAULTS) == 44
    for code, kind in FAULTS.items():
        assert kind.code == code and kind.component in components and kind.scope in ("node", "cluster")
        assert kind.description


def test_kernel_headers_missing(build: Build) -> None:
    _assert_driver_crashloop(build("fault-kernel-headers-missing"), "Could not resolve Linux kernel version")


def test_demo_breaks_only_gpu_wk_02(build: Build) -> None:
    bundle = build("falcon-ai-broken")
    _assert_driver_crashloop(bundle, "Could not resolve Linux kernel version")
    healthy = bundle.node("gpu-wk-01")
    assert healthy["status"]["allocatable"]["nvidia.com/gpu"] == "8"
    assert bundle.node(NODE)["status"]["nodeInfo"]["kernelVersion"] == "5.15.0-139-generic"


def test_secure_boot_enabled(build: Build) -> None:
    bundle = build("fault-secure-boot-enabled")
    _assert_driver_crashloop(
        bundle, "modprobe: ERROR: could not insert 'nvidia': Key was rejected by service"
    )
    log = bundle.log(bundle.pod_on(NODE, "nvidia-driver-daemonset-"), "nvidia-driver-ctr")
    assert "ERROR: The kernel module failed to load. Secure boot is enabled on this system" in log
    assert "Secure boot enabled" in bundle.node_file(NODE, "cmd/dmesg.txt").read_text()


def test_nouveau_loaded(build: Build) -> None:
    bundle = build("fault-nouveau-loaded")
    _assert_driver_crashloop(bundle, "ERROR: Unable to load the kernel module 'nvidia.ko'.")
    lsmod = bundle.node_file(NODE, "cmd/lsmod.txt").read_text().splitlines()
    assert any(line.split()[0] == "nouveau" for line in lsmod[1:])
    assert "NVRM: No NVIDIA devices probed." in bundle.node_file(NODE, "cmd/dmesg.txt").read_text()


def test_driver_image_not_found(build: Build) -> None:
    bundle = build("fault-driver-image-not-found")
    driver = bundle.pod_on(NODE, "nvidia-driver-daemonset-")
    image = "nvcr.io/nvidia/driver:570.133.20-ubuntu24.04"
    assert driver["status"]["phase"] == "Pending"
    waiting = status_of(driver, "nvidia-driver-ctr")["state"]["waiting"]
    assert waiting == {"message": f'Back-off pulling image "{image}"', "reason": "ImagePullBackOff"}
    failed = [
        e["message"]
        for e in bundle.events("Failed")
        if e["involvedObject"]["name"] == driver["metadata"]["name"]
    ]
    assert (
        f'Failed to pull image "{image}": rpc error: code = NotFound desc = failed to pull and unpack image '
        f'"{image}": failed to resolve reference "{image}": {image}: not found' in failed
    )
    assert "Error: ErrImagePull" in failed
    labels = bundle.node(NODE)["metadata"]["labels"]
    assert labels["feature.node.kubernetes.io/system-os_release.VERSION_ID"] == "24.04"
    _assert_driver_cascade(bundle)


def test_driver_library_mismatch(build: Build) -> None:
    bundle = build("fault-driver-library-mismatch")
    driver = bundle.pod_on(NODE, "nvidia-driver-daemonset-")
    assert driver["status"]["phase"] == "Running" and condition(driver, "Ready")["status"] == "False"
    smi = bundle.node_file(NODE, "cmd/nvidia-smi.txt").read_text()
    assert smi.startswith(
        "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 570.133"
    )
    assert not bundle.node_file(NODE, "cmd/nvidia-smi-q.xml").exists()
    assert (
        "NVRM: API mismatch: the client has the version 570.133.20, but"
        in bundle.node_file(NODE, "cmd/dmesg.txt").read_text()
    )
    dcgm = bundle.pod_on(NODE, "nvidia-dcgm-exporter-")
    assert status_of(dcgm, "nvidia-dcgm-exporter")["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert "Driver/library version mismatch" in bundle.log(dcgm, "nvidia-dcgm-exporter")
    assert "Failed to initialize NVML: ERROR_LIB_RM_VERSION_MISMATCH." in bundle.log(
        bundle.pod_on(NODE, "nvidia-device-plugin-daemonset-"), "nvidia-device-plugin"
    )
    assert _alloc(bundle) == "0"
    assert "550.127.08" in bundle.node_file(NODE, "files/proc/driver/nvidia/version").read_text()


def test_fabric_manager_not_running(build: Build) -> None:
    bundle = build("fault-fabric-manager-not-running")
    assert {g.findtext("fabric/state") for g in _xml_gpus(bundle).findall("gpu")} == {"In Progress"}
    assert {g.findtext("fabric/state") for g in _xml_gpus(bundle, "gpu-wk-01").findall("gpu")} == {
        "Completed"
    }
    validator = bundle.pod_on(NODE, "nvidia-operator-validator-")
    assert status_of(validator, "cuda-validation")["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    cuda = bundle.pod_on(NODE, "nvidia-cuda-validator-")
    assert "error code system not yet initialized" in bundle.log(cuda, "cuda-validation")
    driver_log = bundle.log(bundle.pod_on(NODE, "nvidia-driver-daemonset-"), "nvidia-driver-ctr")
    assert "Fabric Manager failed to start" in driver_log
    assert bundle.pod_on(NODE, "nvidia-device-plugin-daemonset-")["status"]["phase"] == "Running"


def test_gpu_fallen_off_bus(build: Build) -> None:
    bundle = build("fault-gpu-fallen-off-bus")
    dmesg = bundle.node_file(NODE, "cmd/dmesg.txt").read_text()
    assert (
        "NVRM: Xid (PCI:0000:9a:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
        in dmesg
    )
    assert "fallen off the bus and is not responding to commands." in dmesg
    root = _xml_gpus(bundle)
    assert root.findtext("attached_gpus") == "7"
    assert "00000000:9A:00.0" not in {g.get("id") for g in root.findall("gpu")}
    plugin_log = bundle.log(bundle.pod_on(NODE, "nvidia-device-plugin-daemonset-"), "nvidia-device-plugin")
    assert (
        "XidCriticalError: Xid=79 on Device=GPU-" in plugin_log
        and "marking device as unhealthy." in plugin_log
    )
    node = bundle.node(NODE)["status"]
    assert (node["capacity"]["nvidia.com/gpu"], node["allocatable"]["nvidia.com/gpu"]) == ("8", "7")
    xid = [
        line
        for line in bundle.node_file(NODE, "metrics/dcgm-exporter.prom").read_text().splitlines()
        if line.startswith("DCGM_FI_DEV_XID_ERRORS{") and 'err_code="79"' in line
    ]
    assert len(xid) == 1 and xid[0].endswith(" 79") and 'pci_bus_id="00000000:9A:00.0"' in xid[0]


def test_uncorrectable_ecc(build: Build) -> None:
    bundle = build("fault-uncorrectable-ecc")
    gpu = next(g for g in _xml_gpus(bundle).findall("gpu") if g.get("id") == "00000000:3A:00.0")
    assert int(gpu.findtext("ecc_errors/volatile/dram_uncorrectable") or 0) > 0
    assert gpu.findtext("remapped_rows/remapped_row_pending") == "Yes"
    dmesg = bundle.node_file(NODE, "cmd/dmesg.txt").read_text()
    assert dmesg.index("NVRM: Xid (PCI:0000:3a:00): 48,") < dmesg.index("NVRM: Xid (PCI:0000:3a:00): 63,")
    assert _alloc(bundle) == "7"
    prom = bundle.node_file(NODE, "metrics/dcgm-exporter.prom").read_text().splitlines()
    assert any(line.startswith("DCGM_FI_DEV_XID_ERRORS{") and 'err_code="48"' in line for line in prom)
    remap = [line for line in prom if line.startswith('DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS{gpu="2"')]
    assert remap and float(remap[0].rsplit(" ", 1)[1]) > 0


def test_node_not_ready(build: Build) -> None:
    bundle = build("fault-node-not-ready")
    node = bundle.node(NODE)
    kubelet = [c for c in node["status"]["conditions"] if c["type"] != "NetworkUnavailable"]
    assert len(kubelet) == 4
    assert all(
        (c["status"], c["reason"], c["message"])
        == ("Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.")
        for c in kubelet
    )
    assert {(t["key"], t["effect"]) for t in node["spec"]["taints"]} == {
        ("node.kubernetes.io/unreachable", "NoSchedule"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
    }
    plugin = bundle.pod_on(NODE, "nvidia-device-plugin-daemonset-")
    assert plugin["status"]["phase"] == "Running" and condition(plugin, "Ready")["status"] == "False"
    assert not (bundle.root / "nodes" / NODE).exists()
    manifest = json.loads((bundle.root / "manifest.json").read_text())
    assert manifest["partial"] is True and any(NODE in w for w in manifest["warnings"])


def test_container_runtime_down(build: Build) -> None:
    bundle = build("fault-container-runtime-down")
    node = bundle.node(NODE)
    ready = condition(node, "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "KubeletNotReady")
    assert ready["message"].startswith("container runtime is down, PLEG is not healthy")
    assert "node.kubernetes.io/not-ready" in {t["key"] for t in node["spec"]["taints"]}
    assert condition(bundle.pod_on(NODE, "kube-proxy-"), "Ready")["status"] == "False"


def _assert_toolkit_cascade(bundle: Bundle) -> None:
    for prefix in (*OPERANDS, "nvidia-operator-validator-"):
        pod = bundle.pod_on(NODE, prefix)
        assert pod["status"]["phase"] == "Pending" and "podIP" not in pod["status"], prefix
        events = [
            e
            for e in bundle.events("FailedCreatePodSandBox")
            if e["involvedObject"]["name"] == pod["metadata"]["name"]
        ]
        assert events and 'no runtime for "nvidia" is configured' in events[0]["message"]
    assert _alloc(bundle) is None
    markers = bundle.node_file(NODE, "files/run/nvidia/validations")
    assert (markers / "driver-ready").exists() and not (markers / "toolkit-ready").exists()


def test_containerd_not_patched(build: Build) -> None:
    bundle = build("fault-containerd-not-patched")
    toolkit = bundle.pod_on(NODE, "nvidia-container-toolkit-daemonset-")
    assert (
        status_of(toolkit, "nvidia-container-toolkit-ctr")["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    )
    assert "unable to setup runtime: unable to load config" in bundle.log(
        toolkit, "nvidia-container-toolkit-ctr"
    )
    config = bundle.node_file(NODE, "files/etc/containerd/config.toml").read_text()
    assert "runtimes.nvidia" not in config
    assert not bundle.node_file(NODE, "files/etc/containerd/conf.d/99-nvidia.toml").exists()
    _assert_toolkit_cascade(bundle)


def test_runtime_handler_missing(build: Build) -> None:
    bundle = build("fault-runtime-handler-missing")
    toolkit = bundle.pod_on(NODE, "nvidia-container-toolkit-daemonset-")
    assert condition(toolkit, "Ready")["status"] == "True"
    assert "Completed 'setup' for containerd" in bundle.log(toolkit, "nvidia-container-toolkit-ctr")
    drop_in = bundle.node_file(NODE, "files/etc/containerd/conf.d/99-nvidia.toml").read_text()
    assert "containerd.runtimes.nvidia]" in drop_in
    _assert_toolkit_cascade(bundle)


def test_device_plugin_zero_gpus(build: Build) -> None:
    bundle = build("fault-device-plugin-zero-gpus")
    plugin = bundle.pod_on(NODE, "nvidia-device-plugin-daemonset-")
    assert "runtimeClassName" not in plugin["spec"]
    assert condition(plugin, "Ready")["status"] == "True"
    log = bundle.log(plugin, "nvidia-device-plugin")
    for line in (
        "Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND.",
        "If this is a GPU node, did you set the docker default runtime to `nvidia`?",
        "No devices found. Waiting indefinitely.",
    ):
        assert line in log
    node = bundle.node(NODE)
    assert node["status"]["capacity"]["nvidia.com/gpu"] == "0" and _alloc(bundle) == "0"
    assert node["metadata"]["labels"]["nvidia.com/gpu.count"] == "8"
    assert _xml_gpus(bundle).findtext("attached_gpus") == "8"


def test_mig_strategy_mismatch(build: Build) -> None:
    bundle = build("fault-mig-strategy-mismatch")
    plugin = bundle.pod_on(NODE, "nvidia-device-plugin-daemonset-")
    assert status_of(plugin, "nvidia-device-plugin")["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert "Invalid configuration detected for mig-strategy=single:" in bundle.log(
        plugin, "nvidia-device-plugin"
    )
    labels = bundle.node(NODE)["metadata"]["labels"]
    assert labels["nvidia.com/mig.strategy"] == "single" and labels["nvidia.com/mig.config"] == "all-balanced"
    gpus = _xml_gpus(bundle).findall("gpu")
    assert {g.findtext("mig_mode/current_mig") for g in gpus} == {"Enabled"}
    assert len(gpus[0].findall("mig_devices/mig_device")) == 4
    assert _alloc(bundle) == "0"


def test_mofed_build_failed(build: Build) -> None:
    bundle = build("fault-mofed-build-failed")
    mofed = bundle.pod_on(NODE, "mofed-ubuntu22.04-")
    assert mofed["status"]["phase"] == "Running" and condition(mofed, "Ready")["status"] == "False"
    log = bundle.log(mofed, "mofed-container")
    assert (
        "No OFED driver found for kernel 5.15.0-1071-nvidia" in log
        and "Failed to build mlnx-ofed-kernel DEB" in log
    )
    assert bundle.node(NODE)["metadata"]["labels"]["network.nvidia.com/operator.mofed.wait"] == "true"
    assert not bundle.pods_on(NODE, "rdma-shared-dp-ds-")
    assert _alloc(bundle, "rdma/rdma_shared_device_a") is None
    ncp = bundle.items("nicclusterpolicies")[0]
    assert ncp["status"]["state"] == "notReady" and condition(ncp, "OFEDDriverReady")["status"] == "False"
    rdma_ds = next(d for d in bundle.items("daemonsets") if d["metadata"]["name"] == "rdma-shared-dp-ds")
    assert rdma_ds["status"]["desiredNumberScheduled"] == 1


def test_rdma_selector_no_devices(build: Build) -> None:
    bundle = build("fault-rdma-selector-no-devices")
    log = bundle.log(bundle.pod_on(NODE, "rdma-shared-dp-ds-"), "rdma-shared-dp")
    assert "Warning: no Rdma Devices were found for resource rdma_shared_device_a" in log
    assert 'exposing "0" devices' in log
    assert _alloc(bundle, "rdma/rdma_shared_device_a") == "0"


def test_csi_registration_failed(build: Build) -> None:
    bundle = build("fault-csi-registration-failed")
    csi = bundle.pod_on(NODE, "csi-nfs-node-")
    assert status_of(csi, "node-driver-registrar")["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    log = bundle.log(csi, "node-driver-registrar")
    assert "Received NotifyRegistrationStatus call: &RegistrationStatus{PluginRegistered:false," in log
    assert "Registration process failed with error:" in log
    csinode = next(c for c in bundle.items("csinodes") if c["metadata"]["name"] == NODE)
    assert csinode["spec"]["drivers"] is None


def test_dcgm_hostengine_unreachable(build: Build) -> None:
    bundle = build("fault-dcgm-hostengine-unreachable")
    pod = bundle.pod_on(NODE, "nvidia-dcgm-exporter-")
    env = {e["name"]: e.get("value") for e in pod["spec"]["containers"][0]["env"]}
    assert env["DCGM_REMOTE_HOSTENGINE_INFO"] == "nvidia-dcgm:5555"
    log = bundle.log(pod, "nvidia-dcgm-exporter")
    assert "Attempting to connect to remote hostengine at nvidia-dcgm:5555" in log
    assert "Failed to connect to remote hostengine" in log
    assert not bundle.node_file(NODE, "metrics/dcgm-exporter.prom").exists()
    assert bundle.node_file("gpu-wk-01", "metrics/dcgm-exporter.prom").exists()


def test_logging_agent_oomkilled(build: Build) -> None:
    bundle = build("fault-logging-agent-oomkilled")
    ctr = status_of(bundle.pod_on(NODE, "fluent-bit-"), "fluent-bit")
    assert ctr["state"]["waiting"]["reason"] == "CrashLoopBackOff" and ctr["restartCount"] == 12
    assert (ctr["lastState"]["terminated"]["reason"], ctr["lastState"]["terminated"]["exitCode"]) == (
        "OOMKilled",
        137,
    )


def test_nfd_not_deployed(build: Build) -> None:
    bundle = build("fault-nfd-not-deployed")
    names = {d["metadata"]["name"] for d in bundle.items("daemonsets")}
    assert not any("node-feature-discovery" in n for n in names)
    assert not any("node-feature-discovery" in p["metadata"]["name"] for p in bundle.items("pods"))
    labels = bundle.node(NODE)["metadata"]["labels"]
    assert not any(k.startswith(("feature.node.kubernetes.io/", "nvidia.com/")) for k in labels)
    driver_ds = next(
        d for d in bundle.items("daemonsets") if d["metadata"]["name"] == "nvidia-driver-daemonset"
    )
    assert (
        driver_ds["status"]["desiredNumberScheduled"] == 0
        and driver_ds["status"]["currentNumberScheduled"] == 0
    )
    assert not bundle.pods_on(NODE, "nvidia-")
    policy = bundle.items("clusterpolicies")[0]
    assert policy["status"]["state"] == "notReady"
    error = condition(policy, "Error")
    assert (error["status"], error["reason"]) == ("True", "NFDLabelsMissing")
    assert condition(policy, "Ready")["reason"] == "Error"
    assert not (bundle.root / "nodes").exists()


def test_gpu_operator_crashloop(build: Build) -> None:
    bundle = build("fault-gpu-operator-crashloop")
    operator = next(p for p in bundle.items("pods") if p["metadata"]["labels"].get("app") == "gpu-operator")
    ctr = status_of(operator, "gpu-operator")
    assert ctr["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    last = ctr["lastState"]["terminated"]
    assert (last["reason"], last["exitCode"]) == ("Error", 2)
    assert "panic: runtime error" in bundle.log(operator, "gpu-operator", previous=True)
    assert bundle.pod_on(NODE, "nvidia-driver-daemonset-")["status"]["phase"] == "Running"
    deployment = next(d for d in bundle.items("deployments") if d["metadata"]["name"] == "gpu-operator")
    assert deployment["status"]["unavailableReplicas"] == 1


def test_clusterpolicy_invalid(build: Build) -> None:
    bundle = build("fault-clusterpolicy-invalid")
    policy = bundle.items("clusterpolicies")[0]
    error = condition(policy, "Error")
    assert (error["status"], error["reason"]) == ("True", "ReconcileFailed")
    assert 'ConfigMap "time-slicing-config"' in error["message"]
    operator = next(p for p in bundle.items("pods") if p["metadata"]["labels"].get("app") == "gpu-operator")
    assert 'failed to get ConfigMap \\"time-slicing-config\\"' in bundle.log(operator, "gpu-operator")
    assert condition(bundle.pod_on(NODE, "nvidia-device-plugin-daemonset-"), "Ready")["status"] == "True"


def test_links_are_collected_on_every_gpu_node_in_real_shapes(build: Build) -> None:
    """The interconnect faults write every GPU node's links as collect stores them; the
    real parsers read them: the healthy node's 18 links up on each GPU, 4 NDR ports ACTIVE,
    each GPU's rail NIC at PIX; the faulty node's GPU 3 with links 3 and 5 inactive."""
    from gpunode.parse.infiniband import parse_sysfs_dump
    from gpunode.parse.nvlink import parse_nvlink_status
    from gpunode.parse.topology import parse_topo_matrix

    bundle = build("fault-nvlink-inactive")
    healthy = parse_nvlink_status(bundle.node_file("gpu-wk-01", "cmd/nvidia-smi-nvlink-s.txt").read_text())
    assert [sum(link.active for link in g.links) for g in healthy] == [18] * 8
    ports = parse_sysfs_dump(bundle.node_file("gpu-wk-01", "cmd/sysfs-infiniband.txt").read_text()).ports
    assert [(p.state, p.rate_gbps, p.speed) for p in ports] == [("ACTIVE", 400.0, "NDR")] * 4
    matrix = parse_topo_matrix(bundle.node_file("gpu-wk-01", "cmd/nvidia-smi-topo-m.txt").read_text())
    assert matrix is not None and matrix.nvlinks("GPU0")["GPU1"] == 18
    assert matrix.nearest_nic("GPU2") == ("mlx5_1", "PIX")
    faulty = parse_nvlink_status(bundle.node_file(NODE, "cmd/nvidia-smi-nvlink-s.txt").read_text())
    assert [n.link for n in faulty[3].links if not n.active] == [3, 5]


def test_fabric_manager_version_mismatch(build: Build) -> None:
    """The driver image's own Fabric Manager refuses the driver's version (gpu-driver-container
    #735) and the container exits (#908): the driver crash-loops with that line last."""
    bundle = build("fault-fabric-manager-version-mismatch")
    _assert_driver_crashloop(bundle, "fabric manager NVIDIA GPU driver interface version 575.57.08 don't "
                             "match with driver version 570.133.20.")
    log = bundle.log(bundle.pod_on(NODE, "nvidia-driver-daemonset-"), "nvidia-driver-ctr")
    assert log.index("Starting NVIDIA fabric manager daemon...") < log.index("don't match with driver")


def test_peermem_not_loaded(build: Build) -> None:
    """The peermem container crash-loops on modprobe, the kernel names the ib_core symbols it
    refused (gpu-operator#2868), and lsmod has no nvidia_peermem; the driver itself runs."""
    bundle = build("fault-peermem-not-loaded")
    driver = bundle.pod_on(NODE, "nvidia-driver-daemonset-")
    assert status_of(driver, "nvidia-driver-ctr")["state"].get("running") is not None
    assert status_of(driver, "nvidia-peermem-ctr")["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    log = bundle.log(driver, "nvidia-peermem-ctr", previous=True)
    assert "modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument" in log
    dmesg = bundle.node_file(NODE, "cmd/dmesg.txt").read_text()
    assert "nvidia_peermem: disagrees about version of symbol ib_register_peer_memory_client" in dmesg
    assert "nvidia_peermem: module uses symbols" not in dmesg
    modules = {line.split()[0] for line in bundle.node_file(NODE, "cmd/lsmod.txt").read_text().splitlines()}
    assert "nvidia" in modules and "ib_core" in modules and "nvidia_peermem" not in modules
    healthy = bundle.node_file("gpu-wk-01", "cmd/lsmod.txt").read_text()
    assert healthy.startswith("Module") and "\nnvidia_peermem " in healthy


def test_imex_faults_read_as_the_collector_reads_the_host(build: Build) -> None:
    """Every GPU node of the domain has IMEX as collect reads it (cmd/imex.txt): the packaged
    unit enabled, the node list naming both nodes, channel 0, the daemon; gpu-wk-02 breaks one."""
    from gpunode.parse.imex import parse_imex_state

    for scenario, broken in (("fault-imex-not-running", "running"),
                             ("fault-imex-nodes-config-missing", "peers"),
                             ("fault-imex-channel-missing", "channels")):
        bundle = build(scenario)
        ips = [a["address"] for n in ("gpu-wk-01", "gpu-wk-02")
               for a in bundle.node(n)["status"]["addresses"] if a["type"] == "InternalIP"]
        healthy = parse_imex_state(bundle.node_file("gpu-wk-01", "cmd/imex.txt").read_text())
        assert healthy is not None and healthy.running and healthy.enabled and healthy.installed
        assert list(healthy.peers) == ips and healthy.channels == ("channel0",)
        faulty = parse_imex_state(bundle.node_file(NODE, "cmd/imex.txt").read_text())
        assert faulty is not None and not getattr(faulty, broken)
        # read in the driver pod, which shares the host's PID namespace as the operator's manifest says
        assert bundle.pod_on(NODE, "nvidia-driver-daemonset-")["spec"]["hostPID"] is True
        assert faulty.nodes_config == "/etc/nvidia-imex/nodes_config.cfg"


def test_nccl_socket_fallback(build: Build) -> None:
    """The training pod on gpu-wk-02 came without its RDMA resource and runs NCCL at INFO: its
    log says NET/IB found no device and sockets carry the collectives; its peers keep theirs."""
    bundle = build("fault-nccl-socket-fallback")
    pod = bundle.pod_on(NODE, "llm-pretrain-")
    ctr = pod["spec"]["containers"][0]
    assert {e["name"]: e["value"] for e in ctr["env"]}["NCCL_DEBUG"] == "INFO"
    assert "rdma/rdma_shared_device_a" not in ctr["resources"]["limits"]
    log = bundle.log(pod, "trainer")
    assert "NCCL INFO NET/IB : No device found." in log and "NCCL INFO Using network Socket" in log
    assert "NET/IB : Using" not in log
    for other in bundle.pods_on("gpu-wk-01", "llm-pretrain-"):
        assert "rdma/rdma_shared_device_a" in other["spec"]["containers"][0]["resources"]["limits"]
    ports = bundle.node_file(NODE, "cmd/sysfs-infiniband.txt").read_text()
    assert "mlx5_0/ports/1/state:4: ACTIVE" in ports
