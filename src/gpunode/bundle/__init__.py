"""Bundle format v1: reading raw observations into slim, typed facts."""

from gpunode.bundle.load import load_bundle
from gpunode.bundle.source import BundleSource, open_bundle

__all__ = ["BundleSource", "load_bundle", "open_bundle"]
