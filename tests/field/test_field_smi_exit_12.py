"""nvidia-smi's exit status 12 is NVML's ERROR_LIBRARY_NOT_FOUND (the program exits with the NVML
return code that stopped it, nvmlReturn_t 12: "NVML Shared Library couldn't be found or
loaded"), so a line that relays it from nvidia-smi, or from a GPU exporter that runs nvidia-smi
and wraps its exit ("command failed. stderr: ... err: exit status 12",
utkuozdemir/nvidia_gpu_exporter#64, #146), is a library not found. The same number from another
program, or another exit status of the exporter, is not."""

from __future__ import annotations

from gpunode.kb import load_kb

NOT_FOUND = "error_not_found"


def test_exit_12_of_nvidia_smi_is_a_library_not_found() -> None:
    kb = load_kb()
    exporter = ('ts=2022-03-05T12:15:01.058Z caller=exporter.go:157 level=error '
                'error="command failed. stderr:  err: exit status 12"')
    assert kb.class_of(exporter) == NOT_FOUND
    assert kb.class_of("failed to run nvidia-smi -L: exit status 12") == NOT_FOUND


def test_other_programs_and_other_exit_codes_are_not() -> None:
    kb = load_kb()
    assert kb.class_of("failed to run modprobe nvidia: exit status 12") != NOT_FOUND
    assert kb.class_of('level=error error="command failed. stderr:  err: exit status 1"') != NOT_FOUND
    assert kb.class_of("nvidia-smi exited with exit status 120") != NOT_FOUND
    assert kb.class_of("nvidia-smi --query-gpu=name ran in 12 ms, exit status 0") != NOT_FOUND
