"""Which stack component a pod belongs to — the one decision the collector borrows.

The component catalog (``gpunode.catalog``) owns this knowledge; this module is
the single place the collector (and the test API server) asks it, so swapping
the source of truth touches one function.
"""

from __future__ import annotations

from functools import cache
from typing import Protocol

from gpunode.collect.slim import Pod, Workload


class _Recogniser(Protocol):
    def component_of(self, owner_names: list[str], labels: dict[str, str],
                     containers: list[tuple[str, str]]) -> str | None: ...


@cache
def _recogniser() -> _Recogniser:
    from gpunode.catalog import Recogniser, load_catalog

    return Recogniser(load_catalog())


def component_of(pod: Pod) -> str | None:
    """The catalog component id of ``pod``, or None when it is not part of the stack."""
    return _recogniser().component_of(
        [o.name for o in pod.metadata.owner_references],
        pod.metadata.labels,
        [(c.name, c.image) for c in pod.spec.containers],
    )


def cluster_scoped(component: str) -> bool:
    """Whether the catalog judges ``component`` once for the cluster (an operator)."""
    from gpunode.catalog import load_catalog

    return load_catalog().get(component).scope == "cluster"


def workload_component(workload: Workload) -> str | None:
    """The component a DaemonSet/Deployment deploys (its own name stands for the owner)."""
    template = workload.spec.template
    return _recogniser().component_of(
        [workload.metadata.name],
        template.metadata.labels,
        [(c.name, c.image) for c in template.spec.containers],
    )
