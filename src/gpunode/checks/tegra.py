"""A Tegra (Jetson) node's integrated GPU has no NVML: a device plugin that finds GPUs only
through NVML cannot serve it, whatever runtime it runs with.

k8s-device-plugin before v0.13.0 discovered devices with NVML alone; on a Jetson it logs that
it could not load the NVML library and advertises nothing (NVIDIA/k8s-device-plugin#132,
#297, #377; NVML itself is absent on Tegra, rapidsai/jupyterlab-nvdashboard#65). From v0.13.0
it detects the platform first and logs which one it found ("Detected Tegra platform",
"Detected non-Tegra platform"); that build's NVML failure is another matter (the runtime's,
or a platform it did not recognise) and is left to the catalogued signatures.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.checks.base import check, problem
from gpunode.checks.context import NodeContext
from gpunode.checks.tegra_mounts import is_tegra
from gpunode.model import Evidence, Finding
from gpunode.relazy import lazy_compile

#: The plugin's NVML-only failure: the library could not be loaded at all.
_NO_NVML = lazy_compile(r"could not load NVML library|Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND")
#: A platform-aware build (v0.13.0 on) says which platform it detected before choosing NVML.
_PLATFORM_AWARE = lazy_compile(r"\bDetected (?:non-)?Tegra platform\b|\bDetected platform\b|"
                               r"\bUnsupported platform detected\b")


def nvml_only_failure(ctx: NodeContext, component: str) -> Evidence | None:
    """The line where an NVML-only build of ``component`` (no platform detection in its log)
    could not load NVML on a Tegra node, or None."""
    if component != "device-plugin" or not is_tegra(ctx):
        return None
    for sp in ctx.stack_pods(component):
        for log in ctx.logs_of(sp.pod):
            if any(_PLATFORM_AWARE.search(line) for line in log.lines):
                continue
            for at, line in enumerate(log.lines):
                if _NO_NVML.search(line):
                    return Evidence(f"{log.path}:{at + 1}", line.strip())
    return None


@check("device-plugin", needs=("node",), may_find=is_tegra)  # (none but a Tegra node is read)
def nvml_only_plugin_on_tegra(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """An NVML-only device plugin that cannot load NVML on a Tegra node: the plugin build does
    not support the platform, and no runtime setting helps (its hint to set Docker's default
    runtime is boilerplate there, not traced to the toolkit: checks/signatures.py)."""
    ev = nvml_only_failure(ctx, component)
    if ev is not None:
        known = ctx.kb.get("device_plugin_platform_unsupported")
        yield problem(component, known.code, ev, specificity=known.specificity)
