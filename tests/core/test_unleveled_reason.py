"""A running component whose last error says only which step failed ("python.d ERROR:
nvidia_smi : failed to invoke 'nvidia-smi' binary") keeps the reason another program wrote
just before it with no level of its own: musl's dynamic loader prints "Error relocating
<binary>: <symbol>: symbol not found" and "Error loading shared library <lib>: No such file
or directory (needed by <binary>)" bare, so only the wrapper's line carries a level and was
read alone. The loader lines are public ones (address beside each); the look-alikes keep the
reading they had: a leveled reason before the step, and a run with no reason in it."""

from __future__ import annotations

from gpunode.checks.base import LINE
from gpunode.checks.decisive import running_finding
from gpunode.facts import LogFile
from gpunode.kb import load_kb

KB = load_kb()

#: netdata/netdata-glibc#6: the nightly image's nvidia-smi built for glibc, run under musl,
#: then netdata's python.d plugin logging the failed run at its own level.
NETDATA = (
    "Error relocating /usr/bin/nvidia-smi: __strtok_r: symbol not found",
    "Error relocating /usr/bin/nvidia-smi: __strdup: symbol not found",
    "2022-03-17 15:24:04: python.d ERROR: nvidia_smi[nvidia_smi] : failed to invoke 'nvidia-smi' binary",
    "2022-03-17 15:24:04: python.d INFO: plugin[main] : nvidia_smi[nvidia_smi] : check failed",
)
#: getsentry/cli#754: musl's loader missing a library, then a symbol (its bare lines).
SENTRY_LOADER = (
    "Error loading shared library libstdc++.so.6: No such file or directory (needed by "
    "./sentry-linux-arm64-musl)",
    "Error relocating ./sentry-linux-arm64-musl: __once_proxy: symbol not found",
)
#: FilenCloudDienste/filen-cli#281: a glibc build run under musl.
FILEN_LOADER = "Error relocating /home/enck/filen-cli-v0.0.32-linux-x64: fcntl64: symbol not found"
#: the step's own leveled line, as a collector that runs a GPU tool logs it
STEP_FAILED = "2024-05-02 10:00:00: collector ERROR: gpu[gpu] : failed to invoke 'nvidia-smi' binary"


def _finding(*lines: str) -> tuple[str, str] | None:
    log = LogFile("logs/monitoring/agent-x/agent.log", "monitoring", "agent-x", "agent", False, lines)
    found = running_finding(KB, "dcgm-exporter", [log])
    return None if found is None else (found.cause, found.context.get(LINE, ""))


def test_bare_loader_line_is_the_reason() -> None:
    found = _finding(*NETDATA)
    assert found is not None
    assert found == ("error_not_found", NETDATA[1])


def test_other_loaders_bare_lines_are_read_the_same() -> None:
    found = _finding(*SENTRY_LOADER, STEP_FAILED)
    assert found is not None and found[1] == SENTRY_LOADER[1]
    found = _finding(FILEN_LOADER, STEP_FAILED)
    assert found is not None and found == ("error_not_found", FILEN_LOADER)


def test_leveled_reason_before_the_step_keeps_its_reading() -> None:
    reason = "2024-05-02 10:00:00: collector ERROR: gpu[gpu] : open /dev/nvidiactl: permission denied"
    found = _finding(reason, STEP_FAILED)
    assert found is not None and found[0] == "error_permission_denied"


def test_run_without_a_reason_keeps_the_step() -> None:
    found = _finding("Error: something went wrong here", STEP_FAILED)
    assert found is not None and found[1] == STEP_FAILED
