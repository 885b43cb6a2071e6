"""A CDI spec the runtime read and could not parse, in the runtime's own words at a container's
start ('failed to parse CDI Spec "<path>": ...', the CDI library's wording as it refreshes its
registry, cncf-tags/container-device-interface pkg/cdi), is the catalogued cdi_spec_invalid:
the spec file on the node is what to fix, not a configuration the class reading would name.
Each line is a public one; the look-alikes are a device no spec defines and a spec the toolkit
could not generate, which keep their own causes."""

from __future__ import annotations

import pytest

from gpunode.kb import load_kb

KB = load_kb()


@pytest.mark.parametrize(
    "line",
    [
        # NVIDIA/nvidia-container-toolkit#1860: a toolkit 1.19 spec under Podman 4.9's CDI library
        'The following error was triggered when refreshing the CDI registry: failed to load CDI Spec failed '
        'to parse CDI Spec "/etc/cdi/nvidia.yaml": failed to unmarshal CDI Spec: error unmarshaling JSON: '
        'while decoding JSON: json: unknown field "additionalGids"',
        # NVIDIA/nvidia-container-toolkit#38: a toolkit 1.12 spec under Podman 4.2's
        'DEBU[0000] The following errors were triggered when creating the CDI registry: '
        'map[/etc/cdi/nvidia.yaml:[failed to load CDI Spec: failed to parse CDI Spec "/etc/cdi/nvidia.yaml": '
        'failed to unmarshal CDI Spec: error unmarshaling JSON: while decoding JSON: json: unknown field '
        '"hostPath"]]',
    ],
)
def test_unparsable_spec_is_catalogued(line: str) -> None:
    found = KB.catalogued_in("container-toolkit", line)
    assert found is not None and found.code == "cdi_spec_invalid"


@pytest.mark.parametrize(
    "line",
    [
        # NVIDIA/nvidia-container-toolkit#1239: no spec defines the device asked for
        "Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: "
        "could not apply required modification to OCI specification: error modifying OCI spec: failed to "
        "inject CDI devices: unresolvable CDI devices management.nvidia.com/gpu=GPU-e78e68c0-4e6a-737e",
        # the toolkit could not write the spec at all
        "failed to generate CDI spec: failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND",
    ],
)
def test_look_alike_keeps_its_cause(line: str) -> None:
    found = KB.catalogued_in("container-toolkit", line)
    assert found is not None and found.code == "cdi_spec_generation_failed"
