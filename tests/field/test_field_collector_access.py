"""A running node exporter whose collector the host refuses a path (EACCES: SELinux
enforcing, an SCC without hostPath access, a non-root user) keeps failing that collector on
every scrape until its security context changes: degraded with that line, though the
collector is one of the host's subsystems the GPU stack does not own. A collector failing
for a subsystem the host lacks (no such file or directory) stays healthy."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

#: georou/prometheus-selinux#1 (node_exporter under SELinux, no AVC logged) and
#: lest/prometheus-rpm#2 (node_exporter as a non-root user, /sys/class mode 700).
REFUSED = (
    'time="2019-03-07T10:42:39+01:00" level=error msg="ERROR: filesystem collector failed after 0.000039s: '
    'open /proc/1/mounts: permission denied" source="collector.go:132"',
    "ERROR: hwmon collector failed after 0.000022s: open /sys/class/hwmon: permission denied",
)
#: A host without the subsystem (no hwmon class directory): the collector has nothing to read.
ABSENT = ('ts=2023-04-20T09:11:29.262Z caller=collector.go:169 level=error msg="collector failed" '
          'name=hwmon duration_seconds=0.0001 err="open /host/sys/class/hwmon: no such file or directory"')


def _exporter(line: str) -> Case:
    return synthetic_case("x-collector-access", [
        {"kind": "pod-state", "component": "node-exporter", "state": "Running"},
        {"kind": "log", "component": "node-exporter", "text": line + "\n"},
    ])


@pytest.mark.parametrize("line", REFUSED)
def test_a_collector_refused_a_host_path_degrades_the_exporter(line: str) -> None:
    assert top_pair(_exporter(line)) == ("node-exporter", "error_permission_denied")


def test_a_collector_of_a_subsystem_the_host_lacks_stays_healthy() -> None:
    assert top_pair(_exporter(ABSENT)) is None
