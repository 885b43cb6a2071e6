"""A job's shared memory refused with EACCES (data/job_errors.toml shm-permission-denied):
shm_open creates its object under /dev/shm, the tmpfs the container runtime mounts, and NCCL's
shared-memory transport prints strerror after the call (include/shm.h before 2.12, misc/shmutils.cc
since: https://github.com/NVIDIA/nccl/blob/master/src/misc/shmutils.cc; NCCL troubleshooting,
shared memory: https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html;
NVIDIA/nccl#328: chmod 777 /dev/shm fixed it). Permission denied elsewhere (a device node, ssh)
and EPERM are not read."""

from __future__ import annotations

from case import gpu_job_case
from scoreboard import top_pair

from gpunode.job_errors import load_job_errors

TABLE = load_job_errors()

READ = [
    "node08:27106:27302 [0] include/shm.h:27 NCCL WARN Call to shm_open failed : Permission denied",
    "g148:14937:69361 [0] misc/shmutils.cc:93 NCCL WARN Call to open failed: Permission denied",
    "PermissionError: [Errno 13] Permission denied: '/dev/shm/psm_1a2b'",
]
UNREAD = [
    "ssh: connect to host: Permission denied (publickey)",
    "failed to open /dev/nvidia0: permission denied",
    "shm_open failed: Operation not permitted",
    "g148:14937:69361 [0] misc/shmutils.cc:93 NCCL WARN Call to open failed: No such file or directory",
]


def test_shared_memory_refused_is_the_container_runtimes() -> None:
    for line in READ:
        found = TABLE.read(line)
        assert found is not None and (found.component, found.cause) == (
            "container-runtime", "error_permission_denied"), line
    for line in UNREAD:
        found = TABLE.read(line)
        assert found is None or found.id != "shm-permission-denied", line


def test_nccls_refused_segment_in_a_gpu_job() -> None:
    log = "\n".join([READ[0], "node08:27106:27302 [0] NCCL INFO include/shm.h:41 -> 2",
                     "RuntimeError: NCCL error in ProcessGroupNCCL.cpp:290, unhandled system error"])
    assert top_pair(gpu_job_case("x-shm-eacces", log)) == ("container-runtime", "error_permission_denied")


def test_a_job_that_names_no_shared_memory_stays_healthy() -> None:
    assert top_pair(gpu_job_case("x-ssh-eacces", UNREAD[0])) is None
