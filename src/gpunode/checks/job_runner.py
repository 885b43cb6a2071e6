"""A component whose check is a GPU job reports what the job's libraries said of the layers
under it.

The GPU Operator's validator proves the stack by running CUDA programs (its cuda-validation
vectorAdd, the plugin validation's): when one fails, the CUDA error it prints is a library's
verdict on a lower layer (the driver too old for the job's CUDA, forward compatibility
attempted on a GPU without it, the driver's libraries missing from the container), read with
the same table as any GPU job's (``data/job_errors.toml``). The validator only suffered it:
the layer the error names is the root cause, and the validator is blocked by it. An error the
table does not read (CUDA's shared "initialization error") or that names no layer under the
validator stays the validator's own.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from gpunode.checks.base import LINE, MESSAGE, SOURCE
from gpunode.checks.context import NodeContext
from gpunode.decisive import message_of
from gpunode.job_errors import job_error
from gpunode.model import PROBLEMS, Finding

#: Components whose own check is a GPU job (catalog ids).
JOB_RUNNERS = frozenset({"validator"})


def job_named(ctx: NodeContext, component: str, findings: Sequence[Finding]) -> tuple[Finding, str] | None:
    """The first problem of ``component`` (a job runner) whose line the job-error table reads
    as naming a layer ``component`` depends on, with that layer's id; None otherwise. The
    finding carries its line (``LINE``) so that the caller can move it there."""
    if component not in JOB_RUNNERS:
        return None
    below = ctx.facts.catalog.dependencies(component)
    for finding in findings:
        if finding.status not in PROBLEMS:
            continue
        if LINE in finding.context:
            line, where = finding.context[LINE], finding.context.get(SOURCE, "")
        elif finding.evidence:
            line, where = finding.evidence[0].excerpt, finding.evidence[0].source
        else:
            continue
        found = job_error(line)
        if found is not None and found.component in below:
            said = {LINE: line, SOURCE: where, MESSAGE: message_of(line)}
            return msgspec.structs.replace(finding, context={**finding.context, **said}), found.component
    return None
