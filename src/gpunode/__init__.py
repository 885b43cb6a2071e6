"""gpunode: what is actually running on each GPU node, and which component to check first."""

__version__ = "0.1.0"
