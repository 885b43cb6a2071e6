"""Failure words a decisive line may carry without an error level or an ``Error:`` prefix.

A message that opens on "Error while/when/during <step>" reports the step that failed
(NCCL's shared-memory transport, NVIDIA/nccl-tests#166 and the PyTorch/vLLM threads that
quote it; gRPC's "transport: Error while dialing"). An object or part a step needs and did
not find ready or present (the GPU Operator's "ClusterPolicy is not ready, states not ready:
[...]", NVIDIA/gpu-driver-container#979; "The toleration is missing in the generated
DaemonSet", aws/amazon-cloudwatch-agent-operator#290), and a scheduler that found no node
for a pod (KAI's "no nodes with enough resources were found", kai-scheduler/KAI-Scheduler#256)
are failures too. Look-alikes that stay quiet: the words inside other words or phrases,
and an explicit info level.
"""

from __future__ import annotations

import pytest

from gpunode.decisive import severity

FAILURES = (
    "Error while creating shared memory segment /dev/shm/nccl-F9ffgB (size 9637888)",
    "Error while attaching to shared memory segment /dev/shm/nccl-UbzKZ9 (size 9637888)",
    "ClusterPolicy is not ready, states not ready: [state-vgpu-device-manager]",
    "The toleration is missing in the generated DaemonSet.",
    "no nodes with enough resources were found: 1 node is not a gpu node or the gpu memory count "
    "on the node was not synced yet, task: <default/gpu-memory>, node: <minikube>.",
)

QUIET = (
    "Errors were found while checking the cache, rebuilding",
    "Error handling is enabled for the reconciler",
    "Reconciling ClusterPolicy: all states ready",
    'level=info msg="ClusterPolicy is not ready yet, requeueing"',
    "nodes with enough resources: 2",
)


@pytest.mark.parametrize("line", FAILURES)
def test_a_failure_worded_line_is_an_error(line: str) -> None:
    assert severity(line) >= 1


@pytest.mark.parametrize("line", QUIET)
def test_look_alikes_stay_quiet(line: str) -> None:
    assert severity(line) == 0


#: A CUDA result named by its enum, as the CUDA samples' checkCudaErrors() prints it
#: (NVIDIA/gpu-operator#32's driver validation on OpenShift 4.3) and as programs log it.
CUDA_RESULTS = (
    'checkCudaErrors() Driver API error = 0003 "CUDA_ERROR_NOT_INITIALIZED" from file '
    "<../../Common/helper_cuda_drvapi.h>, line 229.",
    "cuInit returned CUDA_ERROR_NO_DEVICE",
    "cudaGetDeviceCount returned cudaErrorNoDevice",
)
#: Success has its own names, and an info level is the program's own verdict.
CUDA_QUIET = ("cuInit returned CUDA_SUCCESS", "cudaGetDeviceCount returned cudaSuccess",
              'level=info msg="probe returned cudaSuccess"')


@pytest.mark.parametrize("line", CUDA_RESULTS)
def test_a_cuda_error_enum_is_an_error(line: str) -> None:
    assert severity(line) >= 1


@pytest.mark.parametrize("line", CUDA_QUIET)
def test_cuda_success_stays_quiet(line: str) -> None:
    assert severity(line) == 0


def test_a_zap_level_below_debug_is_detail() -> None:
    # zap's console encoder prints logr's V(2) as LEVEL(-2) (sriov-network-operator#859)
    verbose = ('2025-03-10T05:26:17.140153074Z\tLEVEL(-2)\tsriov/sriov.go:150\tTryGetInterfaceName(): '
               'failed to get interface name\t{"err": "GetNetName(): no net directory under pci device '
               '0000:31:03.5"}')
    assert severity(verbose) == 0
    assert severity(verbose.replace("LEVEL(-2)", "error")) == 2
