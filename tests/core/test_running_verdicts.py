"""A running agent whose last word is a peer's verdict (a certificate its TLS client does
not accept, a name its DNS server says does not exist) is degraded: the same scrape asks
the same name and checks the same certificate at every attempt, so no retry heals it.
A connection that failed for now (a DNS server that did not answer) stays transient, and
a scrape that succeeded after the error is health. Lines are from public reports (each
source is named beside it)."""

from __future__ import annotations

from gpunode.checks.decisive import running_finding
from gpunode.facts import LogFile
from gpunode.kb import load_kb

KB = load_kb()

# open-telemetry/opentelemetry-helm-charts#1034: GKE kubelets serve a certificate without the node name
_CERT_NOT_VALID = (
    '2024-07-03T13:16:16.966Z\terror\tkubeletstatsreceiver@v0.100.0/scraper.go:77\tcall to /stats/summary '
    'endpoint failed\t{"kind": "receiver", "name": "kubeletstats", "data_type": "metrics", "error": "Get '
    '\\"https://gke-otel-chrismark-test-default-pool-b71e7458-hnfn:10250/stats/summary\\": tls: failed to '
    'verify certificate: x509: certificate is not valid for any names, but wanted to match '
    'gke-otel-chrismark-test-default-pool-b71e7458-hnfn"}')

# open-telemetry/opentelemetry-collector-contrib#26481: one zap record wrapped over three lines
# (header, message, JSON fields), the node name the receiver scrapes unknown to cluster DNS
_NO_SUCH_HOST = (
    "2023-09-14T08:12:11.091Z        error   kubeletstatsreceiver@v0.85.0/scraper.go:68",
    "call to /stats/summary endpoint failed",
    ' {"kind": "receiver", "name": "kubeletstats", "data_type": "metrics", "error": "Get '
    '\\"https://<#####>:10250/stats/summary\\": dial tcp: lookup <#####> on 100.64.0.10:53: no such host"}',
)


def _agent_log(*lines: str) -> LogFile:
    return LogFile("logs/opentelemetry/otel-agent-x/opentelemetry-collector.log", "opentelemetry",
                   "otel-agent-x", "opentelemetry-collector", False, lines)


def test_a_certificate_the_agent_does_not_accept_degrades_it() -> None:
    found = running_finding(KB, "otel-agent", [_agent_log(_CERT_NOT_VALID)])
    assert found is not None and found.cause == "error_unreachable"
    assert "x509: certificate is not valid" in found.context["decisive_line"]


def test_a_name_dns_says_does_not_exist_degrades_it_read_across_the_wrapped_record() -> None:
    found = running_finding(KB, "otel-agent", [_agent_log(*_NO_SUCH_HOST)])
    assert found is not None and found.cause == "error_unreachable"
    assert "no such host" in found.context["decisive_line"]


def test_a_scrape_that_succeeded_after_the_verdict_is_healthy() -> None:
    served = ('2024-07-03T13:16:26.966Z\tinfo\tservice@v0.100.0/service.go:261\tEverything is ready. '
              'Begin running and processing data.')
    assert running_finding(KB, "otel-agent", [_agent_log(_CERT_NOT_VALID, served)]) is None


def test_a_dns_server_that_did_not_answer_is_transient() -> None:
    # a SERVFAIL while CoreDNS's upstream is down (Kyverno fetching sigstore's TUF root,
    # a public write-up): the server gave no verdict on the name, the next lookup may work
    servfail = ('2024-07-03T13:16:16.966Z\terror\tkubeletstatsreceiver@v0.100.0/scraper.go:77\tcall to '
                '/stats/summary endpoint failed\t{"error": "Get \\"https://tuf-repo-cdn.sigstore.dev/13.root.json'
                '\\": dial tcp: lookup tuf-repo-cdn.sigstore.dev on 10.43.0.10:53: server misbehaving"}')
    assert running_finding(KB, "otel-agent", [_agent_log(servfail)]) is None


def test_a_json_record_of_its_own_is_not_read_as_the_fields_of_the_one_before() -> None:
    # a JSON-encoded info record ending the log says nothing about an error header above it
    header = "2023-09-14T08:12:11.091Z        error   kubeletstatsreceiver@v0.85.0/scraper.go:68"
    info = '{"level":"info","ts":1694679131.2,"msg":"Everything is ready. Begin running and processing."}'
    assert running_finding(KB, "otel-agent", [_agent_log(*_NO_SUCH_HOST[:2], header, info)]) is None


def test_a_certificate_its_callers_refuse_degrades_a_running_server_as_a_controller() -> None:
    # Go's server logging the client's TLS alert for the certificate it serves (a webhook still
    # serving a certificate replaced since, Project-HAMi/HAMi#1572): the same verdict on every
    # call, for a running agent as for a controller (one table, decisive._CERT_REFUSED)
    refused = ("2024-11-05T10:21:07.112Z\terror\tserver.go:3412\thttp: TLS handshake error from "
               "10.42.0.1:52814: remote error: tls: bad certificate")
    found = running_finding(KB, "otel-agent", [_agent_log(refused)])
    assert found is not None and found.cause == "error_unreachable"
    # a caller that hangs up mid-handshake refuses nothing
    hung_up = refused.replace("remote error: tls: bad certificate", "EOF")
    assert running_finding(KB, "otel-agent", [_agent_log(hung_up)]) is None
