# ruff: noqa: E501  (real log lines are long)
"""nvidia-persistenced read from the host's syslog: a last start that failed is the driver's
problem in the daemon's own words; a start that worked since, or a look-alike unit, is not."""

from __future__ import annotations

from pathlib import Path

from host_log_node import report_with_host_log

from gpunode.model import NodeReport

_FAILED_RUN = [
    "Sep 11 04:47:05 gpu-wk-02 nvidia-persistenced[887]: Failed to query NVIDIA devices. Please ensure that the NVIDIA device files (/dev/nvidia*) exist, and that user 991 has read and write permissions for those files.",
    "Sep 11 04:47:05 gpu-wk-02 nvidia-persistenced[887]: Shutdown (887)",
    "Sep 11 04:47:05 gpu-wk-02 nvidia-persistenced[881]: nvidia-persistenced failed to initialize. Check syslog for more details.",
    "Sep 11 04:47:06 gpu-wk-02 systemd[1]: nvidia-persistenced.service: Control process exited, code=exited, status=1/FAILURE",
    "Sep 11 04:47:06 gpu-wk-02 systemd[1]: nvidia-persistenced.service: Failed with result 'exit-code'.",
    "Sep 11 04:47:06 gpu-wk-02 systemd[1]: Failed to start NVIDIA Persistence Daemon.",
    "Sep 11 04:47:09 gpu-wk-02 systemd[1]: nvidia-persistenced.service: Start request repeated too quickly.",
]


def _report(tmp: Path, lines: list[str]) -> NodeReport:
    return report_with_host_log(tmp, "var/log/messages", lines)


def test_failed_start_before_device_files_is_the_drivers_file_state(tmp_path: Path) -> None:
    report = _report(tmp_path, _FAILED_RUN)
    assert [(r.component, r.cause) for r in report.root_causes] == [("driver", "error_file_state")]


def test_started_again_since_is_healthy(tmp_path: Path) -> None:
    report = _report(tmp_path, [*_FAILED_RUN,
                                "Sep 11 04:52:10 gpu-wk-02 systemd[1]: Starting NVIDIA Persistence Daemon...",
                                "Sep 11 04:52:10 gpu-wk-02 nvidia-persistenced[1402]: Started (1402)",
                                "Sep 11 04:52:10 gpu-wk-02 systemd[1]: Started NVIDIA Persistence Daemon."])
    assert not report.root_causes


def test_another_units_failure_beside_its_lines_is_healthy(tmp_path: Path) -> None:
    report = _report(tmp_path, [
        "Sep 11 04:47:05 gpu-wk-02 nvidia-persistenced[887]: Started (887)",
        "Sep 11 04:47:06 gpu-wk-02 systemd[1]: nvidia-fabricmanager.service: Failed with result 'exit-code'.",
    ])
    assert not report.root_causes


_NO_USER = "Sep 11 04:47:05 gpu-wk-02 nvidia-persistenced[2812]: ERROR: Failed to find user ID of user 'nvidia-persistenced': No such file or directory"


def test_setup_error_without_unit_lines_is_the_drivers_user_not_found(tmp_path: Path) -> None:
    report = _report(tmp_path, [_NO_USER])
    assert [(r.component, r.cause) for r in report.root_causes] == [("driver", "error_not_found")]


def test_user_lookup_failing_with_success_errno_beside_the_units_failure_is_not_found(tmp_path: Path) -> None:
    report = _report(tmp_path, [
        "Sep 11 04:47:05 gpu-wk-02 nvidia-persistenced[2812]: ERROR: Failed to find user ID of user 'nvidia-persistenced': Success",
        "Sep 11 04:47:05 gpu-wk-02 systemd[1]: nvidia-persistenced.service: Control process exited, code=exited, status=1/FAILURE",
        "Sep 11 04:47:05 gpu-wk-02 systemd[1]: nvidia-persistenced.service: Failed with result 'exit-code'.",
    ])
    assert [(r.component, r.cause) for r in report.root_causes] == [("driver", "error_not_found")]


def test_setup_error_then_started_is_healthy(tmp_path: Path) -> None:
    report = _report(tmp_path, [_NO_USER, "Sep 11 04:50:01 gpu-wk-02 nvidia-persistenced[3001]: Started (3001)"])
    assert not report.root_causes


def test_daemons_ordinary_lines_are_healthy(tmp_path: Path) -> None:
    report = _report(tmp_path, [
        "Sep 11 04:47:05 gpu-wk-02 nvidia-persistenced[887]: Verbose syslog connection opened",
        "Sep 11 04:47:05 gpu-wk-02 nvidia-persistenced[887]: Started (887)",
        "Sep 11 04:47:06 gpu-wk-02 nvidia-persistenced[887]: device 0000:3b:00.0 - persistence mode enabled.",
    ])
    assert not report.root_causes
