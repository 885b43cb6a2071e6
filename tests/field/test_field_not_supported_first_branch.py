"""CUDA's not-supported error in a GPU job on a node whose driver is the first branch of its
CUDA major (525 for 12.x): minor-version compatibility runs newer runtimes there with a limited
feature set, so the feature the job asked for needs a newer driver (pytorch/pytorch#135126,
NVIDIA/TransformerEngine#991). The same error on a later branch, and other programs' "operation
not supported", stay silent, and so does a vGPU guest: a cloud size holding a slice of one GPU
(AcademySoftwareFoundation/openvdb#2255, an EC2 g6f on driver 580) offers fewer CUDA features
whatever the release."""

from __future__ import annotations

from case import running_job_case, synthetic_case
from scoreboard import top_pair

from gpunode.checks.cuda_floor import on_major_first_branch
from gpunode.checks.vgpu_words import fractional_instance

TORCH = "RuntimeError: CUDA error: operation not supported"
TE = ("RuntimeError: /opt/te/transformer_engine/pytorch/csrc/userbuffers/userbuffers-host.cpp:208 "
      "in function "
      "create_communicator_grouped2: CUDA Error: operation not supported")


def _pair(line: str, driver: str, cuda: str) -> tuple[str, str] | None:
    cluster = {"driver_mode": "host", "gpu_node": {"gpus": 1, "driver_version": driver, "cuda_version": cuda}}
    return top_pair(running_job_case("x-not-supported-first-branch", line, cluster=cluster))


def test_the_first_branch_of_each_cuda_major() -> None:
    assert on_major_first_branch((525, 105, 17)) and on_major_first_branch((450, 80, 2))
    assert on_major_first_branch((580, 65, 6))
    assert not on_major_first_branch((535, 183, 6)) and not on_major_first_branch((570, 133, 20))
    assert not on_major_first_branch((35, 4, 1))  # a Jetson's L4T release is no driver branch


def test_cuda_not_supported_on_driver_525_is_the_driver_too_old() -> None:
    assert _pair(TORCH, "525.105.12", "12.0") == ("driver", "cuda_driver_too_old")
    assert _pair(TE, "525.105.17", "12.2") == ("driver", "cuda_driver_too_old")


def test_the_same_error_on_a_later_branch_is_not_the_driver_s_age() -> None:
    # look-alike: the 535 branch serves CUDA 12.2's features itself
    found = _pair(TORCH, "535.183.06", "12.2")
    assert found is None or found[1] != "cuda_driver_too_old"


def test_another_program_s_operation_not_supported_is_not_read() -> None:
    # look-alike: a file system's answer on the same old driver
    line = "OSError: [Errno 95] Operation not supported: '/data/checkpoints/latest'"
    found = _pair(line, "525.105.12", "12.0")
    assert found is None or found[1] != "cuda_driver_too_old"


def _on_instance(line: str, driver: str, cuda: str, instance_type: str) -> tuple[str, str] | None:
    cluster = {"driver_mode": "host", "gpu_node": {"gpu": "NVIDIA L4", "gpus": 1, "driver_version": driver,
                                                   "cuda_version": cuda}}
    evidence = [
        {"kind": "node-labels", "labels": {"node.kubernetes.io/instance-type": instance_type}},
        {"kind": "workload", "name": "job-0", "namespace": "default", "container": "job", "state": "Running"},
        {"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
         "container": "job", "text": line + "\n"}]
    return top_pair(synthetic_case("x-not-supported-slice", evidence, cluster=cluster))


def test_fractional_cloud_sizes_are_vgpu_slices() -> None:
    assert fractional_instance("g6f.xlarge") and fractional_instance("gr6f.4xlarge")
    assert fractional_instance("Standard_NV6ads_A10_v5")
    assert not fractional_instance("g6.xlarge") and not fractional_instance("Standard_NV36ads_A10_v5")
    assert not fractional_instance("")


def test_the_error_on_a_vgpu_slice_of_a_first_branch_driver_is_silent() -> None:
    line = "CUDA error 801: operation not supported"
    assert _on_instance(line, "580.159.03", "13.0", "g6f.xlarge") is None


def test_the_error_on_a_whole_gpu_size_of_a_first_branch_driver_is_still_read() -> None:
    # look-alike: the same node shape with a whole L4 (g6.xlarge)
    assert _on_instance(TORCH, "580.65.06", "13.0", "g6.xlarge") == ("driver", "cuda_driver_too_old")
