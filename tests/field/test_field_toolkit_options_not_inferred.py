"""The runtime's unit failing to restart after nvidia-ctk patched its config without the
options of any existing low-level runtime ("Could not infer options from runtimes [runc
crun]", nvidia-container-toolkit pkg/config/engine) is the config the toolkit wrote
(NVIDIA/holodeck#824: CRI-O's drop-in without runtime tables). Look-alikes: the same warning
where the runtime restarts (common on healthy installs), a unit failure before the toolkit
wrote anything, and a failure followed by a start that worked."""

from __future__ import annotations

from case import synthetic_case
from scoreboard import top_pair

_CONFIGURE = (
    "+ sudo nvidia-ctk runtime configure --runtime=crio --set-as-default --enable-cdi=false\n"
    'time="2026-05-25T14:02:55Z" level=warning msg="Could not infer options from runtimes [runc crun]"\n'
    'time="2026-05-25T14:02:55Z" level=info '
    'msg="Wrote updated config to /etc/crio/crio.conf.d/99-nvidia.toml"\n'
    "+ sudo systemctl restart crio\n")
_CONTAINERD = (
    "INFO[0000] Using config version 2\n"
    "WARN[0000] could not infer options from runtimes [runc crun]; using defaults\n"
    "INFO[0000] Wrote updated config to /etc/containerd/config.toml\n")
_FAILED = "Job for crio.service failed because the control process exited with error code.\n"
_RULE = ("container-toolkit", "error_config_invalid")


def _top(journal: str, runtime: str = "crio") -> tuple[str, str] | None:
    evidence = [{"kind": "node-cmd", "name": "journal-runtime.txt", "text": journal}]
    return top_pair(synthetic_case("x-options-not-inferred", evidence, healthy=False, platform="crio",
                                   cluster={"runtime": runtime, "driver_mode": "host"}))


def test_a_runtime_that_fails_after_the_toolkit_wrote_its_config() -> None:
    assert _top(_CONFIGURE + _FAILED) == _RULE
    failed = "Job for containerd.service failed because the control process exited with error code.\n"
    assert _top(_CONTAINERD + failed, runtime="containerd") == _RULE


def test_the_warning_with_a_runtime_that_restarts_is_healthy() -> None:
    assert _top(_CONFIGURE) != _RULE
    assert _top(_CONTAINERD, runtime="containerd") != _RULE


def test_a_failure_before_the_toolkit_wrote_anything_is_not_this() -> None:
    assert _top(_FAILED + _CONFIGURE) != _RULE


def test_a_later_start_that_worked_is_not_this() -> None:
    started = "Started crio.service - Container Runtime Interface for OCI (CRI-O).\n"
    assert _top(_CONFIGURE + _FAILED + started) != _RULE
