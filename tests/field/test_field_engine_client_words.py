"""A container engine's own words refusing a GPU container before any layer under it is reached
(data/job_errors/container_engines.toml), all the container runtime's: the Docker CLI that
predates ``--gpus`` (Docker 19.03 brought the flag); enroot's image import whose manifest fetch
the registry answers with a 4xx (an enroot before 3.4.0 on an image published only as an OCI
index, a missing tag); docker-compose refusing a Compose file (its validation header, and its
per-key lines naming the key from ``services.<name>``); the dynamic linker refusing the engine's
own binary; Toolbx applying the NVIDIA CDI spec itself; distrobox-init's NVIDIA bind mounts. The
engines' healthy lines, other flags, a registry's 5xx, another program's schema and a driver
library as the unresolved object stay silent.

Sources: docs.docker.com engine resource constraints (GPU), gitlab-org/gitlab-runner#4585;
NVIDIA/enroot src/docker.sh (docker::_download), NVIDIA/JAX-Toolbox docs/reference/faq.md;
docker/compose 1.29.2 compose/config/validation.py, docker/compose#6691, iot-salzburg/gpu-jupyter#46;
glibc elf/dl-lookup.c, containers/toolbox PR 1548, src/cmd/initContainer.go, containers/toolbox#1572;
89luca89/distrobox distrobox-init, 89luca89/distrobox#1123."""

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
    "compose-file-invalid": [
        "ERROR: The Compose file './docker-compose.yml' is invalid because:",
        "The Compose file is invalid because:",
    ],
    "compose-service-key-invalid": [
        "Unsupported config option for services.engine: 'runtime'",
        "services.gpu-jupyter.deploy.resources.reservations value Additional properties are not "
        "allowed ('devices' was unexpected)",
        "services.trainer.deploy.resources.reservations.devices contains unsupported option: 'gpus'",
    ],
    "engine-binary-symbol-lookup": [
        "toolbox: symbol lookup error: toolbox: undefined symbol: "
        "nvmlGpuInstanceGetComputeInstanceProfileInfoV",
        "/usr/bin/podman: symbol lookup error: /usr/bin/podman: undefined symbol: nvmlDeviceGetCount_v2",
    ],
    "toolbx-cdi-apply-failed": [
        "failed to apply mount from Container Device Interface for NVIDIA",
        "Error: failed to update ldcache for Container Device Interface for NVIDIA",
        "invalid hook in Container Device Interface for NVIDIA",
    ],
    "distrobox-nvidia-bind-failed": [
        " Warning: failed to bind mount "
        "/run/host/usr/lib/wsl/drivers/nv.inf_amd64_0/libnvidia-encode.so.1 to",
        "Warning: failed to bind mount /run/host/usr/lib64/libcuda.so.1 to /usr/lib64/libcuda.so.1",
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
    # a Helm chart's values schema: another program's document, no compose path
    "Error: values don't meet the specifications of the schema(s) in the following chart(s):\n"
    "gpu-operator: - (root): Additional property foo is not allowed",
    "Creating network \"gpu-jupyter_default\" with the default driver",
    "Recreating gpu-jupyter ... done",
    "WARNING: Some services (engine) use the 'deploy' key, which will be ignored.",
    # the unresolved reference is in the driver's library: not the engine's build
    "toolbox: symbol lookup error: /usr/lib64/libnvidia-ml.so.1: undefined symbol: __libc_dlopen_mode",
    # another program's own binary
    "python3: symbol lookup error: python3: undefined symbol: PyUnicode_AsUTF8",
    "Applying Container Device Interface for NVIDIA",
    "Setting up host's nvidia integration...          [ OK ]",
    "mount: failed to bind mount /data to /mnt",
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
