"""The kernel's PCIe reports about a GPU: the bus under the driver.

The kernel speaks of a GPU without the driver's words. PCIe AER reports
uncorrectable errors on a link; an uncorrectable error whose recovery reaches the GPU
(the AER driver calling it by its bound driver, ``nvidia <bus>: AER: can't recover``,
``nvidia <bus>: device has no AER-aware driver``) has taken the GPU off its link: the
GPU's or its link's, the GPU hardware's. A fatal one is so as soon as the GPU is named
beside it; a non-fatal one only where the GPU could not recover. Corrected errors are the
link's own retries and no failure.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.checks.base import check, kernel_log_holds
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.decisive import Decisive
from gpunode.model import Finding, Status
from gpunode.relazy import lazy_compile

_BUS = r"(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]"
#: The AER's severity line, as ``aer_print_error`` writes it ("PCIe Bus Error:
#: severity=Uncorrected (Fatal), type=Transaction Layer, (Requester ID)"; newer kernels
#: say "Uncorrectable", and some print no ``severity=``).
_UNCORRECTED = lazy_compile(
    r"PCIe Bus Error: (?:severity=)?Uncorrect(?:ed|able) \((?P<kind>Fatal|Non-Fatal)\)")
#: The GPU named by the AER's recovery: its bound driver before its bus address.
_GPU_IN_RECOVERY = lazy_compile(
    rf"\bnvidia (?P<bus>{_BUS}): (?:AER: |PCIe Bus Error|device has no AER-aware driver)")
_GPU_UNRECOVERED = lazy_compile(rf"\bnvidia {_BUS}: AER: can't recover")


def _dmesg(ctx: NodeContext) -> list[str]:
    split = ctx.text_lines("cmd", "dmesg.txt")
    return list(split[0]) if split is not None else []


def _finding(ctx: NodeContext, component: str, index: int, line: str) -> Finding:
    where = f"{ctx.obs.path_of('cmd', 'dmesg.txt')}:{index + 1}"
    return line_finding(ctx.kb, component, Status.FAILED, Decisive(index + 1, line.strip(), 1), where,
                        verb="fails in the kernel log", standalone="true", line_class="error_device")


_may_aer = kernel_log_holds(("PCIe Bus Error", "nvidia "))


@check("gpu-hardware", may_find=_may_aer)  # dmesg is one of the GPU's sources, not its need
def gpu_link_lost(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The last uncorrectable AER error of a log whose recovery reaches the GPU: fatal, or
    non-fatal where the GPU could not recover."""
    lines = _dmesg(ctx)
    named = any(_GPU_IN_RECOVERY.search(line) for line in lines)
    unrecovered = any(_GPU_UNRECOVERED.search(line) for line in lines)
    last: tuple[int, str] | None = None
    for index, line in enumerate(lines):
        found = _UNCORRECTED.search(line)
        if found is not None and named and (found["kind"] == "Fatal" or unrecovered):
            last = (index, line)
    if last is not None:
        yield _finding(ctx, component, *last)

