"""A pod of any kind whose sandbox the node's runtime cannot create because the NVIDIA
runtime's program it is set to execute does not exist is the toolkit's setup failing, not
the pod's: a cluster agent with no GPU (aws-node, an IP masquerade agent) shows it as well as
a GPU pod, since the sandbox is every pod's first container. Lines from public reports; a
CNI's sandbox error and the hook missing by name are look-alikes the reading leaves alone."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

_SHIM = ("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to create containerd task: "
         "failed to create shim task: OCI runtime create failed: unable to retrieve OCI runtime error (open "
         "/run/containerd/io.containerd.runtime.v2.task/k8s.io/6d014b312b6c/log.json: no such file or "
         "directory): {}: unknown")


def _agent_refused(line: str, platform: str = "eks") -> Case:
    """A cluster agent with no GPU request, stuck creating its sandbox on the GPU node."""
    return synthetic_case("x-runtime-binary", [
        {"kind": "workload", "name": "aws-node-7xk2p", "namespace": "kube-system", "container": "aws-node",
         "resources": {"limits": {"cpu": "250m", "memory": "128Mi"}}, "state": "ContainerCreating"},
        {"kind": "event", "object": {"kind": "Pod", "name": "aws-node-7xk2p", "namespace": "kube-system"},
         "type": "Warning", "reason": "FailedCreatePodSandBox", "message": line},
    ], platform=platform, healthy=False, cluster={"driver_mode": "host"})


#: The runtime's program missing where it is executed, each from a public report.
MISSING = [
    # aws/amazon-vpc-cni-k8s#3104: aws-node on a g5 node with the AL2023 AMI (containerd)
    _SHIM.format("fork/exec /usr/bin/nvidia-container-runtime: no such file or directory"),
    # NVIDIA/nvidia-docker#686: Docker's form of the same
    "Error response from daemon: OCI runtime create failed: fork/exec /usr/bin/nvidia-container-runtime: "
    "no such file or directory: unknown",
    # NVIDIA/nvidia-docker#1269 (and NVlabs/BundleSDF#95): Docker with the runtime registered by name
    "failed to start sandbox container for pod \"x\": Error response from daemon: OCI runtime create failed: "
    "unable to retrieve OCI runtime error (open /run/containerd/io.containerd.runtime.v1.linux/moby/7a5db13e"
    "/log.json: no such file or directory): exec: \"nvidia-container-runtime\": executable file not found in "
    "$PATH: unknown",
]


@pytest.mark.parametrize("line", MISSING)
def test_a_missing_runtime_program_is_the_toolkits(line: str) -> None:
    assert top_pair(_agent_refused(line)) == ("container-toolkit", "error_file_state")


def test_a_cni_sandbox_error_accuses_no_toolkit() -> None:
    """A network plugin's failure to set up the sandbox names no NVIDIA program."""
    line = ("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for "
            "sandbox \"3f2a\": plugin type=\"aws-cni\" name=\"aws-cni\" failed (add): add cmd: failed to "
            "assign an IP address to container")
    assert top_pair(_agent_refused(line)) != ("container-toolkit", "error_file_state")


def test_the_hook_missing_by_name_is_not_this_reading() -> None:
    """NVIDIA/nvidia-docker#958: the legacy prestart hook, not the runtime program, is missing."""
    line = ("Error response from daemon: OCI runtime create failed: exec: \"nvidia-container-runtime-hook\": "
            "executable file not found in $PATH: unknown")
    assert top_pair(_agent_refused(line)) != ("container-toolkit", "error_file_state")


def test_no_event_stays_healthy() -> None:
    """The same cluster without the refusal: nothing is charged to the toolkit."""
    case = synthetic_case("x-runtime-binary-ok", [], platform="eks", cluster={"driver_mode": "host"})
    assert top_pair(case) in (None, ("healthy", ""))
