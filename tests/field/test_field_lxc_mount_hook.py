"""LXC's record of a failed mount hook on a GPU container: the hook that puts the GPU into an
LXC, LXD or Incus container is LXC's NVIDIA hook (hooks/nvidia in lxc/lxc), which refuses to
run as anything but a mount hook and execs nvidia-container-cli configure on the container's
rootfs (LXD's and Incus's nvidia.runtime, Proxmox guides' lxc.hook.mount). LXC logs its exit as
"run_buffer: ... Script exited with status 1" and then "lxc_setup: ... Failed to run mount
hooks": the toolkit's layer, with the class of the line where the hook's own words were not
kept. LXC's lines about the hook it ran without failing, and a failed hook of another kind
(autodev), name no toolkit.

Public lines: lxc/lxd#6262 (LXD snap, nvidia.runtime=true), zabbly/incus#81 (Incus 6.11)."""

from __future__ import annotations

from case import Case, synthetic_case
from scoreboard import top_pair

#: zabbly/incus#81, the LXC start log as the report pasted it.
_AT = "lxc ai 20250405020851.656 ERROR    "
INCUS = (f"{_AT}utils - ../src/lxc/utils.c:run_buffer:571 - Script exited with status 1\n"
         f"{_AT}conf - ../src/lxc/conf.c:lxc_setup:3948 - Failed to run mount hooks\n"
         f"{_AT}start - ../src/lxc/start.c:do_start:1268 - Failed to setup container \"ai\"\n")
#: Look-alike: LXC's trace of the same hook run without an error.
HOOK_RAN = ("lxc ai 20250405020851.650 INFO     conf - ../src/lxc/conf.c:run_script_argv:340 - "
            "Executing script \"/usr/share/lxc/hooks/nvidia\" for container \"ai\", "
            "config section \"lxc\"\n")
#: Look-alike: a failed autodev hook (not the NVIDIA hook's kind).
AUTODEV = INCUS.replace("Failed to run mount hooks", "Failed to run autodev hooks")


def _container(journal: str, state: str, message: str | None = None) -> Case:
    pod: dict[str, object] = {"kind": "workload", "name": "ai", "namespace": "default",
                              "container": "ai", "state": state}
    journal_ev = {"kind": "node-cmd", "name": "journal-runtime.txt", "text": journal}
    evidence: list[dict[str, object]] = [pod, journal_ev]
    if message is not None:
        evidence.append({"kind": "event", "object": {"kind": "Pod", "name": "ai", "namespace": "default"},
                         "type": "Warning", "reason": "Failed", "message": message})
    return synthetic_case("x-lxc-mount-hook", evidence, healthy=False, platform="ubuntu",
                          cluster={"driver_mode": "host"})


FORKSTART = ("Error: Failed to run: /opt/incus/bin/incusd forkstart ai /var/lib/incus/containers "
             "/run/incus/ai/lxc.conf: exit status 1")


def test_a_failed_mount_hook_of_a_gpu_container_is_the_toolkits() -> None:
    top = top_pair(_container(INCUS, "RunContainerError", FORKSTART))
    assert top == ("container-toolkit", "error_unclassified")


def test_the_hook_named_in_a_pods_event_alone_is_the_toolkits() -> None:
    # the Proxmox form: LXC's lines without their log prefix, in the start failure's message
    message = "run_buffer: 314 Script exited with status 1\nlxc_setup: 3388 Failed to run mount hooks\n"
    top = top_pair(synthetic_case("x-lxc-event", [
        {"kind": "workload", "name": "lxc-102", "namespace": "default", "container": "lxc-102",
         "state": "RunContainerError"},
        {"kind": "event", "object": {"kind": "Pod", "name": "lxc-102", "namespace": "default"},
         "type": "Warning", "reason": "Failed", "message": message}],
        healthy=False, cluster={"driver_mode": "host"}))
    assert top is not None and top[0] == "container-toolkit"


def test_the_hook_run_without_an_error_is_healthy() -> None:
    assert top_pair(_container(HOOK_RAN, "Running")) is None


def test_another_kind_of_hook_failing_names_no_toolkit() -> None:
    top = top_pair(_container(AUTODEV, "RunContainerError", FORKSTART))
    assert top is None or top[0] != "container-toolkit"
