"""NVIDIA's cuda-checkpoint failing an action on a process's CUDA state relays the display
driver's answer (the tool only exposes checkpoint functionality contained in the driver,
https://github.com/NVIDIA/cuda-checkpoint#the-utility): the driver's, of the line's class
(NVIDIA/cuda-checkpoint#25). A program's own line about a process, and the tool's state output,
stay unread."""

from __future__ import annotations

from case import running_job_case
from scoreboard import top_pair

from gpunode.checks.job_words import job_cause, job_names

#: https://github.com/NVIDIA/cuda-checkpoint/issues/25
TOGGLE = 'Error toggling CUDA in process ID 98145: "operation not permitted"'
#: look-alikes: a debugger's own line naming a process, the tool's normal answer
DEBUGGER = "Error attaching to process ID 98145: operation not permitted"
STATE = "checkpointed"


def test_cuda_checkpoint_refused_is_the_driver_s_of_its_class() -> None:
    assert job_names(TOGGLE) == "driver" and job_cause(TOGGLE, "driver") is None  # the line's class
    case = running_job_case("x-ckpt", "bin/x86_64_Linux/cuda-checkpoint --toggle --pid 98145\n" + TOGGLE)
    assert top_pair(case) == ("driver", "error_permission_denied")


def test_another_program_s_process_line_is_not_read() -> None:
    assert job_names(DEBUGGER) is None
    text = "cuda-checkpoint --get-state --pid 98145\n" + STATE
    assert top_pair(running_job_case("x-ckpt-ok", text)) is None
