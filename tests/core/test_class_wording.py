"""The class of a decisive line, by the general wording of each class: the ways a line says
its class (a kernel refusing a module's key, a driver version too low, a name no registry
knows, libnvidia-container's driver RPC failing, a device plugin's unhealthy device) and
the parts of a line that are not its reason (the scheduler's preemption summary, a C++
logger's source location), each beside a look-alike that must not take the class."""

from __future__ import annotations

import pytest

from gpunode.kb import load_kb


@pytest.mark.parametrize(("line", "cls"), [
    # the kernel's module-signature refusal (kernel/module/signing.c), with or without a timestamp
    ("[    8.160074] Loading of module with unavailable key is rejected", "error_module_load"),
    ("Loading of unsigned module is rejected", "error_module_load"),
    # the CUDA runtime asking for a newer driver than the node has
    ("RuntimeError: CUDA driver version is insufficient for CUDA runtime version", "error_version_mismatch"),
    ("Unable to allocate pinned system memory, pinned memory pool will not be available: "
     "CUDA driver version is insufficient for CUDA runtime version", "error_version_mismatch"),
    # a plugin or driver name a registry does not hold
    ('"Failed to prepare dynamic resources" err="prepare dynamic resources: DRA driver '
     'gpu.example.com is not registered"', "error_not_found"),
    # libnvidia-container's driver service failing, whatever wraps it
    ("stderr: nvidia-container-cli: initialization error: driver error: failed to process request: unknown",
     "error_device"),
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the "
     "latest NVIDIA driver is installed and running.", "error_device"),
    ("Unable to determine the device handle for GPU0000:3b:00.0: Unknown Error", "error_device"),
    ("Could not determine device placement for MIG-30d00c09-0000-0000-0000-000000000000: "
     "unable to parse UUID as MIG device; Marking it unhealthy.", "error_device"),
    ("'nvidia.com/gpu' device marked unhealthy: GPU-1d6a9c4e-0f3b-4a51-9a2e-6b1f6a0c2d11", "error_device"),
    # a CUDA error number is not an HTTP status
    ("Failed to bind multicast memory: CUDA error 401", "error_device"),
    ("failed to fetch anonymous token: unexpected status: 401 Unauthorized", "error_permission_denied"),
    # the scheduler's reasons decide, not its preemption summary
    ("0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: "
     "3 No preemption victims found for incoming pod.", "error_resource_exhausted"),
    # a C++ logger's source location and level after the message are not the message
    ("Failed to load module 9 - dlopen(libdcgmmodulefoo.so.4) returned: libdcgmmodulefoo.so.4: cannot open "
     "shared object file: No such file or directory [/src/dcgmlib/src/HostEngine.cpp:1866] "
     "[HostEngine::LoadModule] dcgm_level=ERROR", "error_file_state"),
])
def test_a_class_is_read_from_its_general_wording(line: str, cls: str) -> None:
    found = load_kb().line_class(line)
    assert found is not None and found.code == cls


@pytest.mark.parametrize(("line", "cls"), [
    # a module loaded, a healthy device, a registered driver: no failure, no class
    ("Loading of module nvidia is complete", None),
    ("'nvidia.com/gpu' device marked healthy: GPU-1d6a9c4e-0f3b-4a51-9a2e-6b1f6a0c2d11", None),
    ("Registered DRA driver gpu.example.com", None),
    ("Health check passed; marking it healthy", None),
    ("NVIDIA-SMI 550.54.15  Driver Version: 550.54.15  CUDA Version: 12.4", None),
    ("CUDA driver version is 12.4", None),
    # a process that ended before it was waited on (ESRCH) is a race, not a missing thing
    ("Error: container create failed: read status from sync socket: No such process", None),
    # a source location alone, before the message, stays
    ("[main.cpp:12] cannot open shared object file: No such file or directory", "error_file_state"),
])
def test_look_alikes_do_not_take_the_class(line: str, cls: str | None) -> None:
    assert load_kb().class_of(line) == cls
