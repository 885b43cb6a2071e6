"""A Go program's wait status on a line of its own after the error a child printed is not the
reason: os/exec's ExitError reads "exit status N" (ProcessState.String,
https://github.com/golang/go/blob/master/src/os/exec_posix.go) and runc relays a hook's stderr
after the hook's exit ("%w, stdout: %s, stderr: %s",
https://github.com/opencontainers/runc/blob/main/libcontainer/configs/config.go), so a toolkit
hook's stderr may end on its own child's "exit status 1". The errno before it says why: the
kernel's EINVAL from pivot_root is no configuration value (NVIDIA/nvidia-container-toolkit#1385's
update-ldcache hook on a RAM root). A configuration's invalid argument stays so, and an exit
status after a colon is the chain's own error."""

from __future__ import annotations

import pytest
from case import synthetic_case
from scoreboard import top_pair

from gpunode.kb import load_kb

HOOK = ("Error response from daemon: failed to create task for container: failed to create shim task: "
        "OCI runtime create failed: runc create failed: unable to start container process: error during "
        "container init: error running createContainer hook #1 exit status 1, stdout: , stderr: Error "
        "updating ldcache: error running pivot_root: pivot_root .: invalid argument")


@pytest.mark.parametrize("tail", [" exit status 1", "\nexit status 1", ""])
def test_a_wait_status_after_an_errno_leaves_the_errno_to_say_why(tail: str) -> None:
    assert load_kb().class_of(HOOK + tail) is None  # EINVAL of a syscall: no class of its own


@pytest.mark.parametrize(("line", "cls"), [
    ('Error: invalid argument "x" for "--mode" flag exit status 1', "error_config_invalid"),
    ("Error: open /etc/nvidia-container-runtime/config.toml: permission denied exit status 2",
     "error_permission_denied"),
])
def test_the_words_before_a_wait_status_keep_their_class(line: str, cls: str) -> None:
    assert load_kb().class_of(line) == cls


def test_an_event_ending_on_the_hooks_wait_status_is_the_toolkits_unclassified_error() -> None:
    case = synthetic_case("x-hook-exit-status", [
        {"kind": "workload", "name": "plex", "namespace": "media", "container": "plex",
         "state": "RunContainerError"},
        {"kind": "event", "object": {"kind": "Pod", "name": "plex", "namespace": "media"},
         "type": "Warning", "reason": "Failed", "message": HOOK + "\nexit status 1\n"}],
        platform="docker", healthy=False, cluster={"driver_mode": "host"})
    assert top_pair(case) == ("container-toolkit", "error_unclassified")
