"""Cluster readiness validation (``gpunode validate``).

Passive checks (``checks/``) are pure functions over bundle facts, registered
with an id, category and title (``registry``); ``runner`` folds them into a
``ValidationReport`` (``model``); ``active/`` runs test workloads through the
API; ``report/`` renders table, JSON, markdown and JUnit. Nothing heavy is
imported here, so ``gpunode --help`` stays fast.
"""
