"""The RDMA stack's own words in a job's log (data/job_errors.toml): rdma-core's verbs and
RDMA-CM calls failing in the perror() form, libibverbs finding no provider for a device,
perftest's and the verbs examples' queue pair that cannot move to RTR, an RDMA device listed
with an all-zero node GUID; a pod that gets its RDMA device from an SR-IOV VF pool is read as
one from the RDMA shared device plugin is; modprobe's "Module X not found" is a module that
cannot be loaded. Each on real lines from public reports, each beside a look-alike it must
not take."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.job_errors import job_error
from gpunode.kb import load_kb

#: Real lines (the report each is from) and the table entry that reads them.
REAL = {
    # SoftRoCE/rxe-dev#65, pmem/rpma#1934 (the call with its arguments), rdma-core#368
    "rdma_getaddrinfo: No such device": "rdma-call-errno",
    "Jul 21 18:01:43.916925 [524227] *ERROR* info.c:  63: rpma_info_new: rdma_getaddrinfo(node=127.0.0.1, "
    "service=(null), ai_flags=passive, ai_qp_type=IBV_QPT_RC, ai_port_space=RDMA_PS_TCP): No such device":
        "rdma-call-errno",
    "rdma_create_event_channel: No such device": "rdma-call-errno",
    # Mellanox/k8s-rdma-sriov-dev-plugin#33
    "rdma_create_ep: No such device": "rdma-call-errno",
    # nminoru/pib#2, ofiwg/libfabric#975, NVIDIA/caffe#590, NVIDIA/nccl-tests#41
    "libibverbs: Warning: no userspace device-specific driver found for /sys/class/infiniband_verbs/uverbs1":
        "verbs-no-provider",
    # horovod/horovod#1117: the same warning pasted without libibverbs' prefix
    "Warning: no userspace device-specific driver found for /sys/class/infiniband_verbs/uverbs0":
        "verbs-no-provider",
    # linux-rdma/perftest (with the QP number), rdma-core's ibv_rc_pingpong (without)
    "Failed to modify QP 59 to RTR": "perftest-modify-qp",
    "Failed to modify QP to RTR": "perftest-modify-qp",
    # openshift/sriov-network-device-plugin#20: ibv_devices' table row
    "    mlx5_2            0000000000000000": "verbs-device-zero-guid",
    # a job's shared memory and its RDMA path in wrappers' forms (test_field_shm_verbs_failed.py)
    # NVIDIA/nccl#342, NVIDIA/nccl#525 (NCCL before 2.12: include/shm.h)
    "include/shm.h:28 NCCL WARN Call to posix_fallocate failed: No space left on device": "shm-no-space",
    "[3] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device": "shm-no-space",
    # pytorch/ci-infra#490 (NCCL since 2.12: misc/shmutils.cc)
    "host:202016:202235 [0] misc/shmutils.cc:88 NCCL WARN Error: failed to extend /dev/shm/nccl-WU88OE to "
    "9637892 bytes, error: No space left on device (28)": "shm-no-space",
    # NCCL's verbs wrapper, old and 2.19+ forms (getainode/ainode#89, NVIDIA/nccl-tests#206)
    "misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with error Invalid argument":
        "verbs-call-errno",
    "ibv_modify_qp failed with 110 Connection timed out, on dev rocep1s0f0:1": "verbs-call-errno",
    "misc/ibvwrap.cc:309 NCCL WARN Call to ibv_modify_qp failed with 101 Network is unreachable, on dev "
    "usb4_rdma0:1, curr state INIT, next state RTR, local GID index 2": "verbs-call-errno",
    "misc/ibvwrap.cc:278 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory":
        "verbs-call-errno",
    # UCX's ucs_error("ibv_create_cq() failed: %m") (NVIDIA/cudf-spark#7632): a queue is pinned
    # host memory under the container's memlock limit (data/job_errors.toml verbs-queue-memlock)
    "ERROR mlx5_0: ibv_create_cq() failed: Cannot allocate memory.": "verbs-queue-memlock",
    # perftest's port check (k8snetworkplumbingwg/sriov-network-device-plugin#269)
    " Port number 1 state is Down": "perftest-port-down",
    " Port number 2 state is Init": "perftest-port-no-sm",
    # librdmacm's event (k8snetworkplumbingwg/sriov-network-device-plugin#342)
    "RDMA_CM_EVENT_ADDR_ERROR, error: -19": "rdma-cm-resolve-error",
}

#: Look-alikes: the same words with no failure in them.
HEALTHY = [
    # perftest's banner, ibv_devices' header and a device with its GUID
    " rdma_cm QPs     : OFF",
    "    device                 node GUID",
    "    mlx5_0            506b4b0300285028",
    # libibverbs' warnings about providers for devices the node may not have
    "libibverbs: Warning: couldn't load driver 'libmlx4-rdmav34.so': libmlx4-rdmav34.so: cannot open "
    "shared object file: No such file or directory",
    "libibverbs: Warning: couldn't open config directory '/etc/libibverbs.d'.",
    # the warning's words with no verbs device after them, or inside another word
    "Warning: no userspace device-specific driver found for this HCA in the image",
    "NoWarning: no userspace device-specific driver found for /sys/class/infiniband_verbs/uverbs0",
    # a call named in a trace, with no errno text after it
    "ibv_reg_mr(pd 0x23f8ec0, buf 0x7f88c7200000, size = 100, access_flags = 0x00000007)",
    "rdma_create_ep: start",
    # a kernel register dump
    "RAX: 0000000000000000 RBX: 0000000000000000",
    "Modify QP to RTR done",
    # a full disk of the program's own, not /dev/shm
    "write /var/lib/containerd/io.containerd.content.v1.content/ingest/x/data: no space left on device",
    "OSError: [Errno 28] No space left on device: '/data/checkpoints/step_100.pt'",
    # NCCL using its shared-memory transport, and df of a healthy /dev/shm
    "nccl-0:123:456 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct",
    "shm              64M     0   64M   0% /dev/shm",
    # NCCL's INFO retry of a queue pair move that may yet succeed
    "NCCL INFO Call to ibv_modify_qp failed with 110 Connection timed out, on dev rocep1s0f0:1, curr state "
    "INIT, next state RTR, retrying 1/7 after 1000 msec of sleep",
    # a verbs call that worked, a banner
    "ibv_create_cq() succeeded",
    " Port number 1 state is Active",
    "RDMA_CM_EVENT_ADDR_RESOLVED",
    "RDMA_CM_EVENT_ESTABLISHED",
]


@pytest.mark.parametrize("line", sorted(REAL))
def test_real_lines_are_read_to_their_entry(line: str) -> None:
    found = job_error(line)
    assert found is not None and found.id == REAL[line], found


@pytest.mark.parametrize("line", HEALTHY)
def test_look_alikes_are_not_read(line: str) -> None:
    assert job_error(line) is None


def _rdma_pod(resource: str, text: str) -> Case:
    """A pod that asks for an RDMA device only (an RDMA test between two pods), with its log."""
    return synthetic_case("x-verbs-words", [
        {"kind": "workload", "name": "perftest-server", "namespace": "default", "container": "app",
         "resources": {"limits": {resource: "1"}}, "state": "Running"},
        {"kind": "log", "object": {"kind": "Pod", "name": "perftest-server", "namespace": "default"},
         "text": text + "\n"},
    ])


_ZERO_GUID_LOG = ("ibv_devices\ndevice node GUID\n------ ----------------\n"
                  "mlx5_2 0000000000000000\nmlx5_0 506b4b0300285028")


@pytest.mark.parametrize("resource", ["openshift.io/mlxnics", "intel.com/mlnx_sriov_rdma", "rdma/hca"])
def test_a_pod_given_an_sriov_rdma_vf_is_read_for_the_rdma_layers(resource: str) -> None:
    assert top_pair(_rdma_pod(resource, _ZERO_GUID_LOG)) == ("rdma-links", "error_unclassified")


def test_a_pod_whose_vfs_all_have_guids_is_healthy() -> None:
    listing = "device node GUID\n------ ----------------\nmlx5_0 506b4b0300285028\nmlx5_1 506b4b0300285034"
    assert top_pair(_rdma_pod("openshift.io/mlxnics", listing)) is None


def test_a_pod_asking_for_an_unrelated_resource_is_not_read() -> None:
    # an extended resource that names no RDMA device: the pod is not one of the node's RDMA jobs
    assert top_pair(_rdma_pod("example.com/dongle", _ZERO_GUID_LOG)) is None


def test_rdma_cm_without_a_device_names_the_gpudirect_path_not_found() -> None:
    log = "rdma_client: start\nrdma_create_ep: No such device\nrdma_client: end -1"
    assert top_pair(_rdma_pod("rdma/hca", log)) == ("gpudirect-rdma", "error_not_found")


@pytest.mark.parametrize("line", [
    "FATAL: Module nvidia-peermem not found",  # NVIDIA/gpu-driver-container#1019
    "FATAL: Module nvidia_current not found.",  # MrMEEE/bumblebee-Old-and-abbandoned#309
    "modprobe: FATAL: Module nvidia-peermem not found in directory /lib/modules/6.8.0-1059-azure",
])
def test_modprobe_not_finding_a_module_is_a_module_load(line: str) -> None:
    assert load_kb().class_of(line) == "error_module_load"


@pytest.mark.parametrize("line", [
    "error: module github.com/foo not found",  # a Go module, not a kernel one
    "ModuleNotFoundError: No module named 'torch'",
])
def test_other_modules_not_found_are_not_kernel_modules(line: str) -> None:
    assert load_kb().class_of(line) != "error_module_load"


def _gpu_rdma_pod(text: str) -> Case:
    """A pod given a GPU and an RDMA device (an ib_write_bw --use_cuda test), with its log."""
    return synthetic_case("x-gpu-mr", [
        {"kind": "workload", "name": "rdma-cuda-0", "namespace": "default", "container": "app",
         "resources": {"limits": {"nvidia.com/gpu": "1", "rdma/rdma_shared_device_a": "1"}},
         "state": "Running"},
        {"kind": "log", "object": {"kind": "Pod", "name": "rdma-cuda-0", "namespace": "default"},
         "text": text + "\n"},
    ])


#: perftest --use_cuda's own lines (linux-rdma/perftest#126), with the errno the kernel gave
_CUDA_MR = ("initializing CUDA\ncuMemAlloc() of a 262144 bytes GPU buffer\n"
            "allocated GPU buffer address at 0000010013000000 pointer=0x10013000000\n"
            "Couldn't allocate MR\nFailed to create MR\nFailed to initialize RDMA contexts.\n"
            "ERRNO: {errno}.")


def test_gpu_memory_the_nic_cannot_pin_is_the_missing_peer_memory_client() -> None:
    assert top_pair(_gpu_rdma_pod(_CUDA_MR.format(errno="Bad address"))) == ("driver", "peermem_not_loaded")


def test_gpu_memory_refused_for_another_reason_is_not_peermem() -> None:
    # ENOMEM: the locked-memory limit, whatever the buffer (NVIDIA/nccl-tests#206)
    top = top_pair(_gpu_rdma_pod(_CUDA_MR.format(errno="Cannot allocate memory")))
    assert top is None or top[1] != "peermem_not_loaded"


def test_host_memory_refused_is_not_peermem() -> None:
    log = "Couldn't allocate MR\nFailed to create MR\nERRNO: Bad address."
    top = top_pair(_gpu_rdma_pod(log))
    assert top is None or top[1] != "peermem_not_loaded"


def _sriov_plugin_log(resource_list: str) -> Case:
    """The SR-IOV network device plugin's start, printing its resource list (a running plugin)."""
    return synthetic_case("x-sriov-selectors", [
        {"kind": "log", "component": "sriov-device-plugin", "text": (
            "I0408 19:30:32.222632    9355 main.go:44] resource manager reading configs\n"
            f"I0408 19:30:32.222815    9355 manager.go:98] ResourceList: [{resource_list}]\n"
            "I0408 19:30:32.222875    9355 main.go:60] Discovering host network devices\n")},
    ])


def test_a_selector_asking_for_an_rdma_module_as_pci_driver_pools_nothing() -> None:
    # k8snetworkplumbingwg/sriov-network-device-plugin#223: mlx5_ib never owns a PCI function
    resources = ("{ResourcePrefix: ResourceName:mlnx_sriov_rdma IsRdma:true Selectors:{Vendors:[15b3] "
                 "Devices:[1018] Drivers:[mlx5_ib] PfNames:[] LinkTypes:[] DDPProfiles:[]}}")
    assert top_pair(_sriov_plugin_log(resources)) == ("sriov-device-plugin", "sriov_no_resource_config")


def test_a_selector_asking_for_the_pci_driver_is_healthy() -> None:
    resources = ("{ResourcePrefix: ResourceName:mlnx_sriov_rdma IsRdma:true Selectors:{Vendors:[15b3] "
                 "Devices:[1016] Drivers:[mlx5_core] PfNames:[] LinkTypes:[] DDPProfiles:[]}}")
    assert top_pair(_sriov_plugin_log(resources)) is None
