"""The layer an error line names, read by general rules on bundles built from real-shaped
evidence: the toolkit CLI relaying the driver's NVML or CUDA answer names the driver; a
hostPath volume refused at the platform's driver install root names the driver; another pod
of a failing component tells why the component fails. Each line comes from a public report
(its address beside it)."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import diagnose_case, top_pair, top_root_cause

from gpunode.catalog import load_catalog


def _case(*evidence: dict[str, Any], platform: str = "generic", **extra: Any) -> Case:
    raw = {"id": "x-named", "source": "https://example.org/x", "title": "t", "platform": platform,
           "evidence": list(evidence), "expect": {"healthy": True}, **extra}
    return msgspec.convert(raw, Case)


def test_the_toolkit_cli_relaying_nvml_or_cuda_names_the_driver() -> None:
    named = load_catalog().named_in
    cli = "nvidia-container-cli: initialization error: "
    # VirtualGL/virtualgl#10, NVIDIA/libnvidia-container#37
    assert named(cli + "nvml error: insufficient permissions") == "driver"
    assert named(cli + "cuda error: no cuda-capable device is detected") == "driver"
    # the CLI's own failures stay the toolkit's
    assert named("nvidia-container-cli: mount error: file creation failed: /x/run/nvidia-persistenced/"
                 "socket: no such device or address") == "container-toolkit"


def _mount_refused(path: str) -> dict[str, Any]:
    return {"kind": "event", "component": "device-plugin", "type": "Warning", "reason": "FailedMount",
            "message": 'MountVolume.SetUp failed for volume "nvidia" : hostPath type check failed: '
                       f"{path} is not a directory"}


PLUGIN_CREATING = {"kind": "pod-state", "component": "device-plugin", "state": "ContainerCreating"}


def test_a_hostpath_at_the_platforms_driver_root_names_the_driver() -> None:
    # GoogleCloudPlatform/container-engine-accelerators#213: GKE installs the driver there, so
    # the folder missing is no driver installed (the catalogued driver_not_loaded, not a class)
    found = top_pair(_case(PLUGIN_CREATING, _mount_refused("/home/kubernetes/bin/nvidia"), platform="gke"))
    assert found == ("driver", "driver_not_loaded")


def test_a_hostpath_elsewhere_stays_with_the_pod_that_mounts_it() -> None:
    found = top_pair(_case(PLUGIN_CREATING, _mount_refused("/var/lib/kubelet/device-plugins"),
                           platform="gke"))
    assert found is not None and found[0] == "device-plugin"
    # GKE's root is not another platform's: there, that folder is nothing of the driver's
    found = top_pair(_case(PLUGIN_CREATING, _mount_refused("/home/kubernetes/bin/nvidia")))
    assert found is not None and found[0] == "device-plugin"


def test_another_pod_of_a_failing_component_says_why() -> None:
    # awslabs/data-on-eks#474: the toolkit's hook fails in the validator's pods; the state is
    # on the operator-validator pod, the kubelet's event on another validator pod
    hook = ("Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: "
            "runc create failed: unable to start container process: error during container init: error "
            "running hook #0: error running hook: exit status 1, stdout: , stderr: /usr/local/nvidia/toolkit/"
            "nvidia-container-cli.real: /lib64/libc.so.6: version `GLIBC_2.27' not found (required by "
            "/usr/local/nvidia/toolkit/libnvidia-container.so.1): unknown")
    state = {"kind": "pod-state", "component": "validator", "container": "toolkit-validation", "init": True,
             "state": "Init:CrashLoopBackOff", "restarts": 2}
    event = {"kind": "event", "component": "validator", "type": "Warning", "reason": "Failed",
             "message": hook}
    host = {"driver_mode": "host"}
    assert top_pair(_case(state, event, cluster=host)) == ("container-toolkit", "error_version_mismatch")
    assert top_pair(_case(state, cluster=host)) == ("validator", "init_failed")


def _journal(name: str, text: str) -> dict[str, Any]:
    return {"kind": "node-cmd", "name": name, "text": text}


def test_a_host_journal_naming_a_device_node_of_the_driver_blames_the_driver() -> None:
    # mattshma/bigdata#125: the kubelet's GPU manager finds no nvidia-uvm device node
    journal = ("Failed to start gpuManager stat /dev/nvidiactl: no such file or directory\n"
               "Failed to start gpuManager stat /dev/nvidia-uvm: no such file or directory\n")
    report = diagnose_case(_case(_journal("journal-kubelet.txt", journal)))
    top = top_root_cause(report, "gpu-wk-01")
    assert top is not None and top.component == "driver"
    assert top.decisive is not None and top.decisive.source.endswith("journal-kubelet.txt:2")


def test_a_journal_line_about_its_own_config_or_naming_no_one_stays_unread() -> None:
    # NVIDIA/nvidia-docker#787: dockerd refuses its daemon.json, whose values name the nvidia runtime
    own = ("unable to configure the Docker daemon with file /etc/docker/daemon.json: the following "
           "directives are specified as a flag and in the configuration file: runtimes: (from flag: "
           "[nvidia], from file: map[nvidia:map[path:nvidia-container-runtime runtimeArgs:[]]])\n")
    # it stays its owner's: the runtime that will not start on its own configuration
    found = top_pair(_case(_journal("journal-runtime.txt", own)))
    assert found == ("container-runtime", "error_config_invalid")
    plain = ('E1103 10:11:44.999106 2817 pod_workers.go:1298] "Error syncing pod, skipping" '
             'err="context canceled"\n')
    assert top_pair(_case(_journal("journal-kubelet.txt", plain))) is None


def test_the_uvm_module_names_the_driver() -> None:
    # NVIDIA/nvidia-docker#480
    line = ("nvidia-docker | 2017/09/27 22:08:44 Error: Could not load UVM kernel module. "
            "Is nvidia-modprobe installed?")
    assert load_catalog().named_in(line) == "driver"


def test_nccls_ib_transport_failing_in_its_own_setup_names_the_gpudirect_path() -> None:
    """NVIDIA/nccl#1573: NCCL's IB transport reading a RoCE GID type in a pod; a port or
    completion error (NVIDIA/nccl#426) stays the links', a lower layer, and the INFO line
    of a fallback to sockets names no one."""
    named = load_catalog().named_in
    assert named("WARN NET/IB: read failed in ncclIbRoceGetVersionNum: Invalid argument") == "gpudirect-rdma"
    assert named("-worker-1:946:988 [0] transport/net_ib.cc:839 NCCL WARN NET/IB : Got completion with "
                 "error 12, opcode 1, len 0, vendor err 129") == "rdma-links"
    assert named("train-0:123:456 [0] NCCL INFO NET/IB : No device found.") is None


def test_a_sandbox_that_a_named_layer_stops_explains_the_runtimes_state() -> None:
    # aws/amazon-vpc-cni-k8s#3104: containerd's nvidia handler points at a binary not installed,
    # so no sandbox starts (the CNI's neither) and the kubelet reads the runtime as not ready
    sandbox = ("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to create containerd "
               "task: failed to create shim task: OCI runtime create failed: fork/exec "
               "/usr/bin/nvidia-container-runtime: no such file or directory: unknown")
    not_ready = {"kind": "node-condition", "type": "Ready", "status": "False", "reason": "KubeletNotReady",
                 "message": "container runtime network not ready: NetworkReady=false "
                            "reason:NetworkPluginNotReady message:Network plugin returns error: "
                            "cni plugin not initialized"}
    event = {"kind": "event", "object": {"kind": "Pod", "name": "aws-node", "namespace": "kube-system"},
             "type": "Warning", "reason": "FailedCreatePodSandBox", "message": sandbox}
    report = diagnose_case(_case(not_ready, event, cluster={"driver_mode": "host"}))
    node = next(n for n in report.nodes if n.name == "gpu-wk-01")
    assert [(r.component, r.cause) for r in node.root_causes] == [("container-toolkit", "error_file_state")]
    runtime = next(c for c in node.components if c.component == "container-runtime")
    assert runtime.blocked_by == ("container-toolkit",)
    # without the sandbox error the runtime's state stands by itself
    assert top_pair(_case(not_ready, cluster={"driver_mode": "host"})) == ("container-runtime",
                                                                      "container_runtime_down")


def test_a_component_explains_what_any_of_its_problems_claims() -> None:
    # NVIDIA/gpu-operator#149: NFD is not deployed (its primary cause); the PCI label it never
    # set is what keeps the driver's DaemonSet (and every operand) off the node
    found = top_pair(_case(
        {"kind": "node-labels", "labels": {"feature.node.kubernetes.io/pci-10de.present": None,
                                           "nvidia.com/gpu.present": None}},
        {"kind": "pod-missing", "component": "nfd"},
        {"kind": "pod-missing", "component": "driver"}))
    assert found == ("nfd", "nfd_not_deployed")


DRIVER_RUNNING = {"kind": "pod-state", "component": "driver", "container": "nvidia-driver-ctr",
                  "state": "Running"}


def _driver_log(text: str) -> dict[str, Any]:
    return {"kind": "log", "component": "driver", "container": "nvidia-driver-ctr", "text": text}


def test_a_running_driver_that_waits_after_an_error_is_degraded() -> None:
    # substratusai/runbooks#37: GKE's installer finds no driver for the L4, then waits for ever
    log = ("I0625 05:36:32.745276    5389 installer.go:424] Getting the R525 GPU driver version\n"
           "E0625 05:36:32.767916    5389 install.go:452] failed to check driver compatibility: failed "
           "to get fallback driver: failed to download artifact gpu_R525_version: not found\n"
           "Waiting for GPU driver libraries to be available.\n")
    found = top_pair(_case(DRIVER_RUNNING, _driver_log(log), platform="gke"))
    assert found is not None and found[0] == "driver"


def test_a_dependency_a_pod_waits_on_in_init_is_followed_down() -> None:
    # GoogleCloudPlatform/container-engine-accelerators#407: installation disabled, the
    # installer waits, the device plugin above it stays in init
    log = "GPU driver auto installation is disabled.\nWaiting for GPU driver libraries to be available.\n"
    plugin = {"kind": "pod-state", "component": "device-plugin", "state": "Init:0/1"}
    found = top_pair(_case(DRIVER_RUNNING, _driver_log(log), plugin, platform="gke"))
    assert found is not None and found[0] == "driver"
    # the wait alone, with no one stuck above it and no word before it that no driver will
    # come, is the installer at work; "auto installation is disabled" is that word, and it
    # decides on its own while the installer waits (test_field_gke_driver_installer)
    waiting = "Waiting for GPU driver libraries to be available.\n"
    assert top_pair(_case(DRIVER_RUNNING, _driver_log(waiting), platform="gke")) is None


def test_an_idle_wait_is_no_failure() -> None:
    log = ('time="2025-05-12T14:25:13Z" level=error msg="error reading config, retrying"\n'
           'time="2025-05-12T14:25:14Z" level=info msg="Waiting for signal"\n')
    toolkit = {"kind": "log", "component": "container-toolkit", "container": "nvidia-container-toolkit-ctr",
               "text": log}
    assert top_pair(_case(toolkit)) is None


def _mig_manager(report: Any) -> Any:
    node = next(n for n in report.nodes if n.name == "gpu-wk-01")
    return next(c for c in node.components if c.component == "mig-manager")


def test_a_state_label_that_says_failed_is_the_components_own_verdict() -> None:
    # NVIDIA/gpu-operator#2874: the MIG manager's apply failed and it waits for the next change
    log = {"kind": "log", "component": "mig-manager", "container": "nvidia-mig-manager",
           "text": "Error applying MIG configuration with hooks: error initializing NVML: "
                   "ERROR_LIBRARY_NOT_FOUND\n"}
    running = {"kind": "pod-state", "component": "mig-manager", "state": "Running"}
    failed = {"kind": "node-labels", "labels": {"nvidia.com/mig.config.state": "failed"}}
    mig = _mig_manager(diagnose_case(_case(log, running, failed)))
    assert (mig.status.value, mig.cause) == ("failed", "error_device")
    # the same log under a label that says success is an apply that was retried since
    done = {"kind": "node-labels", "labels": {"nvidia.com/mig.config.state": "success"}}
    assert _mig_manager(diagnose_case(_case(log, running, done))).status.value == "ok"


def test_a_crash_that_said_nothing_reads_the_runtime_journal_below() -> None:
    # cri-o/cri-o#7880: CRI-O stops mounting the RHEL subscription; the driver container
    # cannot install its packages and crash-loops with no log of its own in the bundle
    journal = _journal("journal-runtime.txt", "Failed to mount subscriptions, skipping entry in "
                       "/usr/share/containers/mounts.conf: saving data to container filesystem\n")
    crash = {"kind": "pod-state", "component": "driver", "container": "nvidia-driver-ctr",
             "state": "CrashLoopBackOff"}
    crio = {"runtime": "crio"}
    assert top_pair(_case(journal, crash, cluster=crio)) == ("container-runtime", "error_unclassified")
    # the same journal under a healthy node is no finding: only a silent crash reads it
    assert top_pair(_case(journal, cluster=crio)) is None


#: containerd building the plugin validator's spec from the device plugin's allocation
#: (NVIDIA/gpu-operator#377, GPU Operator 1.11 on a host driver).
_STALE_ROOT = ('failed to generate container '
               '"007d48a1ac46028b08d2a25a97d47e7c7908970765866697678cb61500c1b1b9" spec: failed to generate '
               "spec: lstat /run/nvidia/driver/dev/nvidiactl: no such file or directory")


def _validator_cannot_start(driver_mode: str) -> Case:
    state = {"kind": "pod-state", "component": "validator", "container": "plugin-validation",
             "state": "Init:CreateContainerError", "message": _STALE_ROOT}
    return _case(state, cluster={"driver_mode": driver_mode})


def test_a_device_node_under_a_driver_root_the_host_driver_does_not_use_names_the_device_plugin() -> None:
    """With the driver on the host, the operator's driver root is not where its device nodes
    are: the spec that names them there came from a stale allocation of the device plugin."""
    found = top_pair(_validator_cannot_start("host"))
    assert found is not None and found[0] == "device-plugin"


def test_the_same_device_node_missing_under_the_drivers_own_root_names_the_driver() -> None:
    found = top_pair(_validator_cannot_start("operator"))
    assert found is not None and found[0] == "driver"


def test_the_masked_proc_capabilities_directory_names_the_toolkit_other_proc_files_the_driver() -> None:
    named = load_catalog().named_in
    relay = ("error running hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected "
             "mode as 'legacy'\n")
    # NVIDIA/nvidia-container-toolkit#198: the CLI inside a kind node, whose /proc/driver/nvidia is
    # the tmpfs the outer CLI mounted (libnvidia-container src/nvc_mount.c, mount_procfs)
    masked = ("nvidia-container-cli: mount error: stat failed: /proc/driver/nvidia/capabilities: no such "
              "file or directory")
    assert named(masked + ": unknown") == "container-toolkit"
    assert named(relay + masked + ": unknown") == "container-toolkit"
    # look-alike: a file the mask keeps, missing from the loaded driver (NVIDIA/nvidia-docker#1068)
    assert named("nvidia-container-cli: mount error: open failed: /var/lib/docker/overlay2/x/merged/proc/"
                 "driver/nvidia/params/version/registry: no such file or directory: unknown") == "driver"
    # a directory whose name only starts like it is none of the capabilities
    assert named("stat failed: /proc/driver/nvidia/capabilitiesx: no such file or directory") == "driver"
