"""Two general wordings a class did not read: a limit a program has reached ("already at
maximum", "limit reached", "maximum number of X exceeded", "cannot add more") is a resource
exhausted, and a setting whose value the program refuses ("invalid <name> strategy/mode/
policy", "must be one of ...") is a configuration holding an invalid value. Each line is a
public one or the public format of one; each has a look-alike that must not take the class
(a Go panic's invalid address, CUDA's invalid ordinal, retries given up, a deadline)."""

from __future__ import annotations

import pytest

from gpunode.kb import load_kb

KB = load_kb()


@pytest.mark.parametrize(
    ("line", "cls"),
    [
        # kubernetes-sigs/dra-driver-nvidia-gpu: a ComputeDomain's node index table is full
        ("Failed to reconcile work item: error updating node info in ComputeDomain: error getting "
         "next available index: cannot add more nodes, already at maximum (18)", "error_resource_exhausted"),
        # the general forms of the same: a quota, a limit, a maximum count
        ("failed to create claim: quota exceeded for resourceclaims", "error_resource_exhausted"),
        ("error: maximum number of VFs exceeded", "error_resource_exhausted"),
        ("toomanyrequests: You have reached your pull rate limit. 429 Too Many Requests",
         "error_resource_exhausted"),
        # NVIDIA/k8s-device-plugin#1469: a discovery strategy the plugin does not know
        ("error starting plugins: error getting plugins: unable to create plugins: failed to construct "
         "resource managers: invalid device discovery strategy", "error_config_invalid"),
        # the MIG strategy's validation in NVIDIA's deployment tools ("must be single or mixed")
        ("invalid MIG strategy: all (must be single or mixed)", "error_config_invalid"),
        ("Invalid MIG strategy 'all'. Must be one of ['none', 'single', 'mixed'] or left unset.",
         "error_config_invalid"),
    ],
)
def test_line_falls_in_its_class(line: str, cls: str) -> None:
    assert KB.class_of(line) == cls


@pytest.mark.parametrize(
    ("line", "cls"),
    [
        # a Go program's own bug, not a setting
        ("panic: runtime error: invalid memory address or nil pointer dereference", None),
        # CUDA's device error keeps its class
        ("CUDA error: invalid device ordinal", "error_device"),
        # the toolkit giving up its retries is no resource (its catalogued cause reads it)
        ("Max retries reached 3/3, aborting", None),
        # a deadline is a connection that did not answer
        ("rpc error: code = DeadlineExceeded desc = context deadline exceeded", "error_unreachable"),
        # a wall-clock limit is no resource a node runs out of
        ("job step aborted: time limit exceeded", None),
        # a healthy report of a limit
        ("inotify limit: 8192 watches, 112 in use", None),
    ],
)
def test_look_alike_keeps_its_class(line: str, cls: str | None) -> None:
    assert KB.class_of(line) == cls
