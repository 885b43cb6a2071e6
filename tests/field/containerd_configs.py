"""containerd configs the field rule tests lay on a node, in the toolkit's own format."""

from __future__ import annotations

#: containerd 1.7's config as the toolkit leaves it with CONTAINERD_SET_AS_DEFAULT=false, which
#: is also the GPU Operator's CDI layout (cdi.enabled, not cdi.default): NVIDIA's handlers
#: configured, runc the default.
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
