"""A native program's crash record is a decisive line in every format it is written in (issue
20): a crash state (crash loop, restarting) is never the whole answer while the component's
log or its terminated state holds one. Fluent Bit's signal line and backtrace, glibc's and a
shell's signal words, Rust's panic, the C++ runtime's uncaught exception, Go's fatal error,
and the exit codes 128 + SIGILL/SIGABRT/SIGBUS/SIGFPE/SIGSEGV read as their signal. Each is
checked against a look-alike that must not read as a crash."""

from __future__ import annotations

from typing import Any

import pytest
from case import synthetic_case
from scoreboard import top_pair

from gpunode.decisive import severity

CRASH_RECORDS = [
    "[2021/08/03 21:37:09] [engine] caught signal (SIGSEGV)",
    "[2021/08/03 21:37:09] [engine] caught signal (SIGFPE)",
    "[2023/01/10 08:00:00] [engine] caught signal (SIGABRT)",
    "Segmentation fault (core dumped)",
    "/usr/local/bin/run.sh: line 5:    42 Aborted                 (core dumped) nv-hostengine",
    "Floating point exception (core dumped)",
    "thread 'main' panicked at src/sources/kubernetes_logs/mod.rs:512:9:",
    "thread 'vector-worker' panicked at 'called `Option::unwrap()` on a `None` value', src/lib.rs:10:5",
    "terminate called after throwing an instance of 'std::runtime_error'",
    "fatal error: concurrent map writes",
    "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a0f1e]",
    "#0  0x563e3021d38e      in  cb_stdout_flush() at plugins/out_stdout/stdout.c:144",
    "Exit Code:    139",
    "Exit Code:    136",
    "Exit Code: 134",
]

LOOK_ALIKES = [
    "#1  0x563e3019d629      in  output_pre_cb_flush() at include/fluent-bit/flb_output.h:449",
    "Exit Code:    137",  # SIGKILL: the OOM killer or a kill, judged elsewhere
    "Exit Code:    143",
    "Exit Code:    0",
    "[2021/08/03 21:37:09] [ info] [engine] started (version=1.8.3) (pid=1)",
    "[2021/08/03 21:37:09] [ info] [storage] backlog mode, SIGSEGV handler installed",
    "Aborted: 0 requests",
    "# 0 0x10 requests in flight",
]


@pytest.mark.parametrize("line", CRASH_RECORDS)
def test_a_crash_record_is_an_explicit_error(line: str) -> None:
    assert severity(line) == 2


@pytest.mark.parametrize("line", LOOK_ALIKES)
def test_a_look_alike_is_no_crash(line: str) -> None:
    assert severity(line) == 0


def _crashed(exit_code: int, log: str | None = None, *,
             state: str = "CrashLoopBackOff") -> list[dict[str, Any]]:
    pod: dict[str, Any] = {"kind": "pod-state", "component": "logging-agent", "state": state, "restarts": 6,
                           "exit_code": exit_code}
    if state == "Running":
        pod["last_reason"] = "Error"
    evidence = [pod]
    if log is not None:
        evidence.append({"kind": "log", "component": "logging-agent", "previous": True, "text": log})
    return evidence


@pytest.mark.parametrize("state", ["CrashLoopBackOff", "Running"])
def test_a_signal_exit_code_with_no_log_is_the_crash(state: str) -> None:
    case = synthetic_case("agent-sigfpe", _crashed(136, state=state), healthy=False)
    assert top_pair(case) == ("logging-agent", "error_unclassified")


def test_a_backtrace_in_the_previous_log_is_the_crash() -> None:
    log = ("[2020/09/15 11:15:45] [debug] [upstream] KA connection #558 to fluentd:24224 is now available\n"
           "#0  0x563e3021d38e      in  cb_stdout_flush() at plugins/out_stdout/stdout.c:144\n"
           "#1  0x563e3019d629      in  output_pre_cb_flush() at include/fluent-bit/flb_output.h:449\n")
    case = synthetic_case("agent-backtrace", _crashed(139, log), healthy=False)
    assert top_pair(case) == ("logging-agent", "error_unclassified")


def test_a_logged_error_says_more_than_the_signal() -> None:
    # the exit code is a fallback: an error the agent logged before it died keeps its class
    log = "[2021/08/03 21:37:09] [error] [input:tail] cannot open /var/log/containers: Permission denied\n"
    case = synthetic_case("agent-logged", _crashed(139, log), healthy=False)
    assert top_pair(case) == ("logging-agent", "error_permission_denied")


def test_a_killed_container_is_not_read_as_a_crash_signal() -> None:
    # 143 (SIGTERM) is a stop: the crash state stays the answer, no crash line is made up
    case = synthetic_case("agent-sigterm", _crashed(143), healthy=False)
    assert top_pair(case) == ("logging-agent", "crash_loop")


# --- a list or watch the API server refused, in any agent's words -------------------------

_VECTOR_016 = (
    'Sep 02 03:01:41.493 ERROR source{{component_kind="source" component_id=kubernetes_logs}}: '
    "vector::kubernetes::reflector: Watcher error. error=BadStatus {{ status: 403 }}\n"
    'Sep 02 03:01:41.493 ERROR source{{component_kind="source" component_id=kubernetes_logs}}: '
    "vector::sources::kubernetes_logs: Namespace reflector process exited with an error. "
    "error=watch invocation failed\n"
    'Sep 02 03:01:41.493  INFO source{{component_kind="source" component_id=kubernetes_logs}}: '
    "vector::sources::kubernetes_logs: Reflector process completed gracefully.\n{after}")
# fluentd's kubeclient watch thread (splunk/splunk-connect-for-kubernetes#687): warn level,
# its error in a quoted field
_FLUENTD = ('2021-12-15 05:51:38 +0000 [warn]: #0 thread exited by unexpected error '
            'plugin=Fluent::Plugin::KubernetesObjectsInput title=:watch_persistent_volume_claims '
            'error_class=Kubeclient::HttpError error="HTTP status code 403, Forbidden"\n'
            "2021-12-15 05:51:39 +0000 [info]: #0 flushing all buffer forcedly\n")


def _agent_running(text: str) -> list[dict[str, Any]]:
    return [{"kind": "log", "component": "logging-agent", "text": text}]


@pytest.mark.parametrize("text", [_VECTOR_016.format(after=""), _FLUENTD])
def test_a_watch_the_api_server_refused_is_the_agent_s_permission(text: str) -> None:
    case = synthetic_case("agent-watch-403", _agent_running(text), healthy=False)
    assert top_pair(case) == ("logging-agent", "error_permission_denied")


def test_a_refused_watch_whose_cache_synced_after_is_healthy() -> None:
    # the role was granted since: client-go's informer synced after the refusal
    after = "I0902 03:02:10.000000       1 shared_informer.go:247] Caches are synced for namespaces\n"
    case = synthetic_case("agent-watch-healed", _agent_running(_VECTOR_016.format(after=after)))
    assert top_pair(case) is None


def test_a_watch_that_timed_out_once_is_a_retry() -> None:
    text = ("2023-03-29T17:28:32.024522Z  WARN vector::kubernetes::reflector: Watcher Stream received an "
            "error. Retrying. error=Watch timed out\n"
            "2023-03-29T17:28:33.000000Z  INFO vector::sources::kubernetes_logs: Obtained Kubernetes "
            'Node name to collect logs for (self). node_name="gpu-wk-01"\n')
    assert top_pair(synthetic_case("agent-watch-retry", _agent_running(text))) is None


# --- a certificate or key file that cannot be read ------------------------------------------

def test_a_certificate_file_the_agent_cannot_read_is_file_state() -> None:
    # Fluent Bit 1.3.0 (fluent/fluent-bit#1611): mbedTLS's file error, then the file it names
    text = ("[2019/10/03 15:04:31] [error] [io_tls] flb_io_tls.c:165 X509 - Read/write of file failed\n"
            "[2019/10/03 15:04:31] [error] [TLS] error reading certificates from "
            "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt\n")
    case = synthetic_case("agent-ca-unreadable", _agent_running(text), healthy=False)
    assert top_pair(case) == ("logging-agent", "error_file_state")


def test_a_certificate_the_peer_sent_is_no_file() -> None:
    from gpunode.kb import load_kb
    kb = load_kb()
    assert kb.class_of("error reading certificates from the server: x509: certificate signed by unknown "
                       "authority") == "error_unreachable"
    assert kb.class_of("loaded certificates from /etc/ssl/certs") is None


# --- a server of the agent's own that it could not start ------------------------------------

_HOSTENGINE = ("Starting NVIDIA host engine...\n"
               "Failed to start host engine server\n"
               "Collecting metrics at /run/prometheus/dcgm.prom every 1000ms...\n{after}")


def _exporter_running(text: str) -> list[dict[str, Any]]:
    return [{"kind": "log", "component": "dcgm-exporter", "text": text}]


def test_a_server_the_exporter_could_not_start_is_lasting() -> None:
    # NVIDIA/gpu-monitoring-tools#54: the script exporter's nv-hostengine does not start, and
    # its metrics loop runs on without it
    text = _HOSTENGINE.format(after="Stopping NVIDIA host engine...\nHost engine successfully terminated.\n")
    case = synthetic_case("exporter-engine-down", _exporter_running(text), healthy=False)
    assert top_pair(case) == ("dcgm-exporter", "error_unclassified")


def test_a_server_started_on_a_later_try_is_healthy() -> None:
    text = _HOSTENGINE.format(after="Starting NVIDIA host engine...\nStarted host engine version 1.7.2\n")
    assert top_pair(synthetic_case("exporter-engine-retried", _exporter_running(text))) is None


def test_vector_s_older_time_format_carries_its_level() -> None:
    # Vector before 0.18 ("Sep 02 03:01:41.493 ERROR target: ..."), as tracing's RFC 3339 form
    from gpunode.decisive import message_of
    error = _VECTOR_016.format(after="").splitlines()[0]
    assert severity(error) == 2 and message_of(error) == "Watcher error. error=BadStatus { status: 403 }"
    info = _VECTOR_016.format(after="").splitlines()[2]
    assert severity(info) == 0
    # a journal line keeps its own prefix: host and unit after a time with no fraction
    assert severity("Dec 05 10:01:02 gpu-wk-01 vector[812]: INFO vector: started") == 0
