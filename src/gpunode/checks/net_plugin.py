"""A GPU job's NCCL net plugin that found no provider, and whether NCCL went on without it.

A net plugin that finds no provider (libfabric's ``fi_getinfo`` failing with FI_ENODATA,
aws-ofi-nccl's "NET/OFI ... fi_getinfo() call failed: No data available"; the job-error
table's ``libfabric-getinfo-nodata``) is the job's failure only where NCCL does not go on
over another network: NCCL tries its plugin first and, where the plugin does not initialise,
carries on over its own IB or socket transport ("Using network Socket"), as images that ship
the plugin do on nodes without EFA. A leaf module: checks.workload_logs reads it.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpunode.relazy import lazy_compile

#: libfabric's fi_getinfo failing (the job-error table's ``libfabric-getinfo-nodata``).
_GETINFO_FAILED = lazy_compile(r"\bfi_getinfo\b(?:\(\))?(?: call)? (?:failed|returned)\b")
#: NCCL choosing its own transport after the plugin (init.cc: "Using network Socket" / "IB").
_OWN_NETWORK = lazy_compile(r"\bUsing network (?:Socket|IB)\b")


def plugin_fell_back(line: str, line_no: int, lines: Sequence[str]) -> bool:
    """Whether ``line`` (at 1-based ``line_no``) is a net plugin finding no provider after
    which NCCL went on over its own IB or socket transport: no failure of the job."""
    return bool(_GETINFO_FAILED.search(line)) and any(_OWN_NETWORK.search(later) for later in lines[line_no:])
