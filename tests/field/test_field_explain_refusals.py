"""``gpunode explain`` quotes, and classes, the documented refusals that carry no error word.

- The kubelet's refusal of a container whose securityContext asks for a non-root user the
  image's own user (root) contradicts: "container has runAsNonRoot and image will run as root"
  (verifyRunAsNonRoot in kubernetes/kubernetes pkg/kubelet/kuberuntime/security_context_others.go;
  intel/CPU-Manager-for-Kubernetes#299, kubernetes-sigs/external-dns#4003,
  cloudfoundry/cf-for-k8s#675). A YAML line that sets runAsNonRoot stays silent.
- nvidia.ko refusing to let go of a GPU a process holds open: "NVRM: Attempting to remove
  device <bdf> with non-zero usage count!" (nv_pci_remove prints it at NV_DBG_ERRORS, then
  waits: NVIDIA/open-gpu-kernel-modules kernel-open/nvidia/nv-pci.c and #1374,
  bryansteiner/gpu-passthrough-tutorial#39). An NVRM info line stays silent.
- The CUDA images' entrypoint banner for a container that sees no driver: "WARNING: The NVIDIA
  Driver was not detected.  GPU functionality will not be available." (entrypoint.d's
  50-gpu-driver-check.sh of NVIDIA's CUDA and NGC images: no libcuda.so.1 or no
  /dev/nvidiactl). A warning that nothing else failed stays silent.
- nvidia-smi's GPU table row with a field printed as ``ERR!``: a value NVML could not read
  from the GPU (NVIDIA/open-gpu-kernel-modules#1193, Azure/azhpc-diagnostics#77). A healthy
  row stays silent.
"""

from __future__ import annotations

import pytest

from gpunode.explain import explain_lines
from gpunode.kb import load_kb

_CASES = [
    # intel/CPU-Manager-for-Kubernetes#299 (kubectl describe's event)
    ('  Warning  Failed     6s (x4 over 18s)  kubelet            Error: container has runAsNonRoot '
     'and image will run as root (pod: "cmk-cluster-init-pod_cmk-namespace(fa1d4889)", '
     "container: cmk-cluster-init-pod)", "error_config_invalid"),
    # kubernetes-sigs/external-dns#4003 (the container's waiting message)
    ('    message: \'container has runAsNonRoot and image will run as root (pod: "external-dns-5bf5f97c4-'
     'bw7mg_kube-system(d7ec6cb8)", container: external-dns\'', "error_config_invalid"),
    # bryansteiner/gpu-passthrough-tutorial#39, NVIDIA/open-gpu-kernel-modules#1374
    ("NVRM: Attempting to remove device 0000:01:00.0 with non-zero usage count!", "error_device"),
    ("kernel: NVRM: Attempting to remove device 0000:01:00.0 with non-zero usage count!", "error_device"),
    # the CUDA images' entrypoint banner
    ("WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.",
     "error_device"),
    # Azure/azhpc-diagnostics#77: the power draw unread
    ("| N/A   29C    P0   ERR! / 250W |    593MiB / 16160MiB |      0%      Default |", "error_device"),
    # NVIDIA/open-gpu-kernel-modules#1193: the fan unread
    ("|ERR!   45C    P8     N/A /  N/A |      1MiB /  8192MiB |      0%      Default |", "error_device"),
]

_SILENT = [
    # a pod spec that sets the field
    "        runAsNonRoot: true",
    "securityContext: {runAsNonRoot: true, runAsUser: 1000}",
    # NVRM's info lines at load
    "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023",
    "NVRM: GPU at PCI:0000:01:00: GPU-6304bf68-46a6-459f-2dc0-682f676a8d85",
    # a healthy nvidia-smi row and its header
    "| N/A   34C    P0    42W / 300W |      0MiB / 80994MiB |      0%      Default |",
    "| Fan  Temp  Perf  Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |",
    # the banner's own follow-up, which names no failure
    "   Use the NVIDIA Container Toolkit to start this container with GPU support; see",
]


@pytest.mark.parametrize(("line", "code"), _CASES)
def test_refusal_is_quoted_in_its_class(line: str, code: str) -> None:
    found = explain_lines([line], load_kb())
    assert found.decisive is not None and found.decisive.text == line.strip()
    assert found.decisive_class == code


@pytest.mark.parametrize("line", _SILENT)
def test_look_alike_stays_silent(line: str) -> None:
    found = explain_lines([line], load_kb())
    assert found.decisive is None and found.decisive_class is None
