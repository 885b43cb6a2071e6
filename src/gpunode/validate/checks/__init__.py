"""The validation checks; importing this package registers them all, in report order."""

from gpunode.validate.checks import (
    gpu_health,
    infrastructure,
    network,
    observability,
    scheduling,
    storage,
)

__all__ = ["gpu_health", "infrastructure", "network", "observability", "scheduling", "storage"]
