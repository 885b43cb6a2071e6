"""nvidia-container-cli's driver service failing ("driver error: failed to process request") on
WSL2's kernel (checks/driver_service.py): the driver is the Windows host's, and the helper
failing there is the host giving the VM no driver (docker/for-win#10379, #10587, #11208:
Windows builds without GPU support for WSL; microsoft/WSL#7627), driver_not_loaded. The same
words on a node with its own kernel keep their class (the host driver's install)."""

from __future__ import annotations

from case import Case, synthetic_case
from scoreboard import top_pair

SERVICE = ("OCI runtime create failed: container_linux.go:370: starting container process caused: "
           "process_linux.go:459: container init caused: Running hook #0:: error running hook: "
           "exit status 1, stdout: , stderr: nvidia-container-cli: initialization error: "
           "driver error: failed to process request: unknown.")


def _service_case(kernel: str) -> Case:
    evidence = [{"kind": "node-info", "fields": {"kernelVersion": kernel}},
                {"kind": "workload", "name": "nbody", "namespace": "default", "container": "nbody",
                 "state": "RunContainerError"},
                {"kind": "event", "object": {"kind": "Pod", "name": "nbody", "namespace": "default"},
                 "type": "Warning", "reason": "Failed", "message": SERVICE}]
    return synthetic_case("x-wsl-service", evidence, healthy=False, cluster={"driver_mode": "host"})


def test_driver_service_failed_on_wsl2_is_no_driver() -> None:
    """docker/for-win#11208 (Windows 10 20H2, no GPU support for WSL) and microsoft/WSL#7627
    (21H1): the CLI's driver service fails on WSL2's kernel, the host gives the VM no driver."""
    for kernel in ("5.4.72-microsoft-standard-WSL2", "4.19.104-microsoft-standard"):
        assert top_pair(_service_case(kernel)) == ("driver", "driver_not_loaded")


def test_driver_service_failed_elsewhere_keeps_its_class() -> None:
    """The same words on a node with its own kernel stay the driver's install, its class."""
    assert top_pair(_service_case("5.15.0-131-generic")) == ("driver", "error_device")
