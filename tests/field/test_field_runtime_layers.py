"""The layer an error names in the container toolkit, the runtime and its configuration:
a GPU job whose container got no driver library or GPU, in a pod that starts under plain
runc (no RuntimeClass, NVIDIA's runtime not the default), is the runtime's configuration;
settled by the pod's runtime and the node's driver, not by the job's words alone."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import diagnose_case, top_root_cause


def _case(*evidence: dict[str, Any], **cluster: Any) -> Case:
    raw = {"id": "x-runtime-layers", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "evidence": list(evidence), "expect": {"healthy": False}, "cluster": cluster}
    return msgspec.convert(raw, Case)


def _top(case: Case) -> tuple[str, str] | None:
    top = top_root_cause(diagnose_case(case), case.node)
    return (top.component, top.cause) if top else None


def _log(text: str, name: str = "tf-job") -> dict[str, Any]:
    return {"kind": "log", "object": {"kind": "Pod", "name": name}, "text": text}


#: NVIDIA/nvidia-docker#828: TensorFlow in a Kubernetes pod that did not get the nvidia runtime.
NO_LIBCUDA = "ImportError: libcuda.so.1: cannot open shared object file: No such file or directory\n"
#: The GPU Operator's CDI layout (cdi.enabled, not cdi.default): nvidia handlers, runc the default.
RUNC_DEFAULT = """version = 2
[plugins."io.containerd.grpc.v1.cri".containerd]
  default_runtime_name = "runc"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
  runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
  BinaryName = "/usr/local/nvidia/toolkit/nvidia-container-runtime"
"""
CONFIG = {"kind": "node-file", "path": "etc/containerd/config.toml", "text": RUNC_DEFAULT}
NOT_DEFAULT = ("container-toolkit", "nvidia_not_default_runtime")


def test_a_job_without_driver_libraries_under_plain_runc_is_the_runtime_s_default() -> None:
    assert _top(_case(_log(NO_LIBCUDA), CONFIG, cdi=False)) == NOT_DEFAULT
    # the GPU Operator's CDI layout: operands name RuntimeClass nvidia, runc stays the default
    assert _top(_case(_log(NO_LIBCUDA), cdi=True)) == NOT_DEFAULT


def test_the_same_words_where_nvidia_is_the_default_runtime_blame_no_runtime_default() -> None:
    # negative: nvidia is containerd's default (the builder's non-CDI layout), so the pod got it
    assert _top(_case(_log(NO_LIBCUDA), cdi=False)) != NOT_DEFAULT


def test_a_job_that_found_its_gpu_says_nothing_about_the_runtime() -> None:
    # negative: a healthy job under the same runc default
    text = "INFO Found 1 CUDA device(s); using GPU 0\n"
    assert _top(_case(_log(text), cdi=True)) is None
