"""A daemon's note that it could not notify the service manager is noise at any level.

tkestack/gpu-manager (pkg/server/server.go) calls go-systemd's SdNotify after start and logs
"Unable to set Type=notify in systemd service file?" at error level when it returns (false,
nil), which is every run outside a Type=notify unit: tkestack/gpu-manager#40, where the line
stayed in a working plugin pod's output. A unit that does wait for the message fails in
systemd's own words (the start timing out), which stay errors."""

from __future__ import annotations

import pytest

from gpunode.decisive import decisive_line, severity
from gpunode.kb import load_kb


@pytest.mark.parametrize("line", [
    "Unable to set Type=notify in systemd service file",
    "E1207 10:11:12.123456       1 server.go:132] Unable to set Type=notify in systemd service file?",
    'time="2024-01-01T00:00:00Z" level=error msg="sd_notify failed: NOTIFY_SOCKET not set"',
])
def test_a_service_notify_note_is_noise(line: str) -> None:
    assert severity(line) == 0
    assert decisive_line([line], load_kb().class_of) is None


@pytest.mark.parametrize("line", [
    "nvidia-persistenced.service: start operation timed out. Terminating.",
    "Failed to start NVIDIA Persistence Daemon.",
    "E1207 10:11:12.123456       1 server.go:140] Unable to set up the systemd cgroup driver: "
    "no such file or directory",
])
def test_a_systemd_failure_stays_an_error(line: str) -> None:
    assert severity(line) > 0
