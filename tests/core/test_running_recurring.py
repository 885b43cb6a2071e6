"""A running agent that logs the same error at every interval, with its own progress lines
between, fails for as long as it runs: the error is its lasting state though its log's last
line is no error. A single error followed by lines that are no error healed, an error that
stopped recurring long before the end no longer fails, and a connection that fails for now
stays transient however often it is retried. Lines are from public reports (each source is
named beside it); the exporter's progress line is the debug exporter's own format."""

from __future__ import annotations

from gpunode.checks.decisive import running_finding
from gpunode.facts import LogFile
from gpunode.kb import load_kb

KB = load_kb()

# open-telemetry/opentelemetry-helm-charts#1034: GKE kubelets serve a certificate without the node name
_NODE = "gke-otel-chrismark-test-default-pool-b71e7458-hnfn"
_CERT = ("2024-07-03T13:16:{s}.966Z\terror\tkubeletstatsreceiver@v0.100.0/scraper.go:77\tcall to "
         '/stats/summary endpoint failed\t{{"kind": "receiver", "name": "kubeletstats", "data_type": '
         f'"metrics", "error": "Get \\"https://{_NODE}:10250/stats/summary\\": tls: failed to verify '
         f'certificate: x509: certificate is not valid for any names, but wanted to match {_NODE}"}}}}')
_EXPORTED = ('2024-07-03T13:16:{s}.967Z\tinfo\tMetricsExporter\t{{"kind": "exporter", "data_type": '
             '"metrics", "name": "debug", "resource metrics": 3, "metrics": 21, "data points": 84}}')
# a scrape refused for now: the kubelet restarting (connection refused), retried at every interval
_REFUSED = ("2024-07-03T13:16:{s}.966Z\terror\tkubeletstatsreceiver@v0.100.0/scraper.go:77\tcall to "
            '/stats/summary endpoint failed\t{{"error": "Get \\"https://10.0.0.5:10250/stats/summary\\": '
            'dial tcp 10.0.0.5:10250: connect: connection refused"}}')


def _log(*lines: str) -> LogFile:
    return LogFile("logs/opentelemetry/otel-agent-x/opentelemetry-collector.log", "opentelemetry",
                   "otel-agent-x", "opentelemetry-collector", False, lines)


def _every_interval(error: str, seconds: range, *, then: int = 0) -> list[str]:
    lines = []
    for s in seconds:
        lines += [error.format(s=s), _EXPORTED.format(s=s)]
    return lines + [_EXPORTED.format(s=50 + n) for n in range(then)]


def test_an_error_at_every_scrape_with_progress_lines_between_degrades_the_agent() -> None:
    found = running_finding(KB, "otel-agent", [_log(*_every_interval(_CERT, range(10, 40, 10)))])
    assert found is not None and found.cause == "error_unreachable"
    assert "x509: certificate is not valid" in found.context["decisive_line"]
    assert found.evidence[0].source.endswith(":5")  # its last time, not the last line


def test_one_error_then_progress_is_a_failure_that_healed() -> None:
    lines = [_CERT.format(s=10), *(_EXPORTED.format(s=s) for s in range(11, 15))]
    assert running_finding(KB, "otel-agent", [_log(*lines)]) is None


def test_an_error_that_stopped_recurring_long_before_the_end_no_longer_fails() -> None:
    lines = _every_interval(_CERT, range(10, 40, 10), then=8)
    assert running_finding(KB, "otel-agent", [_log(*lines)]) is None


def test_a_connection_refused_at_every_scrape_stays_transient() -> None:
    assert running_finding(KB, "otel-agent", [_log(*_every_interval(_REFUSED, range(10, 40, 10)))]) is None
