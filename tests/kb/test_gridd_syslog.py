# ruff: noqa: E501  (real log lines are long)
"""nvidia-gridd, a vGPU guest's licensing daemon, read from the host's syslog: its last word a
failure is the driver's licensing in the daemon's own words; a lease that succeeded since, or
the notice every start prints, is not."""

from __future__ import annotations

from pathlib import Path

from host_log_node import report_with_host_log

from gpunode.model import NodeReport

#: docs.nrec.no/vgpu.html, "Checking license status and getting client token"
_NO_TOKEN = ["Oct 18 06:55:46 vgpu-test nvidia-gridd[1985]: Unable to fetch the client configuration token file"]
#: the same page: what the daemon logs once the token is in place and it restarted
_LEASED = ["Oct 18 07:02:10 vgpu-test nvidia-gridd[2210]: NLS initialized",
           "Oct 18 07:02:10 vgpu-test nvidia-gridd[2210]: Acquiring license. (Info: api.cls.licensing.nvidia.com; NVIDIA Virtual Compute Server)",
           "Oct 18 07:02:12 vgpu-test nvidia-gridd[2210]: License acquired successfully. (Info: api.cls.licensing.nvidia.com, NVIDIA Virtual Compute Server; Expiry: 2026-10-19 7:2:12 GMT)"]


def _report(tmp: Path, lines: list[str]) -> NodeReport:
    return report_with_host_log(tmp, "var/log/syslog", lines)


def test_a_token_the_daemon_cannot_fetch_is_the_driver_s_file_state(tmp_path: Path) -> None:
    report = _report(tmp_path, _NO_TOKEN)
    assert [(r.component, r.cause) for r in report.root_causes] == [("driver", "error_file_state")]


def test_a_lease_refused_by_the_server_reads_as_the_job_error_table_reads_it(tmp_path: Path) -> None:
    # GreenDamTan/fastapi-dls_mirror FAQ: the server's reason after "Error:"
    line = ("Oct 18 06:55:46 vgpu-test nvidia-gridd[1985]: Failed to acquire license from api.cls.licensing.nvidia.com "
            "(Info: NVIDIA Virtual Compute Server - Error: No pool features found for : NVIDIA Virtual Compute Server)")
    report = _report(tmp_path, [line])
    assert [(r.component, r.cause) for r in report.root_causes] == [("driver", "error_device")]


def test_a_lease_that_succeeded_since_is_healthy(tmp_path: Path) -> None:
    assert _report(tmp_path, [*_NO_TOKEN, *_LEASED]).root_causes == ()


def test_the_notice_every_start_prints_before_its_lease_is_healthy(tmp_path: Path) -> None:
    # look-alike: printed at each start a second before the lease succeeds, and alone while it runs
    notice = ("Oct 18 07:02:09 vgpu-test nvidia-gridd[2210]: Valid GRID license not found. GPU features and "
              "performance will be restricted. To enable full functionality please configure licensing details.")
    assert _report(tmp_path, [notice]).root_causes == ()
    assert _report(tmp_path, [notice, *_LEASED]).root_causes == ()
