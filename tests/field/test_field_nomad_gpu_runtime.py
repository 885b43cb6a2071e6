"""Nomad's docker driver refusing a GPU task before Docker sees it: a task given GPUs needs the
GPU runtime its nvidia_runtime option names among the runtimes `docker info` lists, else
'requested docker runtime "<name>" was not found'. Docker has no runtime the toolkit registers,
as its own "unknown or invalid runtime name: nvidia" says (container-toolkit,
runtime_handler_missing).

Sources: https://github.com/hashicorp/nomad/blob/main/drivers/docker/driver.go
(createContainerConfig), https://github.com/hashicorp/nomad/pull/5046 (the docker driver's
runtimes fingerprinted from docker info), https://github.com/hashicorp/nomad/issues/24990 (the
same report as hashicorp/nomad-device-nvidia#48)."""

from __future__ import annotations

import pytest
from case import gpu_job_case
from scoreboard import top_pair

from gpunode.job_errors import load_job_errors

TABLE = load_job_errors()

REFUSED = [
    'Driver Failure: Failed to create container configuration for image "nvidia/cuda:12.0.0-base" '
    '("sha256:612aabcfe238"): requested docker runtime "nvidia" was not found',
    # a GPU runtime of another name set in the plugin's nvidia_runtime option
    'failed to create container configuration: requested docker runtime "nvidia-experimental" was not found',
]

NOT_READ = [
    # the task's own runtime outside the operator's allow list: Nomad's policy, not Docker's runtimes
    'requested runtime "runsc" is not allowed',
    'conflicting runtime requests: gpu runtime "nvidia" conflicts with task runtime "runc"',
    " Runtimes: io.containerd.runc.v2 nvidia runc",
]


@pytest.mark.parametrize("line", REFUSED)
def test_the_gpu_runtime_not_found_is_the_toolkits_handler(line: str) -> None:
    case = gpu_job_case(f"x-nomad-{REFUSED.index(line)}", line)
    assert top_pair(case) == ("container-toolkit", "runtime_handler_missing")


@pytest.mark.parametrize("line", NOT_READ)
def test_nomads_other_runtime_words_are_not(line: str) -> None:
    found = TABLE.read(line)
    assert found is None or found.id != "nomad-docker-gpu-runtime-missing", found
