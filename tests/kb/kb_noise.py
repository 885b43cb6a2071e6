# ruff: noqa: E501  (realistic log lines are long)
"""Realistic, healthy log lines to bury signatures in.

Shaped like what the GPU stack prints when everything works (driver container,
toolkit, device plugin, DCGM exporter, kernel, kubelet, a training job), so a
signature that matches here is a false positive.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from functools import cache

_TEMPLATES = (
    "========== NVIDIA Software Installer ==========",
    "Starting installation of NVIDIA driver version 570.133.20 for Linux kernel version 5.15.0-{n3}-generic",
    "Stopping NVIDIA persistence daemon...",
    "Unloading NVIDIA driver kernel modules...",
    "Checking NVIDIA driver packages...",
    "Updating the package cache...",
    "Resolving Linux kernel version...",
    "Proceeding with Linux kernel version 5.15.0-{n3}-generic",
    "Installing Linux kernel headers...",
    "Compiling NVIDIA driver kernel modules...",
    "Loading NVIDIA driver kernel modules...",
    "Starting NVIDIA fabric manager daemon...",
    "Done, now waiting for signal",
    'time="2025-06-0{d}T10:{mm}:{ss}Z" level=info msg="Starting \'setup\' for containerd"',
    'time="2025-06-0{d}T10:{mm}:{ss}Z" level=info msg="Loading config from /runtime/config-dir/config.toml"',
    'time="2025-06-0{d}T10:{mm}:{ss}Z" level=info msg="Sending SIGHUP signal to containerd"',
    'time="2025-06-0{d}T10:{mm}:{ss}Z" level=info msg="Successfully signaled containerd"',
    'time="2025-06-0{d}T10:{mm}:{ss}Z" level=info msg="Completed \'setup\' for containerd"',
    "I0611 10:{mm}:{ss}.{us}       1 main.go:238] Starting FS watcher for /var/lib/kubelet/device-plugins",
    "I0611 10:{mm}:{ss}.{us}       1 main.go:317] Loading configuration.",
    "I0611 10:{mm}:{ss}.{us}       1 main.go:356] Retrieving plugins.",
    "I0611 10:{mm}:{ss}.{us}       1 server.go:165] Starting GRPC server for 'nvidia.com/gpu'",
    "I0611 10:{mm}:{ss}.{us}       1 server.go:195] Registered device plugin for 'nvidia.com/gpu' with Kubelet",
    'time="2025-06-0{d}T10:{mm}:{ss}Z" level=info msg="Starting dcgm-exporter" Version=4.2.3-4.1.3',
    'time="2025-06-0{d}T10:{mm}:{ss}Z" level=info msg="DCGM successfully initialized!"',
    'time="2025-06-0{d}T10:{mm}:{ss}Z" level=info msg="Collecting DCP Metrics"',
    'time="2025-06-0{d}T10:{mm}:{ss}Z" level=info msg="HTTP server started - ready to serve metrics"',
    "[{k}.{us}] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.133.20  Release Build",
    "[{k}.{us}] nvidia-nvlink: Nvlink Core is being initialized, major device number 240",
    "[{k}.{us}] NVRM: GPU at PCI:0000:{bus}:00: GPU-0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a{n2}",
    "[{k}.{us}] mlx5_core 0000:{bus}:00.0: firmware version: 28.39.1002",
    "[{k}.{us}] mlx5_core 0000:{bus}:00.0 ens{n2}np0: Link up",
    "[{k}.{us}] IPv6: ADDRCONF(NETDEV_CHANGE): cali{n3}ab1: link becomes ready",
    "[{k}.{us}] EXT4-fs (nvme0n1p{d}): mounted filesystem with ordered data mode. Quota mode: none.",
    'Jun 11 10:{mm}:{ss} gpu-wk-01 kubelet[1812]: I0611 10:{mm}:{ss}.{us}    1812 kubelet.go:2455] "SyncLoop (PLEG): event for pod"',
    'Jun 11 10:{mm}:{ss} gpu-wk-01 containerd[1290]: time="2025-06-11T10:{mm}:{ss}Z" level=info msg="StartContainer returns successfully"',
    "epoch {d} step {n3} loss={f} lr=3.0e-04 tokens/s=182{n3}",
    "[rank{d}]:[I611 10:{mm}:{ss}] NCCL INFO Channel {n2}/32 : {d}[{d}] -> {n2}[{n2}] via P2P/CUMEM",
    '10.244.{d}.{n2} - - [11/Jun/2025:10:{mm}:{ss} +0000] "GET /metrics HTTP/1.1" 200 {n3}{n3} "-" "Prometheus/2.53.0"',
    '  Normal  Pulled     {n2}m   kubelet  Container image "nvcr.io/nvidia/k8s-device-plugin:v0.17.1" already present on machine',
    "  Normal  Started    {n2}m   kubelet  Started container nvidia-device-plugin",
    "Conditions:",
    "  Ready            True    Mon, 11 Jun 2025 10:{mm}:{ss} +0000   KubeletReady   kubelet is posting ready status",
    'DCGM_FI_DEV_GPU_TEMP{{gpu="{d}",UUID="GPU-0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a{n2}",modelName="NVIDIA H100 80GB HBM3"}} 4{d}',
)


def noise_lines(count: int, seed: int = 7) -> Iterator[str]:
    """``count`` healthy-looking lines, the same for the same seed."""
    rng = random.Random(seed)
    for _ in range(count):
        template = rng.choice(_TEMPLATES)
        yield template.format(
            d=rng.randint(1, 9),
            n2=f"{rng.randint(0, 99):02d}",
            n3=rng.randint(100, 999),
            mm=f"{rng.randint(0, 59):02d}",
            ss=f"{rng.randint(0, 59):02d}",
            us=f"{rng.randint(0, 999999):06d}",
            k=rng.randint(1, 99999),
            bus=f"{rng.choice((0x18, 0x2A, 0x3B, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB)):02x}",
            f=f"{rng.uniform(0.5, 3.0):.4f}",
        )


@cache
def _noise(count: int, seed: int) -> tuple[str, ...]:
    return tuple(noise_lines(count, seed))


def bury(line: str, count: int = 10_000, seed: int = 7) -> tuple[list[str], int]:
    """Noise with ``line`` inserted at a seed-chosen place; returns lines and its 1-based number."""
    lines = list(_noise(count, seed % 5))
    at = place(line, count, seed)
    lines.insert(at, line)
    return lines, at + 1


def place(line: str, count: int = 10_000, seed: int = 7) -> int:
    """Where ``bury`` puts ``line`` among ``count`` noise lines (0: before the first)."""
    return random.Random(seed * 31 + len(line)).randint(0, count)


def bury_near_end(line: str, count: int = 10_000, seed: int = 7, tail: int = 200) -> list[str]:
    """Like a crashed container's log: ``count`` lines, the signature among the last ``tail``.

    ``diagnose`` reads only the last MAX_LOG_BYTES of each log (bundle loader), so a
    signature has to be near the end of a long log to be seen there; ``explain``
    reads everything and is tested with the signature anywhere.
    """
    lines = list(_noise(count, seed % 5))
    lines.insert(count - random.Random(seed).randint(0, tail), line)
    return lines


def bury_each(lines: Sequence[str], places: Sequence[int], count: int = 10_000,
              seed: int = 7) -> tuple[list[str], list[int]]:
    """Noise (``bury``'s for ``seed``) with each of ``lines`` inserted at its own place
    (``places[i]``, a position among the ``count`` noise lines, as ``place`` gives it); returns
    the lines and each inserted line's 1-based number, in the order given."""
    noise = _noise(count, seed % 5)
    at = list(places)
    order = sorted(range(len(lines)), key=lambda i: (at[i], i))
    out: list[str] = []
    numbers = [0] * len(lines)
    taken = 0
    for i in order:
        out.extend(noise[taken:at[i]])
        taken = at[i]
        out.append(lines[i])
        numbers[i] = len(out)
    out.extend(noise[taken:])
    return out, numbers
