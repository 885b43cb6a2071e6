"""A GPU container that cannot start because one of the driver's programs it runs (nvidia-smi)
is not in it: CUDA images ship none of them, NVIDIA's runtime mounts them, so the runtime did
not inject the driver, which is the toolkit's setup; the OCI runtime's words around the line
only relay that the process could not be run. A program of the image's own missing stays the
runtime's reading."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

#: NVIDIA/nvkind#31 (fixed in the toolkit's config), NVIDIA/k8s-device-plugin#346,
#: tkestack/gpu-manager#89 (runc before 1.1, after the node's runtime became plain runc)
MISSING_SMI = (
    'failed to create shim task: OCI runtime create failed: runc create failed: unable to start container '
    'process: exec: "nvidia-smi": executable file not found in $PATH: unknown',
    'Error: failed to start container "nvidia-smi": Error response from daemon: OCI runtime create failed: '
    'container_linux.go:380: starting container process caused: exec: "nvidia-smi": executable file not '
    'found in $PATH: unknown',
    'container_linux.go:247: starting container process caused '
    '"exec: \\"/usr/local/nvidia/bin/nvidia-smi\\": stat /usr/local/nvidia/bin/nvidia-smi: '
    'no such file or directory"',
)
#: the image's own entrypoint missing: nothing of the NVIDIA stack
OWN_PROGRAM = ('failed to create shim task: OCI runtime create failed: runc create failed: unable to start '
               'container process: exec: "python3": executable file not found in $PATH: unknown')


def _pod(message: str) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "gpu-test", "namespace": "default", "container": "ctr",
         "state": "RunContainerError", "message": message}]
    return synthetic_case("x-smi", evidence, healthy=False)


def test_a_gpu_container_without_the_drivers_program_is_the_toolkits() -> None:
    for line in MISSING_SMI:  # the cause is the line's class (a stat's missing file is a file state)
        top = top_pair(_pod(line))
        assert top is not None and top[0] == "container-toolkit", (line, top)
    assert top_pair(_pod(MISSING_SMI[0])) == ("container-toolkit", "error_not_found")


def test_the_images_own_program_missing_stays_off_the_toolkit() -> None:
    top = top_pair(_pod(OWN_PROGRAM))
    assert top is None or top[0] != "container-toolkit", top
