"""An OCI hook that opens the container's /proc through runc's libcontainer WithProcfd ("open o_path
procfd: ...") and finds nothing under the root filesystem's /proc, relayed by the runtime's
journal or runsc's log while a workload fails to start: the runtime ran its createContainer
hooks before mounting /proc (containers/crun#2167; google/gvisor#13283). Look-alikes: runc's
own open of a missing volume target the same way (outside /proc), and the same hook line on a
node whose workloads all run, say nothing against the runtime."""

from __future__ import annotations

from typing import Any

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

HOOK = ("failed to mount modified params file: open o_path procfd:\n"
        "  open /run/containerd/io.containerd.runtime.v2.task/k8s.io/abc/rootfs"
        "/proc/driver/nvidia/params:\n"
        "  no such file or directory\n")
VOLUME = ("error mounting \"/data/pg\" to rootfs at \"/var/lib/postgresql/data\": change mount propagation "
          "through procfd: open o_path procfd: "
          "open /var/lib/docker/overlay2/abc/merged/var/lib/postgresql/data: "
          "no such file or directory: unknown\n")


def _node(where: dict[str, Any], state: str) -> Case:
    return synthetic_case("x-hook-proc", [
        {"kind": "workload", "name": "gpu-pod", "namespace": "default", "state": state}, where,
    ], healthy=state == "Running", cluster={"runtime": "containerd2", "cdi": True})


@pytest.mark.parametrize("where", [
    {"kind": "node-cmd", "name": "journal-runtime.txt", "text": HOOK},
    {"kind": "node-file", "path": "var/log/runsc/runsc.log.gofer.txt", "text": HOOK},
])
def test_a_hook_finding_no_proc_in_the_rootfs_is_the_runtimes_ordering(
        where: dict[str, Any]) -> None:
    assert top_pair(_node(where, "ContainerCreating")) == ("container-runtime", "error_not_found")


def test_a_volume_target_opened_the_same_way_is_not_the_hook_ordering() -> None:
    journal = {"kind": "node-cmd", "name": "journal-runtime.txt", "text": VOLUME}
    top = top_pair(_node(journal, "ContainerCreating"))
    assert top != ("container-runtime", "error_not_found"), top


def test_the_hook_line_with_every_workload_running_says_nothing() -> None:
    log = {"kind": "node-file", "path": "var/log/runsc/runsc.log.gofer.txt", "text": HOOK}
    top = top_pair(_node(log, "Running"))
    assert top is None or top[0] != "container-runtime", top
