"""A pod being deleted whose last error is a step of its own shutdown that failed: the
process is ending and does not retry, so even a conflict that a running loop would retry is
its last word (the node it should take out of a shared object stays in it). The same line
from a pod that is not being deleted, and a conflict of the running loop while the pod is
being deleted, are no such failure.
Lines as the public report quotes them (NVIDIA dra-driver-nvidia-gpu commit 980a6a1's
issue: the ComputeDomain daemon's shutdown)."""

from __future__ import annotations

from gpunode.checks.decisive import running_finding
from gpunode.facts import LogFile
from gpunode.kb import load_kb

KB = load_kb()
POD = ("nvidia-dra-driver-gpu", "cd-daemon-x")

_SHUTDOWN = [
    "I1007 16:49:01.678050       1 podmanager.go:196] Successfully updated node n06 status to NotReady",
    "E1007 16:49:01.681345       1 computedomain.go:161] Failed to remove node from ComputeDomain during "
    'shutdown: Operation cannot be fulfilled on computedomains.resource.nvidia.com "cd": '
    "the object has been modified; please apply your changes to the latest version and try again",
]
# a conflict of the daemon's running loop, logged while the pod is being deleted: no step of
# the shutdown, the loop tries again until it stops
_LOOP = [
    "I1007 16:49:01.678050       1 podmanager.go:196] Successfully updated node n06 status to NotReady",
    "E1007 16:49:01.681345       1 computedomain.go:120] Failed to update ComputeDomain status: "
    'Operation cannot be fulfilled on computedomains.resource.nvidia.com "cd": '
    "the object has been modified; please apply your changes to the latest version and try again",
]


def _log(lines: list[str]) -> LogFile:
    return LogFile("logs/nvidia-dra-driver-gpu/cd-daemon-x/compute-domain-daemon.log", *POD,
                   "compute-domain-daemon", False, tuple(lines))


def test_a_failed_shutdown_step_of_a_pod_being_deleted_is_its_last_word() -> None:
    found = running_finding(KB, "compute-domain-daemon", [_log(_SHUTDOWN)], deleting={POD})
    assert found is not None
    assert found.component == "compute-domain-daemon"
    assert found.cause == "error_unclassified"
    assert "during shutdown" in str(found.context)


def test_the_same_conflict_from_a_pod_not_being_deleted_heals_by_retrying() -> None:
    assert running_finding(KB, "compute-domain-daemon", [_log(_SHUTDOWN)]) is None
    assert running_finding(KB, "compute-domain-daemon", [_log(_SHUTDOWN)],
                           deleting={("other", "pod")}) is None


def test_a_conflict_of_the_running_loop_is_no_failed_step() -> None:
    assert running_finding(KB, "compute-domain-daemon", [_log(_LOOP)], deleting={POD}) is None
