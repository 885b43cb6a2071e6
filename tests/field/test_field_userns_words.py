"""A container engine's words for the kernel refusing it a user namespace by the kernel's own
settings (data/job_errors/user_namespaces.toml): Apptainer's starter naming EINVAL ('user
namespace disabled', 'not supported by your system') or the Debian sysctl for EPERM, and
Podman's or Buildah's 'user namespaces are not enabled in /proc/sys/user/max_user_namespaces'
(printed only where the sysctl reads 0) are the node's kernel (error_permission_denied). A
bare EPERM ('not allowed to create user namespace', bwrap's 'No permissions to creating new
namespace'), which a runtime's seccomp profile also returns, and a limit reached are not read
so; a job that merely mentions user namespaces stays healthy.

Sources: apptainer/apptainer cmd/starter/c/starter.c (nserror), containers/podman
pkg/rootless/rootless_linux.c and containers/buildah pkg/unshare/unshare.c; lines from
apptainer/apptainer#686, containers/podman#7704, siderolabs/talos#4385."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.job_errors import load_job_errors

TABLE = load_job_errors()

REFUSED = {
    # https://github.com/apptainer/apptainer/issues/686
    "apptainer-686": "\n".join([
        "INFO:    Setting --writable-tmpfs (required by nvidia-container-cli)",
        "ERROR  : Failed to create user namespace: user namespace disabled"]),
    # https://github.com/containers/podman/issues/7704
    "podman-7704": "\n".join([
        "cannot clone: Invalid argument",
        "user namespaces are not enabled in /proc/sys/user/max_user_namespaces",
        "Error: could not get runtime: cannot re-exec process"]),
    # https://github.com/siderolabs/talos/issues/4385
    "talos-4385": "\n".join([
        "cannot clone: No space left on device",
        "user namespaces are not enabled in /proc/sys/user/max_user_namespaces",
        "Error: cannot re-exec process"]),
    # starter.c nserror(): EPERM where the Debian sysctl exists
    "apptainer-debian-sysctl": "FATAL:   Failed to create user namespace: user namespace requires "
                               "to set /proc/sys/kernel/unprivileged_userns_clone to 1",
}

NOT_THE_KERNEL_SETTING = [
    # EPERM without the sysctl: seccomp or AppArmor return it too
    "FATAL:   Failed to create user namespace: not allowed to create user namespace",
    "bwrap: No permissions to creating new namespace, likely because the kernel does not allow "
    "non-privileged user namespaces. On e.g. debian this can be enabled with "
    "'sysctl kernel.unprivileged_userns_clone=1'.",
    # a limit reached, not switched off
    "FATAL:   Failed to create user namespace: maximum number of user namespaces exceeded, "
    "check /proc/sys/user/max_user_namespaces",
    "INFO:    A system administrator may need to enable user namespaces",
]


def _job(name: str, text: str) -> Case:
    return synthetic_case(f"userns-{name}", [
        {"kind": "workload", "name": "gpu-job", "namespace": "default", "container": "main",
         "state": "CrashLoopBackOff", "restarts": 3, "exit_code": 255},
        {"kind": "log", "object": {"kind": "Pod", "name": "gpu-job", "namespace": "default"},
         "container": "main", "text": text + "\n"},
    ], healthy=False)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_user_namespace_is_the_kernels_setting(name: str) -> None:
    assert top_pair(_job(name, REFUSED[name])) == ("kernel", "error_permission_denied")


@pytest.mark.parametrize("line", NOT_THE_KERNEL_SETTING)
def test_other_refusals_are_not_read_as_the_kernels_setting(line: str) -> None:
    entry = TABLE.read(line)
    assert entry is None or not entry.id.startswith("userns-")
    assert top_pair(_job("other", line)) != ("kernel", "error_permission_denied")


def test_healthy_job_mentioning_user_namespaces_stays_healthy() -> None:
    case = synthetic_case("userns-healthy", [
        {"kind": "workload", "name": "gpu-job", "namespace": "default", "container": "main",
         "state": "Running"},
        {"kind": "log", "object": {"kind": "Pod", "name": "gpu-job", "namespace": "default"},
         "container": "main",
         "text": "INFO:    Creating user namespace\nINFO:    user namespace created\nstep 1 loss 0.3\n"},
    ])
    assert top_pair(case) is None
