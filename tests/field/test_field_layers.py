"""The decisive line read by general rules, on bundles built from real-shaped evidence:
a state the knowledge base matched by its signature is still a state its component's
own words explain; a line that matches a catalogued cause of its component takes that
cause; the kernel's module loader is read in kmod's words too. Each line comes from a
public report (its address beside it) or the format its program writes."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from case import Case
from scoreboard import diagnose_case, top_root_cause


def _case(*evidence: dict[str, Any], **extra: Any) -> Case:
    raw = {"id": "x-layers", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "evidence": list(evidence), "expect": {"healthy": True}, **extra}
    return msgspec.convert(raw, Case)


def _top(case: Case) -> tuple[str, str, str] | None:
    top = top_root_cause(diagnose_case(case), case.node)
    return (top.component, top.cause, top.title) if top else None


NOT_POSTING = {"kind": "node-condition", "type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
               "message": "Kubelet stopped posting node status."}


def test_a_node_not_posting_status_is_explained_by_the_kubelet_journal() -> None:
    # kubernetes-sigs/kubespray#8535: the kubelet refuses to start on a stale CPU manager checkpoint
    journal = ('Feb 11 14:20:19 n1-mac kubelet[175049]: E0211 14:20:19.409903  175049 kubelet.go:1384] '
               '"Failed to start ContainerManager" err="start cpu manager error: could not restore state '
               'from checkpoint: configured policy \\"static\\" differs from state checkpoint policy '
               '\\"none\\", please drain this node and delete the CPU manager checkpoint file '
               '\\"/var/lib/kubelet/cpu_manager_state\\" before restarting Kubelet"\n')
    found = _top(_case(NOT_POSTING, {"kind": "node-cmd", "name": "journal-kubelet.txt", "text": journal}))
    # the kubelet's own advice to delete a file: the file is in the wrong state
    assert found is not None and found[:2] == ("kubelet", "error_file_state")
    assert "cpu_manager_state" in found[2]


def test_a_crashing_component_whose_line_is_catalogued_gets_that_cause() -> None:
    # kubernetes-sigs/node-feature-discovery#2005: the API server refuses the worker's NodeFeature
    line = ('E0108 09:14:53.489084       1 main.go:73] "error while running" err="failed to advertise '
            'features (via CRD API): failed to create NodeFeature object \\"kind-worker2\\": '
            'nodefeatures.nfd.k8s-sigs.io \\"kind-worker2\\" is forbidden: cannot set blockOwnerDeletion if '
            'an ownerReference refers to a resource you can\'t set finalizers on: , <nil>"\n')
    found = _top(_case(
        {"kind": "pod-state", "component": "nfd", "container": "worker", "state": "CrashLoopBackOff"},
        {"kind": "log", "component": "nfd", "container": "worker", "previous": True, "text": line}))
    assert found is not None and found[:2] == ("nfd", "nfd_rbac_forbidden")


def test_a_plugin_that_marks_its_gpus_unhealthy_says_why_it_advertises_none() -> None:
    # NVIDIA/k8s-device-plugin#33 (1.x plugin's log format)
    line = ("2018/02/27 16:43:50 Warning: GPU with UUID GPU-edae6d5d-6698-fb8d-2c6b-2a791224f089 is too old "
            "to support healtchecking with error: %!s(MISSING). Marking it unhealthy\n")
    found = _top(_case({"kind": "log", "component": "device-plugin", "container": "nvidia-device-plugin",
                        "text": line},
                       {"kind": "node-capacity", "resources": {"nvidia.com/gpu": "0"}}))
    assert found is not None and found[:2] == ("device-plugin", "gpus_unhealthy")


def test_nvml_version_mismatch_in_a_cdi_error_is_the_driver_library_mismatch() -> None:
    # Azure/AKS#5871: the toolkit's CDI spec generator cannot initialise NVML
    message = ("failed to create containerd task: failed to create shim task: OCI runtime create failed: "
               "could not apply required modification to OCI specification: error modifying OCI spec: "
               "failed to create the automatic CDI modifier: failed to generate CDI spec for mode \"auto\": "
               "failed to construct device spec generators: failed to initialize NVML: "
               "Driver/library version mismatch")
    found = _top(_case({"kind": "event", "object": {"kind": "Pod", "name": "gpu-workload"}, "type": "Warning",
                        "reason": "Failed", "message": message}))
    assert found is not None and found[:2] == ("driver", "driver_library_mismatch")


def test_an_unsatisfied_cuda_requirement_of_any_kind_is_the_driver_s() -> None:
    # NVIDIA/nvidia-docker#895: the image's NVIDIA_REQUIRE_CUDA fails on its brand condition
    message = ('OCI runtime create failed: container_linux.go:348: starting container process caused '
               '"process_linux.go:402: container init caused \\"process_linux.go:385: running prestart '
               'hook 1 caused \\\\\\"error running hook: exit status 1, stdout: , stderr: exec command: '
               '[/usr/bin/nvidia-container-cli --load-kmods configure --ldconfig=@/sbin/ldconfig.real '
               '--device=all --compute --utility --require=cuda>=10.0 brand=tesla,driver>=384,driver<385 '
               '--pid=7469 /var/lib/docker/overlay2/0c3d/merged]\\\\\\\\nnvidia-container-cli: '
               'requirement error: '
               'unsatisfied condition: brand = tesla\\\\\\\\n\\\\\\"\\"": unknown.')
    found = _top(_case({"kind": "event", "object": {"kind": "Pod", "name": "cuda-smi"}, "type": "Warning",
                        "reason": "Failed", "message": message}))
    assert found is not None and found[:2] == ("driver", "cuda_driver_too_old")


def _hook_failure(stderr: str) -> Case:
    message = ("Error: failed to create containerd task: failed to create shim task: OCI runtime create "
               "failed: runc create failed: unable to start container process: error during container init: "
               "error running hook #0: error running hook: exit status 1, stdout: , stderr: "
               + stderr + ": unknown")
    return _case({"kind": "event", "component": "device-plugin", "type": "Warning", "reason": "Failed",
                  "message": message},
                 {"kind": "pod-state", "component": "device-plugin", "state": "CrashLoopBackOff"})


def test_device_rules_the_cgroup_v2_filter_rejects_are_the_hook_s_cgroup_error() -> None:
    # siderolabs/extensions#101: the kernel's BPF loader rejects the rebuilt device filter
    found = _top(_hook_failure(
        "nvidia-container-cli: mount error: failed to add device rules: unable to generate new device filter "
        "program from existing programs: unable to create new device filters program: load program: invalid "
        "argument: last insn is not an exit or jmp"))
    assert found is not None and found[:2] == ("container-toolkit", "container_cli_cgroup_error")


def test_a_container_error_that_names_the_device_cgroup_is_the_hook_s_cgroup_error() -> None:
    # libnvidia-container's "container error" whose detail names the cgroup it could not find
    # (a cgroup v2 host and an old toolkit, reported on Docker, k3s and Kubernetes alike)
    found = _top(_hook_failure(
        "nvidia-container-cli: container error: failed to get device cgroup mount path: no cgroup filesystem "
        "mounted for the devices subsytem in mountinfo file: unknown"))
    assert found is not None and found[:2] == ("container-toolkit", "container_cli_cgroup_error")


def test_a_container_error_on_a_file_lookup_is_not_a_cgroup_error() -> None:
    # pyxis/enroot: the container error is a permission refusal on a file in the rootfs
    found = _top(_hook_failure(
        "nvidia-container-cli: container error: file lookup failed: /proc/55900/root/mnt/enroot/data/c/etc/"
        "debian_version: permission denied"))
    assert found is not None and found[1] != "container_cli_cgroup_error"


def test_device_rules_the_environment_may_not_set_are_a_permission_refusal() -> None:
    # NVIDIA/libnvidia-container#154: an unprivileged LXC may not query the BPF device filters
    found = _top(_hook_failure(
        "nvidia-container-cli: mount error: failed to add device rules: unable to find any existing device "
        "filters attached to the cgroup: bpf_prog_query(BPF_CGROUP_DEVICE) failed: operation not permitted"))
    assert found is not None and found[:2] == ("container-toolkit", "error_permission_denied")


def test_a_compile_error_in_the_driver_s_own_sources_is_a_kernel_it_does_not_fit() -> None:
    # NVIDIA/gpu-operator#264: headers were found (the compiler reached the sources), the sources do not fit
    log = ("Installing Linux kernel headers...\nCompiling NVIDIA driver kernel modules...\n"
           "Unable to open the file '/lib/modules/4.18.0-305.19.1.el8_4.x86_64/proc/version' (No such file "
           "or directory)./usr/src/nvidia-450.80.02/kernel/nvidia-drm/nvidia-drm-gem-user-memory.c: "
           "In function "
           "'__nv_drm_gem_user_memory_prime_get_sg_table':\n"
           "/usr/src/nvidia-450.80.02/kernel/nvidia-drm/nvidia-drm-gem-user-memory.c:63:48: error: passing "
           "argument 1 of 'drm_prime_pages_to_sg' from incompatible pointer type "
           "[-Werror=incompatible-pointer-types]\n")
    found = _top(_case({"kind": "pod-state", "component": "driver", "state": "CrashLoopBackOff"},
                       {"kind": "log", "component": "driver", "container": "nvidia-driver-ctr",
                        "previous": True, "text": log}))
    assert found is not None and found[:2] == ("driver", "driver_kernel_incompatible")


def test_kmod_refusing_the_nvidia_module_in_the_kernel_log_is_the_driver_s_failure() -> None:
    # bottlerocket-os/bottlerocket#4218: lockdown=integrity, driverdog's modprobe gets EPERM
    dmesg = ("[    5.879228] driverdog[2088]: 23:10:41 [ERROR] '/usr/bin/modprobe' failed - stderr: "
             "modprobe: ERROR: could not insert 'nvidia': Operation not permitted\n"
             "[    5.881035] driverdog[2088]: modprobe: ERROR: could not insert 'nvidia_uvm': Operation not "
             "permitted\n")
    found = _top(_case({"kind": "node-cmd", "name": "dmesg.txt", "text": dmesg}))
    assert found is not None and found[:2] == ("driver", "kernel_lockdown_blocks_module")


def test_a_storage_over_rdma_module_the_kernel_refuses_is_mofed_s() -> None:
    # Mellanox/doca-driver-build#79: DOCA's nvme_rdma against the inbox NVMe core
    found = _top(_case({"kind": "node-cmd", "name": "dmesg.txt",
                        "text": "[  301.2] nvme_rdma: Unknown symbol nvme_init_ctrl_finish (err -22)\n"}))
    assert found is not None and found[:2] == ("ofed", "error_module_load")


def test_a_loader_that_names_the_module_it_could_not_load_is_read_as_that_module_s_refusal() -> None:
    # siderolabs/talos#7174 (Talos's module controller, its quotes escaped as in its log) and
    # systemd's modules-load ("Failed to insert module '%s': %m")
    talos = ('[talos] controller failed {"controller": "runtime.KernelModuleSpecController", "error": '
             '"error loading module \\"nvidia\\": load nvidia failed: key was rejected by service"}\n')
    systemd = ("[    6.2] systemd-modules-load[512]: Failed to insert module 'nvidia': "
               "Key was rejected by service\n")
    mlx = "[    6.2] systemd-modules-load[512]: Failed to insert module 'mlx5_ib': Invalid argument\n"
    # systemd's words for an NVIDIA module whose key the kernel rejects are also the catalogued
    # Secure Boot refusal's, which wins over the line's class
    for text, owner, cause in ((talos, "driver", "error_module_load"),
                               (systemd, "driver", "secure_boot_enabled"),
                               (mlx, "ofed", "error_module_load")):
        found = _top(_case({"kind": "node-cmd", "name": "dmesg.txt", "text": text}))
        assert found is not None and found[:2] == (owner, cause), text


def _driver_looks_up(os_image: str, kernel: str) -> Case:
    log = (f"Installing NVIDIA driver kernel modules...\n"
           f"E: Unable to locate package linux-objects-nvidia-535-server-{kernel}\n"
           f"E: Couldn't find any package by glob 'linux-objects-nvidia-535-server-{kernel}'\n")
    return _case({"kind": "node-info", "fields": {"osImage": os_image, "kernelVersion": kernel}},
                 {"kind": "pod-state", "component": "driver", "state": "CrashLoopBackOff"},
                 {"kind": "log", "component": "driver", "container": "nvidia-driver-ctr", "previous": True,
                  "text": log})


def test_a_driver_image_that_finds_no_package_for_a_foreign_os_kernel_names_the_os() -> None:
    # NVIDIA/gpu-operator#557 (Debian 11), siderolabs/talos#8402: the Ubuntu image looks up
    # precompiled packages named after a kernel no Ubuntu ships
    found = _top(_driver_looks_up("Talos (v1.6.6)", "6.1.51-talos"))
    assert found is not None and found[:2] == ("driver", "unsupported_os")
    # on Ubuntu the same lookup is a package not published for that kernel, not the OS
    found = _top(_driver_looks_up("Ubuntu 22.04.4 LTS", "5.15.0-1063-nvidia"))
    assert found is not None and found[:2] != ("driver", "unsupported_os")


def _smi_q(driver: str, brand: str) -> Case:
    text = ("==============NVSMI LOG==============\n\n"
            f"Driver Version                            : {driver}\n"
            "CUDA Version                              : 12.2\n\n"
            "Attached GPUs                             : 8\n"
            "GPU 00000000:00:16.0\n"
            "    Product Name                          : NVIDIA A10G\n"
            f"    Product Brand                         : {brand}\n")
    return _case({"kind": "node-cmd", "name": "nvidia-smi.txt", "text": text})


def test_gpu_fields_nvml_cannot_read_on_a_gsp_release_are_the_gsp_firmware_s() -> None:
    # NVIDIA/dcgm-exporter#319: g5.48xlarge, R535, nvidia-smi -q fields read Unknown Error
    found = _top(_smi_q("535.161.08", "Unknown Error"))
    assert found is not None and found[:2] == ("driver", "gsp_firmware_unresponsive")
    found = _top(_smi_q("470.239.06", "Unknown Error"))
    assert found is None or found[1] != "gsp_firmware_unresponsive"
    assert _top(_smi_q("535.161.08", "NVIDIA")) is None


def test_a_module_the_loader_loaded_alarms_nobody() -> None:
    found = _top(_case({"kind": "node-cmd", "name": "dmesg.txt",
                        "text": "[    5.9] systemd-modules-load[512]: Inserted module 'nvidia_uvm'\n"}))
    assert found is None


def test_a_running_controller_refused_on_its_own_objects_gets_the_catalogued_cause() -> None:
    # kubernetes-sigs/node-feature-discovery#2445: nfd-master may not update a status subresource
    line = ('E0225 07:13:16.839896       1 updater-pool.go:110] "failed to update NodeFeatureGroup, '
            'queueing for retry" err="failed to update NodeFeatureGroup object: '
            'nodefeaturegroups.nfd.k8s-sigs.io '
            '\\"image-compat-test-scheduler-pod-nnksq\\" is forbidden: User '
            '\\"system:serviceaccount:node-feature-discovery:nfd-master\\" cannot update resource '
            '\\"nodefeaturegroups/status\\" in API group \\"nfd.k8s-sigs.io\\" in the namespace '
            '\\"node-feature-discovery\\""\n')
    report = diagnose_case(_case({"kind": "log", "component": "nfd", "container": "master", "text": line}))
    causes = [(rc.component, rc.cause) for rc in report.cluster.root_causes]
    causes += [(rc.component, rc.cause) for n in report.nodes for rc in n.root_causes]
    assert ("nfd", "nfd_rbac_forbidden") in causes
    assert all(cause != "error_permission_denied" for _, cause in causes)


def _rejected(reason: str, message: str, name: str = "gpu-job-worker-0") -> Case:
    return _case({"kind": "event", "object": {"kind": "Pod", "name": name}, "type": "Warning",
                  "reason": reason, "message": message})


def test_a_pod_the_kubelet_s_device_manager_refused_for_lack_of_devices_is_the_kubelet_s() -> None:
    # kubernetes/kubernetes#130145: the device manager's stale record of allocated GPUs
    found = _top(_rejected("UnexpectedAdmissionError",
                           "Pod Allocate failed due to requested number of devices unavailable for "
                           "nvidia.com/gpu. Requested:1, Available: 0, which is unexpected"))
    assert found is not None and found[:2] == ("kubelet", "error_resource_exhausted")


def test_a_pod_the_topology_manager_refused_is_the_kubelet_s() -> None:
    # pytorch/ci-infra#696: single-numa-node policy, GPUs free only across sockets
    found = _top(_rejected("TopologyAffinityError", "Resources cannot be allocated with Topology locality",
                           name="runner-26mj5-workflow"))
    assert found is not None and found[:2] == ("kubelet", "error_resource_exhausted")


def test_no_healthy_devices_of_another_plugin_s_resource_is_not_the_nvidia_plugin_s() -> None:
    # kubernetes/kubernetes#118559: the kubelet re-admits a running pod before its plugin registered
    found = _top(_rejected("UnexpectedAdmissionError",
                           "Allocate failed due to no healthy devices present; cannot allocate unhealthy "
                           "devices devices.kubevirt.io/kvm, which is unexpected",
                           name="virt-launcher-vmi-1"))
    assert found is not None and found[:2] == ("kubelet", "error_unclassified")
    # the same words about the NVIDIA resource: the plugin has no healthy GPU to give
    found = _top(_rejected("UnexpectedAdmissionError",
                           "Allocate failed due to no healthy devices present; cannot allocate unhealthy "
                           "devices nvidia.com/gpu, which is unexpected"))
    assert found is not None and found[:2] == ("device-plugin", "gpu_admission_failed")


def test_a_plugin_s_own_refusal_in_an_rpc_error_is_read_for_its_class() -> None:
    # NVIDIA/k8s-device-plugin README (time-slicing, failRequestsGreaterThanOne): code Unknown
    # carries the plugin's own error, not a lost connection
    found = _top(_rejected("UnexpectedAdmissionError",
                           "Allocate failed due to rpc error: code = Unknown desc = request for "
                           "'nvidia.com/gpu: 2' too large: maximum request size for shared resources is 1, "
                           "which is unexpected",
                           name="gpu-pod"))
    assert found is not None and found[:2] == ("device-plugin", "error_resource_exhausted")


def _operator_log(text: str, **state: Any) -> Case:
    evidence: list[dict[str, Any]] = [{"kind": "log", "component": "gpu-operator",
                                       "container": "gpu-operator", "previous": bool(state), "text": text}]
    if state:
        evidence.append({"kind": "pod-state", "component": "gpu-operator", **state})
    return _case(*evidence)


def test_a_crash_looping_operator_is_named_by_the_error_that_ended_it() -> None:
    # NVIDIA/gpu-operator#689: a Go runtime fatal error ends the controller
    case = _operator_log(
        '{"level":"info","ts":1711652616.703655,"logger":"controllers.ClusterPolicy",'
        '"msg":"Kubernetes version detected","version":"v1.27.10-gke.1055000"}\n'
        "fatal error: concurrent map read and map write\n\ngoroutine 216 [running]:\n",
        state="CrashLoopBackOff")
    found = _top(case)
    assert found is not None and found[:2] == ("gpu-operator", "error_unclassified")
    assert found[2] == "gpu-operator exits: fatal error: concurrent map read and map write"


def test_a_running_operator_whose_log_ends_in_a_lasting_error_is_degraded() -> None:
    # NVIDIA/gpu-operator#688: the upgrade controller cannot build its state, and says nothing after
    line = ('{"level":"error","ts":"2024-03-27T06:00:03.292Z","logger":"controllers.Upgrade",'
            '"msg":"Failed to build node upgrade state for pod","pod":{"namespace":"gpu-operator",'
            '"name":"nvidia-gpu-driver-ubuntu20.04-797bd4457c-x4czx"},'
            '"error":"unable to get node : resource name may not be empty"}\n')
    found = _top(_operator_log(line))
    assert found is not None and found[:2] == ("gpu-operator", "error_unclassified")
    assert "unable to get node" in found[2]


@pytest.mark.parametrize("last", [
    # a write that lost a race, retried at once
    '{"level":"error","msg":"Reconciler error","error":"Operation cannot be fulfilled on '
    'clusterpolicies.nvidia.com \\"cluster-policy\\": the object has been modified; please apply your '
    'changes to the latest version"}',
    # the API server unreachable for now
    '{"level":"error","msg":"Reconciler error","error":"Get \\"https://10.96.0.1:443/api\\": '
    'dial tcp 10.96.0.1:443: i/o timeout"}',
    # an object deleted since
    '{"level":"error","msg":"failed to update node","error":"nodes \\"gpu-wk-09\\" not found"}',
    # logged as an error, then the controller went on
    '{"level":"error","msg":"Reconciler error","error":"failed to create DaemonSet: boom"}\n'
    '{"level":"info","msg":"ClusterPolicy is ready as all resources have been successfully reconciled"}',
])
def test_a_running_operator_whose_last_error_heals_stays_healthy(last: str) -> None:
    assert _top(_operator_log(last + "\n")) is None


def _nic_policy(*states: dict[str, str]) -> Case:
    policy = {"apiVersion": "mellanox.com/v1alpha1", "kind": "NicClusterPolicy",
              "metadata": {"name": "nic-cluster-policy"},
              "spec": {"ofedDriver": {"image": "doca-driver", "repository": "nvcr.io/nvidia/mellanox",
                                      "version": "25.04-0.2.2.0-0", "forcePrecompiled": True}},
              "status": {"state": "notReady", "appliedStates": list(states)}}
    return _case({"kind": "cluster-object", "resource": "nicclusterpolicies", "object": policy})


def test_a_policy_state_the_operator_could_not_apply_is_its_own_failure() -> None:
    # Mellanox/network-operator#1661: state-OFED in error, the registry's name does not resolve
    message = ("failed to create k8s objects from manifest: failed to render objects: ForcePrecompiled is "
               "enabled and tag list failed: 25.04-0.2.2.0-0-5.15.0-130-generic-ubuntu22.04-amd64, failed "
               'to list tags: Get "https://nvcr.io/v2/": dial tcp: lookup nvcr.io: i/o timeout')
    report = diagnose_case(_nic_policy({"name": "state-multus-cni", "state": "ready"},
                                       {"name": "state-OFED", "state": "error", "message": message}))
    top = report.cluster.root_causes[0]
    assert (top.component, top.cause) == ("network-operator", "error_unreachable")
    assert top.decisive is not None and "appliedStates[state-OFED]" in top.decisive.source


def test_a_policy_waiting_for_its_pods_is_only_their_sum() -> None:
    report = diagnose_case(_nic_policy({"name": "state-OFED", "state": "notReady"}))
    assert all(rc.cause == "nicclusterpolicy_not_ready" for rc in report.cluster.root_causes)



def _driver_stops_updating_packages(kernel: str) -> tuple[str, str, str] | None:
    log = ("========== NVIDIA Software Installer ==========\n\n"
           f"Starting installation of NVIDIA driver branch 535 for Linux kernel version {kernel}\n\n"
           "Stopping NVIDIA persistence daemon...\nUnloading NVIDIA driver kernel modules...\n"
           "Unmounting NVIDIA driver rootfs...\nUpdating the package cache...\n")
    return _top(_case(
        {"kind": "node-info", "fields": {"osImage": "Ubuntu 22.04.4 LTS", "kernelVersion": kernel}},
        {"kind": "pod-state", "component": "driver", "state": "CrashLoopBackOff", "restarts": 4},
        {"kind": "log", "component": "driver", "container": "nvidia-driver-ctr", "previous": True,
         "text": log}))


def test_a_driver_container_crashing_on_a_fips_kernel_lacks_its_headers() -> None:
    # Ubuntu's FIPS kernels are published only in the Ubuntu Pro archive (NVIDIA/gpu-operator#152, #457)
    found = _driver_stops_updating_packages("5.15.0-1040-azure-fips")
    assert found is not None and found[:2] == ("driver", "kernel_headers_missing")


def test_a_driver_container_crashing_on_a_public_kernel_is_not_blamed_on_headers() -> None:
    found = _driver_stops_updating_packages("5.15.0-1040-azure")
    assert found is not None and found[:2] == ("driver", "crash_loop")
