"""A running agent whose log says a part of its own (a reflector, a watcher, a worker loop)
ended on an error, with nothing started after it, runs on without that part: degraded, with
the error that ended it. A stream the peer cut mid-response ('unexpected EOF during chunk
size line', hyper's words for any chunked body that stops: kube-rs/kube#1075; a watch
stream's TCP connection closing, VictoriaMetrics/VictoriaLogs#930) is a connection that
failed, not a configuration that does not parse. The same exit followed by a restart of the
part, and a parser's own 'unexpected EOF', stay as they were."""

from __future__ import annotations

from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.diagnose import load_kb

SOURCE = 'source{component_kind="source" component_name=kubernetes_logs component_type=kubernetes_logs}'
#: vectordotdev/vector#7401 (Vector 0.13's kubernetes_logs source, which ships nothing after it)
CUT = (f'May 10 20:27:39.282 ERROR {SOURCE}: vector::internal_events::kubernetes::instrumenting_watcher: '
       'Watch invocation failed. error=Other { source: K8sStream { source: Reading { source: '
       'hyper::Error(Body, Custom { kind: UnexpectedEof, '
       'error: "unexpected EOF during chunk size line" }) } } }')
EXITED = (f"May 10 20:27:39.282 ERROR {SOURCE}: vector::sources::kubernetes_logs: "
          "Reflector process exited with an error. error=streaming error")
DONE = (f"May 10 20:27:39.283  INFO {SOURCE}: vector::sources::kubernetes_logs: "
        "Event processing loop completed gracefully.")
RESTARTED = f"May 10 20:27:40.101  INFO {SOURCE}: vector::sources::kubernetes_logs: Starting reflector."


def _agent(*lines: str) -> Case:
    return synthetic_case("x-part-exited", [
        {"kind": "pod-state", "component": "logging-agent", "state": "Running"},
        {"kind": "log", "component": "logging-agent", "text": "\n".join(lines) + "\n"},
    ])


def test_a_part_that_exited_on_a_cut_stream_degrades_the_agent() -> None:
    assert top_pair(_agent(CUT, EXITED, DONE)) == ("logging-agent", "error_unreachable")


def test_a_part_started_again_after_its_exit_stays_healthy() -> None:
    assert top_pair(_agent(CUT, EXITED, DONE, RESTARTED)) is None


def test_a_cut_log_stream_is_unreachable() -> None:
    # kube-rs/kube#1075: a followed container log stream the API server closed
    line = ('Error: HyperError(hyper::Error(Body, hyper::Error(Body, Custom { kind: UnexpectedEof, '
            'error: "unexpected EOF during chunk size line" })))')
    assert load_kb().class_of(line) == "error_unreachable"


def test_a_parsers_unexpected_eof_stays_a_configuration_error() -> None:
    kb = load_kb()
    assert kb.class_of("failed to parse /etc/vector/vector.toml: unexpected EOF") == "error_config_invalid"
    assert kb.class_of("yaml: unexpected EOF") == "error_config_invalid"
