"""Bundle format v1: reading raw observations into slim, typed facts.

Names are resolved on first use: ``gpunode.facts`` imports ``bundle.kube``, and
loading ``bundle.load`` (which imports ``facts``) here eagerly would make that a
circular import whenever ``facts`` is imported first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpunode.bundle.load import load_bundle
    from gpunode.bundle.source import BundleSource, open_bundle

__all__ = ["BundleSource", "load_bundle", "open_bundle"]


def __getattr__(name: str) -> Any:
    if name == "load_bundle":
        from gpunode.bundle.load import load_bundle

        return load_bundle
    if name in ("BundleSource", "open_bundle"):
        from gpunode.bundle import source

        return getattr(source, name)
    raise AttributeError(name)
