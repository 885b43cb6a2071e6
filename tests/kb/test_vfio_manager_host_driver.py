"""The vfio-manager's k8s-driver-manager init container finding a driver installed on the host
('NVIDIA GPU driver is already pre-installed on the node, disabling the containerized driver',
NVIDIA/k8s-driver-manager uninstall_driver; cozystack docs/gpu-vgpu.md "Symptom") skips the
unbind, so the GPUs of the vm-passthrough node stay on the nvidia driver: vfio_pci_not_bound,
read only in the vfio-manager's own driver-manager container. The same line in the driver
DaemonSet's pod is the normal hand-over to a host driver and names nothing there."""

from __future__ import annotations

from gpunode.kb import load_kb

KB = load_kb()
LINE = "NVIDIA GPU driver is already pre-installed on the node, disabling the containerized driver"


def _log_causes(component: str, container: str, line: str) -> set[str]:
    return {cause.code for cause, m in KB.matchers(component, "log")
            if (not m.containers or container in m.containers) and m.regex.search(line)}


def test_vfio_managers_driver_manager_finding_a_host_driver() -> None:
    assert "vfio_pci_not_bound" in _log_causes("vfio-manager", "k8s-driver-manager", LINE)
    # the log as printed, wrapped after the comma
    assert "vfio_pci_not_bound" in _log_causes("vfio-manager", "k8s-driver-manager",
                                               "NVIDIA GPU driver is already pre-installed on the node,")


def test_look_alikes_stay_silent() -> None:
    # the driver DaemonSet's driver-manager hands over to the host driver by design
    assert "vfio_pci_not_bound" not in _log_causes("driver", "k8s-driver-manager", LINE)
    # the vfio-manager's own bind container is not the driver-manager step
    assert "vfio_pci_not_bound" not in _log_causes("vfio-manager", "nvidia-vfio-manager", LINE)
    # a host without a driver goes on to unbind
    assert _log_causes("vfio-manager", "k8s-driver-manager",
                       "NVIDIA GPU driver is not pre-installed on the node, continuing") == set()
