"""Live collection from the Kubernetes API into a bundle (format v1).

Names resolve on first use, so importing a light submodule (``collect.mustgather``
for ``diagnose --from``) does not load the HTTP and Kubernetes clients.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpunode.collect.live import CollectResult, collect_bundle

__all__ = ["CollectResult", "collect_bundle"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from gpunode.collect import live

        return getattr(live, name)
    raise AttributeError(name)
