"""A container's /dev/shm full, in the forms a job shows it besides ENOSPC (issue 20): a bus
error the job puts down to its shared memory (a mapped tmpfs page that cannot be backed raises
SIGBUS, not ENOSPC; PyTorch's DataLoader SIGBUS handler's fixed message, read by its opening
where a paste cut it, torch/csrc/DataLoader.cpp), and df's row for /dev/shm with nothing left.
Both name the runtime's 64 MB default (container-runtime, resource exhausted, as the table's
shm-no-space). A bus error that names no shared memory and a /dev/shm with room left are not
read so.

Sources: pangeo-data/pangeo-docker-images#258, msr-fiddle/pipedream#28 (PyTorch's DataLoader
words), kubeflow/pipelines#6510 (the same on a Kubernetes GPU pool, fixed with a memory-backed
emptyDir at /dev/shm); df's columns: coreutils' df manual; Python's OSError (strerror, then the
filename: aigc-apps/sd-webui-EasyPhoto#90); PyTorch's shared tensor files, /torch_<pid>_<n> made
with shm_open (its README's shared-memory note; NVIDIA/flownet2-pytorch#43, idiap/ESLAM#20,
logicalclocks/hopsworks#1557)."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.job_errors import load_job_errors

TABLE = load_job_errors()

_BUS = ("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared "
        "memory (shm).")

FULL = {
    "dataloader-bus-error": "\n".join([
        _BUS, _BUS, "Traceback (most recent call last):",
        '  File "/opt/conda/lib/python3.6/site-packages/torch/utils/data/_utils/signal_handling.py", '
        "line 63, in handler",
        "    _error_if_any_worker_fails()",
        "RuntimeError: DataLoader worker (pid 325) is killed by signal: Bus error."]),
    # the handler's message cut in a paste before "shared memory (shm)" (horovod/horovod#1081)
    "dataloader-bus-error-cut": "ERROR: Unexpected bus error encountered in worker. This might be caused by "
                                "insufficient",
    "df-human": "Filesystem      Size  Used Avail Use% Mounted on\n"
                "shm              64M   64M     0 100% /dev/shm",
    "df-blocks": "Filesystem     1K-blocks  Used Available Use% Mounted on\n"
                 "shm                65536 65536         0 100% /dev/shm",
    # Python's OSError names the path after the error (sd-webui-EasyPhoto#90)
    "python-oserror-path": "OSError: [Errno 28] No space left on device: '/dev/shm/psm_3f2a1b'",
    # PyTorch's shared tensor files under /dev/shm (hopsworks#1557; flownet2-pytorch#43, older
    # releases with no errno appended)
    "torch-share-file": "    fd, size = storage._share_fd_cpu_()\n"
                        "RuntimeError: unable to write to file </torch_739_144252761_4>: No space left on "
                        "device (28)",
    "torch-share-file-old": "RuntimeError: unable to write to file </torch_18693_1954506624> at "
                            "/pytorch/torch/lib/TH/THAllocator.c:271",
}

NOT_SHM = [
    "RuntimeError: DataLoader worker (pid 325) is killed by signal: Bus error.",
    "Bus error (core dumped)",
    "shm              64M   12M   53M  19% /dev/shm",
    "overlay          97G   97G     0 100% /",
    "OSError: [Errno 28] No space left on device: '/data/checkpoints/step-100.pt'",
    "RuntimeError: unable to write to file </torch_1394_2747491098>: Too many open files (24)",
]


def _job_log(name: str, text: str) -> Case:
    return synthetic_case(f"shm-{name}", [
        {"kind": "workload", "name": "train-0", "namespace": "default", "container": "train",
         "state": "Running"},
        {"kind": "log", "object": {"kind": "Pod", "name": "train-0", "namespace": "default"},
         "container": "train", "text": text + "\n"},
    ], healthy=False)


@pytest.mark.parametrize("name", sorted(FULL))
def test_a_full_dev_shm_is_the_runtimes_limit(name: str) -> None:
    assert top_pair(_job_log(name, FULL[name])) == ("container-runtime", "error_resource_exhausted")


@pytest.mark.parametrize("line", NOT_SHM)
def test_a_bus_error_or_df_row_without_a_full_shm_is_not(line: str) -> None:
    found = TABLE.read(line)
    assert found is None or found.id not in ("shm-bus-error", "shm-df-full", "shm-no-space",
                                             "torch-shm-file-write"), found


def test_a_dev_shm_with_room_left_stays_healthy() -> None:
    text = "Filesystem      Size  Used Avail Use% Mounted on\nshm              64M   12M   53M  19% /dev/shm"
    assert top_pair(_job_log("room", text)) is None
