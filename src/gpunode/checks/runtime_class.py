"""Whether a component's pods get the NVIDIA runtime without relying on the default one.

Read by the tracing of operand symptoms (``checks.signatures``) and by the driver's checks;
kept apart from the checks that register themselves, so importing it registers nothing.
"""

from __future__ import annotations

from gpunode.checks.context import NodeContext

#: The cause that says operands lack NVML because they rely on a default runtime that is not nvidia.
NOT_DEFAULT_RUNTIME = "nvidia_not_default_runtime"


def runtime_requested(ctx: NodeContext, component: str) -> bool:
    """The component's pods here get the NVIDIA runtime without relying on the default: each
    names a RuntimeClass, or nvidia is the default runtime. Then which runtime is the default
    cannot be why they lack NVML: the fault is below (no library on the host to inject) or in
    what the pod itself asks for, and ``nvidia_not_default_runtime`` is not traced to them."""
    setup = ctx.runtime_setup
    if setup is not None and setup.default_is_nvidia:
        return True
    pods = ctx.stack_pods(component)
    return bool(pods) and all(sp.pod.spec.runtime_class_name for sp in pods)
