"""A node agent's read of one process's file under /proc that fails because the process has
exited since the agent listed it (checks/decisive.py ``_NOT_THE_STACKS``): the kernel answers
ESRCH ("no such process") or, for a process other than init, ENOENT. leptonai/gpud#1238: GPUd
lists CUDA processes through NVML, reads /proc/<pid>/environ, and a short-lived job that exited
in between turned its accelerator-nvidia-processes check Unhealthy until PR #1239 skipped the
vanished PID (util-linux/util-linux#3087 does the same for lsns). A race with a job, not the
agent's failure; the agent's read of a host file that is not there, or of init's, still is."""

from __future__ import annotations

from case import Case, synthetic_case
from scoreboard import top_pair

#: leptonai/gpud#1238, GPUd's JSON log line.
ESRCH = ('{"level":"warn","ts":"2026-04-23T00:50:09.175Z","caller":"log/log.go:175","msg":"error getting '
         'processes","error":"failed to get process 2748003 environ: open /proc/2748003/environ: no such '
         'process"}')
#: The same race answered ENOENT (the process already reaped).
ENOENT = ('{"level":"error","msg":"error getting processes","error":"failed to get process 41877 status: '
          'open /proc/41877/status: no such file or directory"}')
#: Look-alikes: the driver's own file under /proc missing (no driver loaded), in the same words.
DRIVER_FILE = ('{"level":"error","msg":"error reading driver version","error":"open '
               '/proc/driver/nvidia/version: no such file or directory"}')


def _agent(text: str) -> Case:
    evidence = [{"kind": "pod-state", "component": "dcgm-exporter", "state": "Running"},
                {"kind": "log", "component": "dcgm-exporter", "text": text + "\n"}]
    return synthetic_case("x-vanished-process", evidence, healthy=False, cluster={"driver_mode": "host"})


def test_a_process_that_exited_between_listing_and_reading_is_no_failure() -> None:
    for text in (ESRCH, ENOENT):
        assert top_pair(_agent(text)) is None, text


def test_a_missing_file_that_is_no_process_s_still_counts() -> None:
    assert top_pair(_agent(DRIVER_FILE)) is not None
