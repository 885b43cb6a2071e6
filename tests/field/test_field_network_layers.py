"""The network, interconnect and hardware layers a GPU workload's error names, read by general
rules on bundles built from real-shaped evidence: the SR-IOV CNI failing on a VF's settings on
the host link names the links, failing to find a VF at the device the SR-IOV plugin allocated
names the plugin's pool; NCCL's verbs wrapper failing any call names the GPUDirect RDMA path;
CUDA's uncorrectable ECC error is the GPU's own report. Each line comes from a public report
(its address beside it); each rule has a look-alike it must not fire on."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import top_pair

from gpunode.catalog import load_catalog

HOST = {"driver_mode": "host"}


def _case(*evidence: dict[str, Any], platform: str = "generic", **extra: Any) -> Case:
    raw = {"id": "x-network", "source": "https://example.org/x", "title": "t", "platform": platform,
           "evidence": list(evidence), "expect": {"healthy": True}, **extra}
    return msgspec.convert(raw, Case)


def _sandbox_failed(message: str) -> dict[str, Any]:
    return {"kind": "event", "object": {"kind": "Pod", "name": "rdma-job", "namespace": "default"},
            "type": "Warning", "reason": "FailedCreatePodSandBox", "message": message}


def _job_log(text: str) -> dict[str, Any]:
    return {"kind": "log", "object": {"kind": "Pod", "name": "nccl-job", "namespace": "default"},
            "text": text}


_SANDBOX = ("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for "
            'sandbox "8be0ea041e5f00ec8cd4fe2756fc85b23ae5d691ceb4c1fd51afc9229ca6566a": '
            "[default/rdma-job:sriov-net]: ")


def test_the_sriov_cni_refusing_a_vf_setting_names_the_links() -> None:
    named = load_catalog().named_in
    # k8snetworkplumbingwg/sriov-cni#303: the VF's VLAN refused by the PF's driver
    line = ('error adding container to network "sriovnet1": SRIOV-CNI failed to configure VF "failed to '
            'set vf 4 vlan configuration - id 100, qos 0 and proto 802.1q: invalid argument"')
    assert named(line) == "rdma-links"
    found = top_pair(_case(_sandbox_failed(_SANDBOX + line)))
    assert found is not None and found[0] == "rdma-links"
    # the InfiniBand CNI's own words were read already (NVIDIA/network-operator#1825)
    assert named('InfiniBand SRIOV CNI failed to configure VF "failed to set link state"') == "rdma-links"


def test_the_sriov_cni_finding_no_vf_at_the_allocated_device_names_the_plugin() -> None:
    named = load_catalog().named_in
    # k8snetworkplumbingwg/sriov-cni#206 (a PF in the pool), openshift/sriov-network-operator#340
    for address in ("0000:41:00.0", "0000:65:11.0"):
        line = ('error adding container to network "sriov": SRIOV-CNI failed to load netconf: LoadConf(): '
                f'failed to get VF information: "lstat /sys/bus/pci/devices/{address}/physfn/net: no such '
                'file or directory"')
        assert named(line) == "sriov-device-plugin"
        found = top_pair(_case(_sandbox_failed(_SANDBOX + line)))
        assert found == ("sriov-device-plugin", "error_file_state")


def test_a_network_attachment_without_a_device_names_no_plugin() -> None:
    # sriov-network-device-plugin#258: no device ID reached the CNI (the attachment names no
    # resource), which is the network's definition, not the plugin's pool
    line = ('error adding container to network "sriov-network": SRIOV-CNI failed to load netconf: '
            "LoadConf(): VF pci addr is required")
    assert load_catalog().named_in(line) is None
    assert top_pair(_case(_sandbox_failed(_SANDBOX + line))) is None
    # the pod network's own CNI failing (Calico with an expired token) names no GPU-stack layer
    calico = (_SANDBOX + 'plugin type="calico" failed (add): error getting ClusterInformation: connection is '
              "unauthorized: Unauthorized")
    assert top_pair(_case(_sandbox_failed(calico))) is None


def test_nccls_verbs_wrapper_failing_any_call_names_the_gpudirect_path() -> None:
    # NVIDIA/nccl-tests#185 and #227: a queue pair NCCL could not take to the peer
    for said in ("Network is unreachable", "Connection timed out"):
        log = ("dgxh100-3:2152176:2152299 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB "
               "eth0:10.0.0.3<0>\n"
               "dgxh100-3:2152176:2152299 [0] misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed "
               f"with error {said}\n")
        assert top_pair(_case(_job_log(log))) == ("gpudirect-rdma", "error_unreachable")
    # the memory registration read before stays the same path
    line = "NCCL WARN Call to ibv_reg_mr_iova2 failed with error Bad address"
    assert load_catalog().named_in(line) == "gpudirect-rdma"


def test_a_jobs_own_nccl_warning_and_verbs_progress_name_no_link() -> None:
    # the job's own CUDA error (out of memory) and NCCL's INFO lines about its verbs setup
    log = ("node-1:88:157 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.0.0.1<0>\n"
           "node-1:88:159 [0] NCCL INFO transport/net_ib.cc:985 Ib Alloc Size 181568 pointer 0x7f4ff8024000\n"
           "node-1:88:88 [0] enqueue.cc:1672 NCCL WARN Cuda failure 'out of memory'\n")
    assert top_pair(_case(_job_log(log))) is None


def test_cudas_uncorrectable_ecc_error_in_a_job_is_the_gpus_own_report() -> None:
    # a vLLM engine failing at start on a GPU whose nvidia-smi counted 301 uncorrectable DRAM
    # errors (PyTorch 2.8's AcceleratorError), and the driver API's name for the same error
    for line in ("torch.AcceleratorError: CUDA error: uncorrectable ECC error encountered",
                 "RuntimeError: CUDA driver error: CUDA_ERROR_ECC_UNCORRECTABLE"):
        log = "INFO 06-06 17:22:50 Loading model weights\n" + line + "\n"
        found = top_pair(_case(_job_log(log), cluster=HOST))
        assert found == ("gpu-hardware", "uncorrectable_ecc")


def test_a_jobs_own_cuda_error_and_a_clean_ecc_count_say_nothing_of_the_gpu() -> None:
    # the job's own faults (CUDA's illegal access, a device-side assert) are no hardware report
    for line in ("RuntimeError: CUDA error: an illegal memory access was encountered",
                 "RuntimeError: CUDA error: device-side assert triggered"):
        assert top_pair(_case(_job_log(line + "\n"), cluster=HOST)) is None
    # nvidia-smi's table in a job's log, its uncorrectable count at zero
    smi = ("| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n"
           "|   0  NVIDIA A100-SXM4-80GB          On  | 00000000:07:00.0   Off |                    0 |\n")
    assert top_pair(_case(_job_log(smi), cluster=HOST)) is None


def _cmd(name: str, text: str) -> dict[str, Any]:
    return {"kind": "node-cmd", "name": name, "text": text}


#: ibv_devinfo of a ConnectX VF the SR-IOV setup left without a node GUID, beside its PF
_DEVINFO = """hca_id: mlx5_0
        transport:                      InfiniBand (0)
        node_guid:                      506b:4b03:0028:5028
        port:   1
                state:                  PORT_ACTIVE (4)
                link_layer:             Ethernet

hca_id: mlx5_2
        transport:                      InfiniBand (0)
        node_guid:                      0000:0000:0000:0000
        port:   1
                state:                  PORT_ACTIVE (4)
                link_layer:             Ethernet
"""
#: the kernel's line for perftest over RDMA-CM (-R) faulting in the verbs library on that VF
#: (linux-rdma/perftest#64; MLNX_OFED's known issue 1047616: a zero node GUID may crash RDMA-CM
#: applications)
_VERBS_SEGFAULT = ("[ 1883.526301] ib_read_bw[46826]: segfault at 18 ip 00007f7c7f0dfe64 sp 00007fff4e973b10 "
                   "error 4 in libibverbs.so.1.14.50.0[7f7c7f0d0000+20000]\n")


def test_an_rdma_library_crash_on_a_device_without_node_guid_is_the_links() -> None:
    found = top_pair(_case(_cmd("ibv_devinfo.txt", _DEVINFO), _cmd("dmesg.txt", _VERBS_SEGFAULT)))
    assert found is not None and found[0] == "rdma-links"


def test_a_vf_without_guid_or_a_crash_alone_says_nothing() -> None:
    # an unused VF without a GUID (an InfiniBand VF gets one when a pod is given it)
    assert top_pair(_case(_cmd("ibv_devinfo.txt", _DEVINFO))) is None
    # the same crash where every device has its GUID is the program's own
    with_guids = _DEVINFO.replace("0000:0000:0000:0000", "506b:4b03:0028:5034")
    assert top_pair(_case(_cmd("ibv_devinfo.txt", with_guids), _cmd("dmesg.txt", _VERBS_SEGFAULT))) is None
    # a crash in another library (the C library) beside a VF without a GUID
    libc = _VERBS_SEGFAULT.replace("libibverbs.so.1.14.50.0", "libc-2.31.so")
    assert top_pair(_case(_cmd("ibv_devinfo.txt", _DEVINFO), _cmd("dmesg.txt", libc))) is None


def _daemon_log(text: str) -> dict[str, Any]:
    return {"kind": "log", "component": "compute-domain-daemon", "container": "compute-domain-daemon",
            "text": text}


#: the daemon's own lines (cmd/compute-domain-daemon: klog.Infof("numNodes: %d, nodes seen: %d")
#: while the ComputeDomain's status lists fewer nodes than numNodes, then "IP set changed")
_INSERTED = ("I0415 16:14:28.038085       1 computedomain.go:212] Successfully inserted/updated node in CD "
             "(nodeinfo: &{node-b 10.42.3.138 0 NotReady})\n")


def test_a_domain_daemon_that_ends_short_of_nodes_is_not_ready() -> None:
    log = _INSERTED + "I0415 16:14:28.038098       1 computedomain.go:275] numNodes: 4, nodes seen: 3\n"
    assert top_pair(_case(_daemon_log(log))) == ("compute-domain-daemon", "compute_domain_not_ready")


def test_a_domain_daemon_whose_peers_joined_since_is_healthy() -> None:
    # the same wait at start, then every node seen and the nodes pushed to the IMEX daemon
    log = (_INSERTED + "I0415 16:14:28.038098       1 computedomain.go:275] numNodes: 2, nodes seen: 1\n"
           "I0415 16:14:31.102340       1 computedomain.go:290] IP set changed: previous: map[]; new: "
           "map[10.42.3.138:{} 10.42.5.17:{}]\n"
           "I0415 16:14:41.204518       1 computedomain.go:296] IP set did not change\n")
    assert top_pair(_case(_daemon_log(log))) is None
