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


def test_the_textfile_collector_reads_the_exporter_s_own_directory() -> None:
    # hitachienergy/epiphany#3102: --collector.textfile.directory names a directory never
    # created, so every scrape fails and no .prom file (GPU exports among them) is served
    missing = ('level=error ts=2022-04-23T15:40:34.603Z caller=textfile.go:197 collector=textfile '
               'msg="failed to read textfile collector directory" path=/var/lib/prometheus/node-exporter '
               'err="open /var/lib/prometheus/node-exporter: no such file or directory"')
    found = running_finding(KB, "node-exporter", [_exporter_log(missing)])
    assert found is not None and found.cause == "error_file_state"


def test_a_textfile_file_it_cannot_open_on_one_line_degrades_it() -> None:
    # NethServer/ns8-core#820's record as the exporter writes it, on one line (the pull
    # request quotes it wrapped)
    denied = ('"failed to collect textfile data" collector=textfile file=backup.prom err="failed to open '
              'textfile data file \\"/host/run/node_exporter/backup.prom\\": open '
              '/host/run/node_exporter/backup.prom: permission denied"')
    found = running_finding(KB, "node-exporter", [_exporter_log(denied)])
    assert found is not None and found.cause == "error_permission_denied"


def test_another_host_collector_that_fails_stays_noise() -> None:
    # a host subsystem the stack does not own: the hwmon collector on a VM without sensors
    hwmon = ('ts=2024-03-01T10:00:00.000Z caller=collector.go:169 level=error msg="collector failed" '
             'name=hwmon duration_seconds=0.001 err="open /sys/class/hwmon: no such file or directory"')
    assert running_finding(KB, "node-exporter", [_exporter_log(hwmon)]) is None
