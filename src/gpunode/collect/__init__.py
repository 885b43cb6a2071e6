"""Live collection from the Kubernetes API into a bundle (format v1)."""

from gpunode.collect.live import CollectResult, collect_bundle

__all__ = ["CollectResult", "collect_bundle"]
