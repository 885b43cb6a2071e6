"""The OpenTelemetry collector that cannot bind a port says so through its own code
(otelcol's collector.go), whichever port it is: a receiver's or its own telemetry
endpoint's. Another exporter's bare listener error on its own port is not the collector's."""

from __future__ import annotations

from gpunode.kb import load_kb

KB = load_kb()

# signalfx/splunk-otel-collector-chart#939: the agent's own telemetry endpoint, a chart's 8889
_TELEMETRY_PORT = ('error otelcol/collector.go:247 Asynchronous error received, terminating process '
                   '{"error": "listen tcp 0.0.0.0:8889: bind: address already in use"}')


def test_the_collector_terminating_on_any_port_in_use_is_its_port_conflict() -> None:
    cause = KB.catalogued_in("otel-agent", _TELEMETRY_PORT)
    assert cause is not None and cause.code == "otel_agent_port_conflict"


def test_another_exporter_s_listener_error_is_not_the_collector_s() -> None:
    # prometheus/node_exporter: its own port 9100 taken (the catalogued node-exporter example)
    node_exporter = ('time=2025-03-02T11:04:51.331Z level=ERROR source=node_exporter.go:247 '
                     'msg="listen tcp :9100: bind: address already in use"')
    elsewhere = KB.catalogued_elsewhere("node-exporter", node_exporter)
    assert elsewhere is None or elsewhere.code != "otel_agent_port_conflict"
    # a collector whose receiver starts is no conflict
    starting = ('info\totlpreceiver@v0.104.0/otlp.go:102\tStarting GRPC server\t{"kind": "receiver", '
                '"name": "otlp", "endpoint": "0.0.0.0:4317"}')
    assert KB.catalogued_in("otel-agent", starting) is None
