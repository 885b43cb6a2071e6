"""Observability agents that keep running while failing their job (issue 20): their own log
is judged like any running component's. Three log shapes were not read before: Rust's
tracing format (Vector) with an unquoted ``error=`` field, a zap error record followed by the
Go stack trace zap prints under it, and a Prometheus text parser's error with no level. Each
rule is checked on a look-alike that must stay healthy."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

from gpunode.decisive import message_of, severity

_VECTOR_WARN = ("2023-03-29T17:28:32.0245{n}Z  WARN vector::kubernetes::reflector: Watcher Stream received "
                "an error. Retrying. error=InitialListFailed(Service(Closed))")
_VECTOR_START = ('2023-03-29T17:28:30.118120Z  INFO vector::app: Log level is enabled. level="vector=info"\n'
                 '2023-03-29T17:28:30.120044Z  INFO vector: Vector has started. debug="false" '
                 'version="0.28.1" arch="x86_64"\n')


def _running(component: str, text: str) -> list[dict[str, Any]]:
    return [{"kind": "pod-state", "component": component, "state": "Running"},
            {"kind": "log", "component": component, "text": text}]


def test_rust_tracing_lines_carry_their_level_and_message() -> None:
    warn = _VECTOR_WARN.format(n=22)
    assert message_of(warn).startswith("Watcher Stream received an error.")
    assert severity(warn) == 1  # a warning, but its error field holds a value
    assert severity("2023-03-29T17:28:30.120044Z  INFO vector: Vector has started. debug=\"false\"") == 0
    spanned = ('2022-11-02T10:00:01.000000Z ERROR source{component_kind="source" component_id=k8s}: '
               "vector::internal_events::kubernetes_logs: Failed to annotate event with pod metadata.")
    assert severity(spanned) == 2 and message_of(spanned) == "Failed to annotate event with pod metadata."


def test_a_log_agent_whose_list_from_the_api_server_fails_on_every_try_is_degraded() -> None:
    # deckhouse/deckhouse#4270: Vector's kube watcher cannot make its initial list and retries
    # at once, so the whole recent log is the same warning; the API server itself answers.
    text = _VECTOR_START + "".join(_VECTOR_WARN.format(n=n) + "\n" for n in (22, 37, 51, 69))
    case = synthetic_case("vector-list-fails", _running("logging-agent", text), healthy=False)
    assert top_pair(case) == ("logging-agent", "error_unreachable")


def test_the_same_warning_once_then_events_is_a_retry_that_healed() -> None:
    text = (_VECTOR_START + _VECTOR_WARN.format(n=22) + "\n"
            '2023-03-29T17:28:33.000000Z  INFO source{component_kind="source" component_id=k8s}: '
            "vector::sources::kubernetes_logs: Obtained Kubernetes Node name to collect logs for (self). "
            'node_name="gpu-wk-01"\n')
    assert top_pair(synthetic_case("vector-healed", _running("logging-agent", text))) is None


_OTEL_ERROR = (
    '2024-03-08T11:50:01.933Z\terror\tkubeletstatsreceiver@v0.95.0/scraper.go:86\tcall to /pods endpoint '
    'failed\t{"kind": "receiver", "name": "kubeletstats", "data_type": "metrics", "error": "kubelet request '
    'GET https://10.240.90.199:10250/pods failed - \\"403 Forbidden\\", response: \\"Forbidden (user=system:'
    'serviceaccount:otel:otel-collector, verb=get, resource=nodes, subresource=proxy)\\""}\n')
_TRACE = ("github.com/open-telemetry/opentelemetry-collector-contrib/receiver/kubeletstatsreceiver."
          "(*kubletScraper).scrape\n"
          "\tgithub.com/open-telemetry/opentelemetry-collector-contrib/receiver/kubeletstatsreceiver@v0.95.0/"
          "scraper.go:86\n"
          "go.opentelemetry.io/collector/receiver/scraperhelper.ScrapeFunc.Scrape\n"
          "\tgo.opentelemetry.io/collector/receiver@v0.95.0/scraperhelper/scraper.go:20\n")


def test_a_zap_error_whose_stack_trace_ends_the_log_is_the_last_word() -> None:
    # open-telemetry/opentelemetry-helm-charts#1069: the kubelet refuses the collector's /pods scrape.
    case = synthetic_case("otel-403", _running("otel-agent", _OTEL_ERROR + _TRACE), healthy=False)
    assert top_pair(case) == ("otel-agent", "error_permission_denied")


def test_a_stack_trace_under_an_info_record_is_no_error() -> None:
    info = ("2024-03-08T11:50:01.933Z\tinfo\tservice@v0.95.0/service.go:169\tEverything is ready. "
            "Begin running and processing data.\n")
    assert top_pair(synthetic_case("otel-info", _running("otel-agent", _OTEL_ERROR + info + _TRACE))) is None


def test_a_textfile_the_exporter_cannot_parse_is_its_configuration() -> None:
    # microsoft/pai#949: a GPU exporter script wrote N/A into a .prom file of the textfile collector.
    text = ('time="2018-07-21T02:18:10Z" level=info msg=" - textfile" source="node_exporter.go:52"\n'
            'gpu_exporter.prom: text format parsing error in line 2: expected float as value, got "N/A"\n')
    case = synthetic_case("textfile-na", _running("node-exporter", text), healthy=False)
    assert top_pair(case) == ("node-exporter", "error_config_invalid")


def test_a_textfile_collector_that_reads_its_files_is_healthy() -> None:
    text = ('time="2018-07-21T02:18:10Z" level=info msg=" - textfile" source="node_exporter.go:52"\n'
            'time="2018-07-21T02:18:10Z" level=info msg="Listening on :9100" source="node_exporter.go:76"\n')
    assert top_pair(synthetic_case("textfile-ok", _running("node-exporter", text))) is None


_SCC_REFUSAL = (
    'Error creating: pods "otel-agent-opentelemetry-collector-agent-" is forbidden: unable to validate '
    'against any security context constraint: [provider "anyuid": Forbidden: not usable by user or '
    'serviceaccount, spec.volumes[1]: Invalid value: "hostPath": hostPath volumes are not allowed to '
    'be used, spec.initContainers[0].securityContext.runAsUser: Invalid value: 0: must be in the '
    'ranges: [1000660000, 1000669999]')


def _failed_create(message: str) -> list[dict[str, Any]]:
    """The agent's DaemonSet (the name the field builder gives it) that creates no pod, and the
    daemonset-controller's FailedCreate event on it."""
    event = {"apiVersion": "v1", "kind": "Event",
             "metadata": {"name": "otel-agent-opentelemetry-collector-agent.17",
                          "namespace": "opentelemetry"},
             "involvedObject": {"kind": "DaemonSet", "name": "otel-agent-opentelemetry-collector-agent",
                                "namespace": "opentelemetry", "apiVersion": "apps/v1"},
             "reason": "FailedCreate", "type": "Warning", "source": {"component": "daemonset-controller"},
             "message": message}
    return [{"kind": "pod-missing", "component": "otel-agent"},
            {"kind": "cluster-object", "resource": "events", "object": event}]


def test_an_admission_refusal_of_the_agent_s_pods_is_its_permission() -> None:
    # SumoLogic/sumologic-kubernetes-collection#2717: no SCC admits the collector's root user and
    # hostPath volumes; the 'Invalid value' list after the refusal is each policy's reasons.
    case = synthetic_case("scc", _failed_create(_SCC_REFUSAL), platform="openshift", healthy=False)
    assert top_pair(case) == ("otel-agent", "error_permission_denied")


def test_a_setting_the_api_finds_invalid_stays_a_configuration_error() -> None:
    invalid = ('Error creating: DaemonSet.apps "otel-agent" is invalid: spec.template.spec.containers[0].'
               'securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive')
    case = synthetic_case("invalid", _failed_create(invalid), healthy=False)
    assert top_pair(case) == ("otel-agent", "error_config_invalid")


_SOCKET_RECREATED = "I0829 21:34:53.142655 1043311 manager.go:506]  /device-plugin/kubelet.sock recreated.\n"


def test_a_plugin_that_stops_its_server_with_a_nil_error_to_register_again_is_healthy() -> None:
    # GoogleCloudPlatform/container-engine-accelerators#403: the kubelet restarted, so the plugin
    # stops its old gRPC server (error level, nil error) and registers with the new kubelet.
    text = (_SOCKET_RECREATED
            + "E0829 21:34:53.142767 1043311 manager.go:455] device-plugin server stopped serving: <nil>\n")
    case = synthetic_case("nil", [{"kind": "log", "component": "gke-device-plugin",
                                   "container": "nvidia-gpu-device-plugin", "text": text}], platform="gke")
    assert severity(text.splitlines()[1]) == 0
    assert top_pair(case) is None


def test_a_server_that_stopped_with_an_error_or_a_failure_with_nil_still_fails() -> None:
    stopped = ("E0829 21:34:53.142767 1043311 manager.go:455] device-plugin server stopped serving: "
               "rpc error: code = Unavailable desc = transport is closing")
    assert severity(stopped) == 2
    failed = "E0829 21:34:53.142767 1043311 manager.go:460] failed to register device plugin: <nil>"
    assert severity(failed) == 2
