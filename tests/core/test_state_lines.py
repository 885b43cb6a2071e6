"""explain answers pasted text that shows a failed state without an error word (ibstat,
ibdev2netdev, nvidia-smi nvlink -s, kubectl describe node, a containerd config, node
labels) with the line that shows it; the healthy value of the same field gives nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpunode.explain import explain_lines
from gpunode.kb import load_kb
from gpunode.state_lines import state_line

KB = load_kb()

_DESCRIBE = ["Capacity:", "  cpu:                32", "  ephemeral-storage:  1951312988Ki",
             "  memory:             264074052Ki", "  pods:               110"]


@pytest.mark.parametrize(("text", "line_no", "line_class"), [
    (["CA 'mlx5_0'", "\tPort 1:", "\t\tState: Down", "\t\tPhysical state: Polling"], 3, None),
    (["mlx5_2 port 1 ==> net0 (Up)", "mlx5_3 port 1 ==> net1 (Down)"], 2, None),
    (["GPU 0: Tesla V100-SXM2-16GB", "\t Link 0: 25.781 GB/s", "\t Link 3: <inactive>"], 3, None),
    (['  "cpu": "96",', '  "rdma/rdma_shared_device_a": "0",'], 2, None),
    (_DESCRIBE, 1, None),
    (['version = 2', 'disabled_plugins = ["cri"]'], 2, "error_config_invalid"),
    (['nvidia.com/gpu.deploy.driver: "true"', 'nvidia.com/gpu.deploy.device-plugin: ""'], 2,
     "error_config_invalid"),
    (["feature.node.kubernetes.io/pci-10de_2237.present=true"], 1, "error_config_invalid"),
])
def test_a_failed_state_is_the_decisive_line(text: list[str], line_no: int, line_class: str | None) -> None:
    found = state_line(text)
    assert found is not None and found.line_no == line_no and found.line_class == line_class
    explained = explain_lines(text, KB)
    assert explained.decisive is not None and explained.decisive.line_no == line_no
    assert explained.decisive_class is not None


@pytest.mark.parametrize("text", [
    ["CA 'mlx5_0'", "\tPort 1:", "\t\tState: Active", "\t\tPhysical state: LinkUp"],
    ["mlx5_3 port 1 ==> net1 (Up)"],
    ["\t Link 3: 25.781 GB/s"],
    ['  "nvidia.com/gpu": "8",', '  "nvidia.com/cuda.runtime.minor": "0",'],
    [*_DESCRIBE, "  nvidia.com/gpu:     8"],
    ['disabled_plugins = []', 'default_runtime_name = "nvidia"'],
    ['nvidia.com/gpu.deploy.device-plugin: "true"'],
    ["feature.node.kubernetes.io/pci-0302_10de.present=true"],
    ["feature.node.kubernetes.io/pci-10de.present=true",
     "feature.node.kubernetes.io/pci-10de_2237.present=true"],
])
def test_the_healthy_value_of_the_same_field_gives_nothing(text: list[str]) -> None:
    assert state_line(text) is None
    assert explain_lines(text, KB).decisive is None


# --- scheduling facts and configuration keys (issue 20: text with no error word) ---

#: ``kubectl describe ds`` of a DaemonSet that wants no node, as in kubernetes/kubernetes#18656
#: and aws-neuron/aws-neuron-sdk#432 (https://github.com/kubernetes/kubernetes/issues/18656).
_DS_NONE = ["Name:\t\tprometheus-node-exporter", "Selector:\tdaemon=prom-node-exp", "Node-Selector:\t<none>",
            "Desired Number of Nodes Scheduled: 0", "Current Number of Nodes Scheduled: 0",
            "Number of Nodes Misscheduled: 0", "Pods Status:\t0 Running / 0 Waiting / 0 Succeeded / 0 Failed"]
#: ``kubectl get ds -A`` where a DaemonSet with no node sits among others that place pods
#: (https://github.com/NVIDIA/gpu-operator/issues/448): an optional one, not the failure.
_DS_LISTING = [
    "NAMESPACE       NAME              DESIRED   CURRENT   READY   UP-TO-DATE   AVAILABLE   "
    "NODE SELECTOR   AGE",
    "calico-system   calico-node       1         1         1       1            1           "
    "kubernetes.io/os=linux   170m",
    "calico-system   csi-node-driver   0         0         0       0            0           "
    "kubernetes.io/os=linux   170m",
]
#: describe's taint of a GPU node as ``kubectl taint node <n> nvidia.com/gpu=present:NoSchedule``
#: sets it (https://github.com/NVIDIA/gpu-operator/issues/2717).
_TAINTS = ["Taints:             nvidia.com/gpu=present:NoSchedule", "Unschedulable:      false"]


@pytest.mark.parametrize(("text", "line_no", "line_class"), [
    (_TAINTS, 1, "taint_not_tolerated"),
    (["dedicated=ml:NoExecute", "node.kubernetes.io/unschedulable:NoSchedule"], 1, "taint_not_tolerated"),
    (_DS_NONE, 4, "pod_missing"),
    ([_DS_LISTING[0], _DS_LISTING[2]], 2, "pod_missing"),
    (["kube-system  my-agent  0  0  0  0  0  <none>  4m20s"], 1, "pod_missing"),
    (["DESIRED 0"], 1, "pod_missing"),
    (["NAME            READY   STATUS     RESTARTS   AGE",
      "plugin-x2kq9    0/2     Init:0/1   0          12m"], 2, "init_blocked"),
    (["gpu-pod   0/1   Pending   0   2d"], 1, "pod_pending"),
    (["allocatable.nvidia.com/gpu = 0"], 1, None),
    (["insufficient devices: Requested: 2, Available: 1"], 1, "error_resource_exhausted"),
    (["nvidia.com/gpu.deploy.device-plugin=false"], 1, "selector_label_missing"),
    (["Labels:  nvidia.com/gpu.product=Quadro-RTX-(Turing)"], 1, "error_config_invalid"),
    (['  default_runtime_name = "runc"'], 1, "nvidia_not_default_runtime"),
    (["[plugins.'io.containerd.grpc.v1.cri'.containerd.runtimes.nvidia.options]",
      "binaryname = '/usr/bin/nvidia-container-runtime'"], 2, "error_config_invalid"),
    (['  sandbox_image = "registry.k8s.io/pause:3.9"',
      "KUBELET_ARGS=--pod-infra-container-image=registry.k8s.io/pause:3.6"], 1, "error_config_invalid"),
    (["- name: CONTAINERD_CONFIG", "  value: /var/lib/rancher/k3s/agent/etc/containerd/config.toml"], 2,
     "containerd_config_wrong_path"),
    (["    Fabric", "        State                                          : In Progress"], 2,
     "fabric_manager_not_running"),
])
def test_a_scheduling_fact_or_config_key_is_the_decisive_line(
        text: list[str], line_no: int, line_class: str | None) -> None:
    test_a_failed_state_is_the_decisive_line(text, line_no, line_class)


@pytest.mark.parametrize("text", [
    # the node's GPUs are advertised: its device plugin tolerates the taint
    [*_TAINTS, "Allocatable:", "  cpu:             16", "  nvidia.com/gpu:  1"],
    ["Taints:             <none>"],
    ["gpu=true:PreferNoSchedule"],
    # describe pod's tolerations (https://github.com/NVIDIA/k8s-device-plugin/issues/33)
    ["Tolerations:                 node.kubernetes.io/not-ready:NoExecute op=Exists for 300s",
     "                             nvidia.com/gpu:NoSchedule op=Exists"],
    _DS_LISTING,
    # https://github.com/kubernetes/kubernetes/issues/30206; a zero count of failed pods is no failure
    ["Desired Number of Nodes Scheduled: 3", "Current Number of Nodes Scheduled: 3",
     "Pods Status:    3 Running / 0 Waiting / 0 Succeeded / 0 Failed"],
    ["NAME            READY   STATUS     RESTARTS   AGE", "plugin-x2kq9    0/2     Init:0/1   0          40s",
     "dcgm-7tq2      1/1     Running    0          12m", "cuda-validator-j525v   0/1   Completed   0   130m"],
    ["nvidia.com/gpu:  0.5"],
    ["Requested: 1, Available: 8"],
    ["nvidia.com/gpu.deploy.device-plugin=true"],
    ["Labels:  nvidia.com/gpu.product=Tesla-V100-SXM2-16GB",
     "kubernetes.io/hostname=ip-10-0-0-1.ec2.internal", "--node-labels=kurl.sh/cluster=true,",
     "NVIDIA_VISIBLE_DEVICES=all"],
    ["Annotations:  nfd.node.kubernetes.io/feature-labels: cpu-cpuid.ADX,cpu-cpuid.AESNI"],
    ['default_runtime_name = "nvidia"', 'default_runtime_name = "${RUNTIME}"',
     "BinaryName = '/usr/bin/runc'"],
    ['sandbox_image = "registry.k8s.io/pause:3.9"', "--pod-infra-container-image=registry.k8s.io/pause:3.9"],
    ['sandbox_image = "registry.k8s.io/pause:3.9"'],
    # the template RKE2 renders config.toml from (https://gist.github.com/janakiramm/27d9dcd083ce94cd9018713c49851b0c)
    ["CONTAINERD_CONFIG=$DATA_DIR/agent/etc/containerd/config.toml.tmpl",
     "CONTAINERD_CONFIG=/var/lib/rancher/rke2/agent/etc/containerd/config.toml.tmpl"],
    ["    Fabric", "        State                                          : Completed",
     "        State                                          : N/A"],
])
def test_the_healthy_form_of_a_scheduling_fact_or_config_key_gives_nothing(text: list[str]) -> None:
    test_the_healthy_value_of_the_same_field_gives_nothing(text)


_REAL = Path(__file__).parents[1] / "fixtures" / "real"
#: Real files under fixtures/real that show a failed state themselves (ibstat of a port down).
_REAL_FAILED = {"gpud-99-ibstat-port-disabled.txt"}


@pytest.mark.parametrize("path", sorted(
    p for root in (_REAL, Path(__file__).parents[3] / "shared" / "fixtures" / "real") if root.is_dir()
    for p in root.rglob("*") if p.is_file() and "broken" not in p.parts and p.name not in _REAL_FAILED),
    ids=lambda p: p.name)
def test_real_healthy_files_show_no_failed_state(path: Path) -> None:
    """Node files of healthy nodes (configs, labels, nvidia-smi, topology) read as nothing."""
    assert state_line(path.read_text(errors="replace").splitlines()) is None


def test_enoexec_is_an_error_line() -> None:
    """ENOEXEC's text names a file exec(2) could not run (a binary of another architecture, a
    truncated file): the line is the error, though it has no other error word."""
    explained = explain_lines(["exec /usr/bin/nvidia-device-plugin: exec format error"], KB)
    assert explained.decisive is not None and explained.decisive.line_no == 1
