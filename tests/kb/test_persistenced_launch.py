# ruff: noqa: E501  (real log lines are long)
"""A launcher of nvidia-persistenced that could not start its binary: Talos' persistence
extension runs the daemon from a Go wrapper that ends on "error starting nvidia-persistenced:
<exec error>" (siderolabs/extensions nvidia-persistenced-wrapper; #861 on arm64, where the
binary's ELF interpreter was not in the service's root). The driver's, in the line's class,
wherever the host keeps the line (its syslog, or the kernel log on a host without one); a start
of the daemon after it, or a launcher that starts it, is healthy."""

from __future__ import annotations

from pathlib import Path

from host_log_node import NODE, report_with_host_log

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.model import NodeReport
from gpunode.sim import load_scenario
from gpunode.sim.build import build_world
from gpunode.sim.finalize import finalize
from gpunode.sim.writer import write

#: siderolabs/extensions#861, talosctl logs ext-nvidia-persistenced
_NOT_STARTED = "192.168.4.14: 2025/10/30 18:20:10 nvidia-persistenced-wrapper: error starting nvidia-persistenced: fork/exec /usr/local/bin/nvidia-persistenced: no such file or directory"
_STARTED = "Oct 30 18:21:02 gpu-wk-02 nvidia-persistenced[3120]: Started (3120)"


def _kernel_log_report(tmp: Path, lines: list[str]) -> NodeReport:
    world = build_world(load_scenario("falcon-ai"))
    finalize(world)
    bundle = write(world, tmp / "bundle")
    path = bundle / "nodes" / NODE / "cmd" / "dmesg.txt"
    before = path.read_text() if path.exists() else ""
    path.write_text(before + "".join(f"{line}\n" for line in lines))
    (report,) = diagnose(load_bundle(bundle), read_node_observations, [NODE]).nodes
    return report


def test_a_launcher_that_cannot_exec_the_daemon_is_the_driver_s_file_state(tmp_path: Path) -> None:
    report = _kernel_log_report(tmp_path, [_NOT_STARTED])
    assert [(r.component, r.cause) for r in report.root_causes] == [("driver", "error_file_state")]


def test_the_same_line_in_the_syslog_reads_the_same(tmp_path: Path) -> None:
    report = report_with_host_log(tmp_path, "var/log/syslog", [_NOT_STARTED])
    assert [(r.component, r.cause) for r in report.root_causes] == [("driver", "error_file_state")]


def test_a_daemon_started_after_the_failure_is_healthy(tmp_path: Path) -> None:
    assert report_with_host_log(tmp_path, "var/log/syslog", [_NOT_STARTED, _STARTED]).root_causes == ()


def test_a_launcher_that_starts_the_daemon_is_healthy(tmp_path: Path) -> None:
    # look-alike: the words "starting nvidia-persistenced" with no failure
    lines = ["[  12.345678] [talos] service[ext-nvidia-persistenced](Running): Started task ext-nvidia-persistenced (PID 2201) for container ext-nvidia-persistenced",
             "2025/10/30 18:20:10 nvidia-persistenced-wrapper: starting nvidia-persistenced"]
    assert _kernel_log_report(tmp_path, lines).root_causes == ()
