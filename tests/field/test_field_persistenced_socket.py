"""A GPU container's start failing because the driver's persistence daemon's socket, which
NVIDIA's runtime mounts into GPU containers where the daemon runs (listed in the CDI spec when
nvidia-persistenced is used), is gone: the daemon shipped with the driver stopped, the
driver's. The same socket refused with "no such device or address" (a pod's own /run bind
mount over the runtime's) is not this.

Sources: https://github.com/containers/toolbox/pull/1577 (the socket in the CDI spec when the
persistence daemon is used), https://github.com/NVIDIA/nvidia-docker/issues/1758 (the socket
exists while nvidia-persistenced runs), https://github.com/CentaurusInfra/alnair/issues/119
(the look-alike: a pod's /run mount)."""

from __future__ import annotations

from case import Case, synthetic_case
from scoreboard import top_pair

_GONE = ("failed to create shim task: OCI runtime create failed: runc create failed: unable to start "
         "container process: error during container init: failed to fulfil mount request: open "
         "/run/nvidia-persistenced/socket: no such file or directory")
_OVERLAID = ("failed to create shim: OCI runtime create failed: container_linux.go:380: starting container "
             "process caused: process_linux.go:545: container init caused: Running hook #0:: error running "
             "hook: exit status 1, stdout: , stderr: nvidia-container-cli: mount error: file creation "
             "failed: /var/lib/docker/overlay2/4012b48f/merged/run/nvidia-persistenced/socket: "
             "no such device or address: unknown")


def _case(message: str) -> Case:
    return synthetic_case("x-persistenced", [
        {"kind": "workload", "name": "job-0", "namespace": "ci", "container": "job",
         "resources": {"limits": {"nvidia.com/gpu": "1"}}, "state": "RunContainerError", "message": message},
    ], healthy=False, cluster={"driver_mode": "host"})


def test_the_persistence_daemon_s_socket_gone_is_the_driver_s() -> None:
    found = top_pair(_case(_GONE))
    assert found is not None and found[0] == "driver"


def test_the_socket_over_a_pod_s_own_run_mount_is_not_the_driver_s() -> None:
    found = top_pair(_case(_OVERLAID))
    assert found is None or found[0] != "driver"
