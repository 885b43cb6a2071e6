"""A shell's error at a line of one of the driver's own programs names the driver, and the
shell's failure to run a program by its path is the program not found.

The driver ships nvidia-smi, nvidia-debugdump, nvidia-persistenced and the MPS control and
server as executables, and the NVIDIA runtime mounts the host's into GPU containers (the
toolkit's driver discovery of those five): a shell's "line N:" error from one of them is a
script standing where the host driver's binary should be (NVIDIA/nvidia-container-toolkit#509,
#498). bash's "<script>: line N: <path>: No such file or directory" for a path in a folder of
programs is the command it could not run (dash: "<script>: N: <path>: not found", exit 127).
Look-alikes stay as they were: the same shell error from a program of the job's image (its
sshd missing) names no layer of the node; a data file a script could not read stays a file."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.catalog import load_catalog
from gpunode.kb import load_kb

#: NVIDIA/nvidia-container-toolkit#509: nvidia-smi run in a GPU container on a host whose
#: nvidia-smi had become a wrapper of a hidden binary.
WRAPPER = "/usr/bin/nvidia-smi: line 4: /usr/bin/.nvidia-smi: No such file or directory"
#: NVIDIA/cloudai#720: an MPI worker's image without sshd (the job's image, not the node).
NO_SSHD = "/bin/bash: line 1: /usr/sbin/sshd: No such file or directory"


def _job(text: str) -> Case:
    pod = {"kind": "Pod", "name": "cuda-smi", "namespace": "default"}
    ev: dict[str, Any] = {"kind": "log", "object": pod, "text": text + "\n"}
    return synthetic_case("x-driver-utility-script", [ev], platform="docker", healthy=False,
                          cluster={"driver_mode": "host"})


def test_a_shell_that_could_not_run_a_program_by_its_path_is_not_found() -> None:
    kb = load_kb()
    assert kb.class_of(WRAPPER) == "error_not_found"
    assert kb.class_of(NO_SSHD) == "error_not_found"
    # look-alike: a file the script was asked to read (not a folder of programs) stays a file
    assert kb.class_of("bash: line 1: /etc/gpu/profile.conf: No such file or directory") == "error_file_state"


def test_a_shell_error_in_the_driver_s_own_program_names_the_driver() -> None:
    named = load_catalog().named_in
    assert named(WRAPPER) == "driver"
    assert named("/usr/bin/nvidia-cuda-mps-control: line 2: exec: nvidia-mps-real: not found") == "driver"
    # look-alikes: a script of the job's own, or the driver's program named by another's line
    assert named(NO_SSHD) is None
    assert named("/opt/run.sh: line 7: nvidia-smi: command not found") is None


def test_the_wrapper_in_a_gpu_job_s_log_is_the_driver() -> None:
    assert top_pair(_job(WRAPPER)) == ("driver", "error_not_found")


def test_a_job_image_without_its_program_leaves_the_node_healthy() -> None:
    assert top_pair(_job(NO_SSHD)) is None
