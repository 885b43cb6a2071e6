"""Node conditions a GPU health monitor sets: its fault report on the GPU it watches.

A health monitor on the node (NVSentinel's GPU and syslog monitors, over DCGM and the kernel
log) sets a node condition per check and sets it True only for an error that needs action,
with the action it recommends in the message: "ErrorCode:79 gpu:0 XID error occured
Recommended Action=NODE_REBOOT;" (NVIDIA/NVSentinel's end-to-end tests, tests/),
"[DCGM_FR_FAULTY_MEMORY] GPU memory failure detected on GPU 0 - RecommendedAction: RESTART_VM"
(NVIDIA/NVSentinel docs/INTEGRATIONS.md, "Condition Message Format"). A warning goes out as an
event instead; a condition back to False ("No Health Failures") is the GPU healthy again, and
Unknown says nothing. So a True condition of a GPU check whose message names an action other
than NONE is the monitor's finding that the GPU failed, read as the GPU's device error with the
monitor's recommended action beside it.

Not so a report on the GPU's NVLink links or its IMEX domain: those checks read a connection's
state, which is down for a while after every reboot as the links train (NVIDIA/NVSentinel#1701:
DCGM_FR_NVLINK_DOWN on 214 healthy GB200 nodes), or a daemon only a multi-node NVLink domain
runs (NVIDIA/NVSentinel#1471: DCGM_FR_IMEX_UNHEALTHY on single-node NVSwitch p5 nodes). They
leave the GPU unknown, for the node's own NVLink facts to settle.

A report whose error code names a catalogued fault is that cause, not a bare device error: the
GPU's thermal-margin watch fails with GPU_TEMP_HW_SLOWDOWN_VIOLATION when the GPU's T.Limit
margin (DCGM field 153) falls below its hardware-slowdown offset (NVML field 194), an action of
CONTACT_SUPPORT (NVIDIA/NVSentinel docs/runbooks/gpu-thermal-margin.md, ADR-042), and its
thermal watch reports DCGM's thermal clocks-event and thermal-violation codes
(DCGM_FR_CLOCKS_EVENT_THERMAL, its older alias DCGM_FR_CLOCK_THROTTLE_THERMAL,
DCGM_FR_THERMAL_VIOLATIONS; NVSentinel's gpu-health-monitor configuration docs, which list
them as the thermal watch's codes): the GPU slowed down for heat.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.bundle.kube import Condition
from gpunode.checks.base import check, problem, unknown
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.decisive import Decisive
from gpunode.model import Evidence, Finding, Status
from gpunode.relazy import lazy_compile

#: The monitor's recommended action in a condition's message, in both of its written forms.
_ACTION = lazy_compile(r"\bRecommended ?Action(?:=|: )(?P<action>[A-Z][A-Z_]*)")
#: Actions that ask for nothing: the monitor's own word that the report needs no action.
_NO_ACTION = frozenset({"NONE", "NO_ACTION", "UNKNOWN"})
#: A GPU check's condition type (NVSentinel's Gpu* from the DCGM health monitor, the syslog
#: monitor's Xid and fallen-off-the-bus conditions); the kubelet's own never match.
_GPU_CHECK = lazy_compile(r"^(?:Gpu|GPU)(?!Driver)|XIDError$|GPUFallenOff$")
#: A report on the GPU's links or its NVLink domain rather than on the GPU itself.
_LINK = lazy_compile(r"(?i)nvlink|\bimex\b|_IMEX_")
#: The monitor's error code, in its "ErrorCode:CODE" and "[CODE]" forms.
_CODE = lazy_compile(r"(?:\bErrorCode:|\[)(?P<code>[A-Z][A-Z0-9_]*[A-Z0-9])\b")
#: Error codes that name a catalogued cause of the GPU, by the cause they name.
_CODE_CAUSE: dict[str, str] = {
    "GPU_TEMP_HW_SLOWDOWN_VIOLATION": "gpu_thermal_slowdown",
    "DCGM_FR_CLOCKS_EVENT_THERMAL": "gpu_thermal_slowdown",
    "DCGM_FR_CLOCK_THROTTLE_THERMAL": "gpu_thermal_slowdown",
    "DCGM_FR_THERMAL_VIOLATIONS": "gpu_thermal_slowdown",
    "DCGM_FR_THERMAL_VIOLATIONS_TS": "gpu_thermal_slowdown",
}


def monitor_faults(conditions: tuple[Condition, ...]) -> Iterator[tuple[Condition, str]]:
    """The True conditions of a GPU health check that ask for an action, each with it."""
    for cond in conditions:
        if cond.status != "True" or not _GPU_CHECK.search(cond.type):
            continue
        found = _ACTION.search(cond.message)
        if found is not None and found["action"] not in _NO_ACTION:
            yield cond, found["action"]


@check("gpu-hardware", needs=("node",))
def gpu_monitor_conditions(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A GPU health monitor's True condition with an action to take: the GPU failed; one on
    its NVLink links or IMEX domain leaves it unknown."""
    assert ctx.node is not None
    for cond, action in monitor_faults(ctx.node.status.conditions):
        where = f"node/{ctx.name} status.conditions[{cond.type}]"
        shown = " ".join(f"{cond.type}={cond.status} {cond.reason} {cond.message}".split())
        if _LINK.search(f"{cond.type} {cond.message}"):
            yield unknown(component, f"the health monitor reports the GPU's NVLink path ({cond.type}, "
                                     f"recommends {action}): a link state or domain the node's NVLink "
                                     "facts settle", Evidence(where, shown))
            continue
        code = _CODE.search(cond.message)
        cause = _CODE_CAUSE.get(code["code"]) if code is not None else None
        if cause is not None:
            yield problem(component, cause, Evidence(where, shown), status=Status.DEGRADED,
                          specificity=55, action=action)
            continue
        yield line_finding(ctx.kb, component, Status.FAILED, Decisive(1, shown, 2), where,
                           verb=f"is reported failing by its health monitor, which recommends {action}",
                           line_class="error_device")
