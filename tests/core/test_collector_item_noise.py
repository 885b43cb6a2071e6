"""One collector of the node exporter that gives up one optional item and carries on is
not a failure of the exporter: its other collectors and the item's other metrics still
serve. The exporter's own error (not scoped to a collector) still is."""

from __future__ import annotations

from gpunode.checks.decisive import running_finding
from gpunode.facts import LogFile
from gpunode.kb import load_kb

KB = load_kb()


def _exporter_log(*lines: str) -> LogFile:
    return LogFile("logs/monitoring/node-exporter-x/node-exporter.log", "monitoring", "node-exporter-x",
                   "node-exporter", False, lines)


def test_a_collector_that_disables_one_optional_item_is_noise() -> None:
    # prometheus/node_exporter#2579: /run/udev/data not mounted into the container
    udev = ('ts=2023-01-20T13:26:45.184Z caller=diskstats_linux.go:264 level=error collector=diskstats '
            'msg="Failed to open directory, disabling udev device properties" path=/run/udev/data')
    assert running_finding(KB, "node-exporter", [_exporter_log(udev)]) is None


def test_the_exporter_s_own_error_still_degrades_it() -> None:
    # the catalogued node-exporter example: its own listener, no collector named
    listener = ('time=2025-03-02T11:04:51.331Z level=ERROR source=node_exporter.go:247 '
                'msg="listen tcp :9100: bind: address already in use"')
    assert running_finding(KB, "node-exporter", [_exporter_log(listener)]) is not None
