"""What ``validate --waivers`` did, in words every validate reporter prints alike."""

from __future__ import annotations

from gpunode.validation import CheckResult, ValidationReport, WaiverUse


def waiver_line(use: WaiverUse) -> str:
    """``waiver 2 (gpu.allocatable on gpu-wk-02) applied until 2099-01-01: RMA open``."""
    scope = use.selector or ", ".join(use.names) or "every node"
    where = ", ".join(use.nodes) if use.nodes else scope
    head = f"waiver {use.entry} ({use.check} on {where})"
    if use.state == "applied":
        return f"{head} applied until {use.expires}: {use.reason}"
    if use.state == "expired":
        return f"{head} expired {use.expires}, ignored: {use.reason}"
    return f"{head} not applied ({use.note}): {use.reason}"


def waiver_lines(report: ValidationReport) -> list[str]:
    return [waiver_line(use) for use in report.waivers]


def waived_label(check: CheckResult) -> str:
    """A waived result's note after its summary (empty when not waived)."""
    return f" (waived: {check.waived})" if check.waived is not None else ""
