"""Fleet analysis: patterns across the diagnosed nodes, between diagnosis and reporters.

Pure functions over the facts gpunode already built and the node reports diagnose made:

- ``outliers``: a node that differs from the peers it should be like, without an error;
- ``factors``: what the nodes failing with one cause share and the healthy ones do not;
- ``wedges``: controllers that stopped moving (driver upgrade, MIG change, Terminating pods,
  stale markers and labels), with age, owner and the command that unwedges them;
- ``diff``: what changed between two bundles, ranked by how well it explains new failures.

This package's ``__init__`` imports nothing, so ``gpunode.model`` can load
``gpunode.fleet.model`` (the report's Structs) without the analysis.
"""
