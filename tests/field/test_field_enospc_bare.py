"""A GPU job's bare ENOSPC (Python's "[Errno 28] No space left on device" with no file name
after it) names the container's runtime-sized storage, its /dev/shm first: Python appends the
file name only where the failed call had one (docs.python.org, OSError), so a bare one is a
write into a file a library made, in a GPU job its shared memory (multiprocessing's SemLock,
sem_overview(7): named semaphores live under /dev/shm; PyTorch's DataLoader tensors); the
runtime mounts /dev/shm at 64 MB by default (Docker's --shm-size), and the kubelet evicts pods
before the node's own disks fill (node-pressure eviction's default thresholds).

Sources: https://docs.python.org/3/library/exceptions.html#OSError,
https://docs.docker.com/reference/cli/docker/container/run/,
https://kubernetes.io/docs/concepts/scheduling-eviction/node-pressure-eviction/; reports
https://github.com/ultralytics/ultralytics/issues/1238 (fixed by --ipc=host / --shm-size),
https://github.com/Plachtaa/VITS-fast-fine-tuning/issues/397 and
https://github.com/MVIG-SJTU/AlphaPose/issues/1163 (SemLock in a container, free disk)."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.job_errors import load_job_errors

TABLE = load_job_errors()

BARE = [
    "OSError: [Errno 28] No space left on device",
    # multiprocessing's SemLock, a named semaphore under /dev/shm (AlphaPose#1163)
    "    sl = self._semlock = _multiprocessing.SemLock(\nOSError: [Errno 28] No space left on device",
    "[rank24]: OSError: [Errno 28] No space left on device  ",
]

NOT_READ = [
    # a path of the program's own: its file system, not the runtime's
    "OSError: [Errno 28] No space left on device: '/data/checkpoints/step-100.pt'",
    # joblib's warning: the job goes on in one process (VITS-fast-fine-tuning#397)
    "UserWarning: [Errno 28] No space left on device.  joblib will operate in serial mode",
    # the kernel's inotify watch limit, the same errno for another resource
    "failed to create fsnotify watcher: no space left on device",
    "Filesystem      Size  Used Avail Use% Mounted on",
]


def _job(name: str, text: str, *, healthy: bool) -> Case:
    return synthetic_case(f"enospc-{name}", [
        {"kind": "workload", "name": "train-0", "namespace": "default", "container": "train",
         "resources": {"limits": {"nvidia.com/gpu": "1"}}, "state": "Error", "exit_code": 1},
        {"kind": "log", "object": {"kind": "Pod", "name": "train-0", "namespace": "default"},
         "container": "train", "text": text + "\n"},
    ], healthy=healthy)


@pytest.mark.parametrize("text", BARE)
def test_a_bare_enospc_is_the_runtimes_storage(text: str) -> None:
    assert top_pair(_job(str(BARE.index(text)), text, healthy=False)) == (
        "container-runtime", "error_resource_exhausted")


@pytest.mark.parametrize("line", NOT_READ)
def test_a_named_path_or_a_warning_is_not(line: str) -> None:
    found = TABLE.read(line)
    assert found is None or found.id != "job-enospc-bare", found


def test_a_running_job_with_the_joblib_warning_stays_healthy() -> None:
    case = synthetic_case("enospc-joblib-healthy", [
        {"kind": "workload", "name": "train-0", "namespace": "default", "container": "train",
         "resources": {"limits": {"nvidia.com/gpu": "1"}}, "state": "Running"},
        {"kind": "log", "object": {"kind": "Pod", "name": "train-0", "namespace": "default"},
         "container": "train",
         "text": "UserWarning: [Errno 28] No space left on device.  joblib will operate in serial mode\n"
                 "epoch 1 loss 0.412\n"},
    ])
    assert top_pair(case) is None
