"""What the node's runtime says about who owns a GPU pod's refusal: the containerd unit the
kubelet really uses (its journal's syslog identifier), the NVIDIA handler a missing
RuntimeClass would select, and the CDI spec that handed a container the NVML it cannot
initialise. Each rule is settled by a fact of the node, and stays silent where the fact
points elsewhere or is not known."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import top_pair


def _case(*evidence: dict[str, Any], platform: str = "generic", **cluster: Any) -> Case:
    raw = {"id": "x-runtime-owner", "source": "https://example.org/x", "title": "t", "platform": platform,
           "evidence": list(evidence), "expect": {"healthy": False}, "cluster": cluster}
    return msgspec.convert(raw, Case)


# -- the k8s snap's containerd beside a system one (hrishin/GPU-Workload-Debugging task2) ----------

NO_HANDLER = ("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox "
              'runtime: no runtime for "nvidia" is configured')
WRONG_PATH = ("container-toolkit", "containerd_config_wrong_path")


def _refused() -> list[dict[str, Any]]:
    return [{"kind": "workload", "name": "gpu-job", "namespace": "default", "runtimeClassName": "nvidia",
             "state": "ContainerCreating"},
            {"kind": "event", "object": {"kind": "Pod", "name": "gpu-job", "namespace": "default"},
             "type": "Warning", "reason": "FailedCreatePodSandBox", "message": NO_HANDLER}]


def _journal(ident: str) -> dict[str, Any]:
    line = (f"Sep 28 03:40:06 node-1 {ident}[242547]: time=\"2025-09-28T03:40:06Z\" level=error "
            'msg="RunPodSandbox failed" error="failed to get sandbox runtime: no runtime for \\"nvidia\\" '
            'is configured"')
    return {"kind": "node-cmd", "name": "journal-runtime.txt", "text": line + "\n"}


def _toolkit_env(path: str) -> dict[str, Any]:
    env = [{"name": "CONTAINERD_CONFIG", "value": path}]
    return {"kind": "cluster-object", "resource": "clusterpolicies",
            "object": {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy",
                       "metadata": {"name": "cluster-policy"},
                       "spec": {"toolkit": {"enabled": True, "env": env}}}}


def test_a_toolkit_patching_the_default_config_beside_the_k8s_snap_s_containerd_is_wrong() -> None:
    assert top_pair(_case(*_refused(), _journal("k8s.containerd"))) == WRONG_PATH


def test_a_plain_containerd_unit_or_a_toolkit_told_the_snap_s_path_is_not_the_wrong_file() -> None:
    # negatives: the same refusal from the system containerd.service, and a toolkit whose env
    # names the snap containerd's own config (the documented fix)
    assert top_pair(_case(*_refused(), _journal("containerd"))) != WRONG_PATH
    snap = "/var/lib/k8s-containerd/k8s-containerd/etc/containerd/config.toml"
    assert top_pair(_case(*_refused(), _journal("k8s.containerd"), _toolkit_env(snap))) != WRONG_PATH


def test_the_snap_s_journal_without_a_refused_pod_says_nothing() -> None:
    # negative: a healthy k8s snap node whose runtime journal has lines of its own
    line = ("Sep 28 03:40:06 node-1 k8s.containerd[242547]: "
            'time="2025-09-28T03:40:06Z" level=info msg="loaded"\n')
    journal = {"kind": "node-cmd", "name": "journal-runtime.txt", "text": line}
    assert top_pair(_case(journal)) is None


# -- a RuntimeClass the pods' creator names that does not exist (aws-samples/aws-do-eks#96) --------

MISSING_CLASS = ("container-toolkit", "nvidia_runtimeclass_missing")


def _creator_refused(message: str) -> dict[str, Any]:
    return {"kind": "cluster-object", "resource": "events",
            "object": {"apiVersion": "v1", "kind": "Event",
                       "metadata": {"name": "worker.18b3c2d1e0f4a5b6", "namespace": "serving"},
                       "involvedObject": {"kind": "PodClique", "name": "worker", "namespace": "serving",
                                          "apiVersion": "grove.io/v1alpha1"},
                       "reason": "ERR_CREATE_POD", "type": "Warning",
                       "source": {"component": "grove-operator"},
                       "message": message}}


EKS = {"driver_mode": "host", "components": [], "device_plugin": "static", "runtime_class": False}


def test_pods_refused_for_a_missing_nvidia_class_where_the_runtime_has_the_handler() -> None:
    # EKS's GPU AMI installs the NVIDIA runtime itself: a class naming it would serve
    bare = _creator_refused('RuntimeClass "nvidia" not found')
    assert top_pair(_case(bare, platform="eks", **EKS)) == MISSING_CLASS
    relayed = 'pods "worker-0" is forbidden: pod rejected: RuntimeClass "nvidia" not found'
    assert top_pair(_case(_creator_refused(relayed), platform="eks", **EKS)) == MISSING_CLASS


def test_the_same_refusal_where_no_nvidia_handler_exists_or_is_known_is_the_pod_s_own() -> None:
    # negatives: GKE has no place for the toolkit (plain runc, its plugin mounts the driver), and a
    # node whose runtime config and toolkit are both unseen cannot say a class would serve
    assert top_pair(_case(_creator_refused('RuntimeClass "nvidia" not found'), platform="gke",
                          driver_mode="host", components=[])) != MISSING_CLASS
    assert top_pair(_case(_creator_refused('RuntimeClass "nvidia" not found'), platform="k3s",
                          driver_mode="host", components=[], device_plugin="static")) != MISSING_CLASS


def test_another_class_or_an_existing_one_is_not_the_nvidia_class_missing() -> None:
    # negatives: a gVisor class the pod asked for, and a Normal event of the creator
    other = _creator_refused('RuntimeClass "gvisor" not found')
    assert top_pair(_case(other, platform="eks", **EKS)) != MISSING_CLASS
    normal = _creator_refused('RuntimeClass "nvidia" not found')
    normal["object"]["type"] = "Normal"
    assert top_pair(_case(normal, platform="eks", **EKS)) != MISSING_CLASS


# -- NVML that cannot initialise through a CDI spec (podman-desktop.io docs/podman/gpu) ------------


def _job(text: str) -> list[dict[str, Any]]:
    return [{"kind": "workload", "name": "smi", "namespace": "default", "container": "cuda", "state": "Error",
             "exit_code": 255},
            {"kind": "log", "object": {"kind": "Pod", "name": "smi", "namespace": "default"},
             "container": "cuda", "text": text}]


def test_nvml_failing_in_a_cdi_fed_container_on_a_working_host_is_the_spec_s() -> None:
    assert top_pair(_case(*_job("Failed to initialize NVML: N/A\n"), driver_mode="host", cdi=True)) == (
        "container-toolkit", "error_device")


def test_the_same_words_without_cdi_or_a_healthy_nvml_say_nothing_of_the_spec() -> None:
    # negatives: the builder's non-CDI layout (nvidia is the default runtime, no CDI in
    # containerd), and a container whose nvidia-smi answered
    assert top_pair(_case(*_job("Failed to initialize NVML: N/A\n"), driver_mode="host", cdi=False)) != (
        "container-toolkit", "error_device")
    table = "| NVIDIA-SMI 570.133.20    Driver Version: 570.133.20    CUDA Version: 12.8 |\n"
    assert top_pair(_case(*_job(table), driver_mode="host", cdi=True)) is None
