"""A runtime's own client refusing a GPU container before any layer under it is reached
(data/job_errors/container_engines.toml): the Docker CLI that predates ``--gpus`` (Docker
19.03 brought the flag) and enroot's image import whose manifest fetch the registry answers
with a 4xx (an enroot before 3.4.0 on an image published only as an OCI index, a missing tag).
Both are the container runtime's; the client's healthy lines, other flags and a registry's
5xx stay silent.

Sources: docs.docker.com engine resource constraints (GPU), gitlab-org/gitlab-runner#4585;
NVIDIA/enroot src/docker.sh (docker::_download), NVIDIA/JAX-Toolbox docs/reference/faq.md."""

from __future__ import annotations

import pytest
from case import gpu_job_case
from scoreboard import top_pair

from gpunode.job_errors import job_error

READ = {
    "docker-cli-no-gpus-flag": [
        "docker: unknown flag: --gpus.",
        "java.io.IOException: Failed to run image 'nvcr.io/nvidia/pytorch:24.01-py3'. "
        "Error: unknown flag: --gpus",
    ],
    "enroot-manifest-http-error": [
        "slurmstepd: error: pyxis:     [ERROR] URL https://ghcr.io/v2/nvidia/jax/manifests/<TAG> "
        "returned error code: 404 Not Found",
        "[ERROR] URL https://nvcr.io/v2/nvidia/pytorch/manifests/24.01-py3 "
        "returned error code: 401 Unauthorized",
    ],
}

LOOK_ALIKES = [
    "      --gpus gpu-request               GPU devices to add to the container ('all' to pass all GPUs)",
    "docker: unknown flag: --gpu.",
    "unknown flag: --gpus-per-task",
    "pyxis:     [INFO] Fetching image manifest list",
    # a registry's own outage is not the runtime's request
    "[ERROR] URL https://nvcr.io/v2/nvidia/pytorch/manifests/24.01-py3 "
    "returned error code: 503 Service Unavailable",
    # a layer blob, not the manifest
    "[ERROR] URL https://ghcr.io/v2/nvidia/jax/blobs/sha256:0123 returned error code: 404 Not Found",
]


@pytest.mark.parametrize(("entry", "line"), [(e, line) for e, lines in READ.items() for line in lines])
def test_client_refusal_is_the_runtimes(entry: str, line: str) -> None:
    found = job_error(line)
    assert found is not None and found.id == entry
    assert found.component == "container-runtime"


@pytest.mark.parametrize("line", LOOK_ALIKES)
def test_look_alikes_stay_unread(line: str) -> None:
    found = job_error(line)
    assert found is None or found.id not in READ


def test_a_gpu_job_whose_image_import_is_refused() -> None:
    text = ("pyxis:     [INFO] Fetching image manifest list\n"
            "pyxis:     [INFO] Fetching image manifest\n" + READ["enroot-manifest-http-error"][0])
    assert top_pair(gpu_job_case("x-enroot-404", text)) == ("container-runtime", "image_pull_failed")


def test_a_gpu_job_whose_import_worked_stays_healthy() -> None:
    text = ("pyxis:     [INFO] Fetching image manifest list\n"
            "pyxis:     [INFO] Fetching image manifest\n"
            "pyxis:     [INFO] Found all layers in cache\nepoch 1 loss 0.31")
    assert top_pair(gpu_job_case("x-enroot-ok", text)) is None
