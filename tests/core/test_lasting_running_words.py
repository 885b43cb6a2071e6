"""What a running agent or plugin says in its own words that lasts while its last line is
progress or a connection error: a peer the node's facts show answering that it cannot reach
(the kubelet of a Ready node, the API server the bundle was read from), and a device its
health check withdrew and never gave back. Fluent Bit's own header ('[<time>] [error]
[<plugin>] ...', lowercase levels padded to five) is an explicit level. Lines as public
reports quote them (each source is named beside it)."""

from __future__ import annotations

from gpunode.checks.decisive import answering_peers, running_finding
from gpunode.decisive import message_of, severity
from gpunode.facts import LogFile
from gpunode.kb import load_kb

KB = load_kb()
READY = answering_peers(kubelet_ready=True)
NOT_READY = answering_peers(kubelet_ready=False)

# fluent/fluent-bit#3544: Use_Kubelet with host=127.0.0.1 from a pod without host networking
_KUBELET = [
    "[2023/10/26 22:04:49] [ info] [fluent bit] version=2.1.10, commit=b19e9ce674, pid=1",
    "[2023/10/26 22:04:49] [ info] [filter:kubernetes:kubernetes.0] https=1 host=127.0.0.1 port=10250",
    "[2023/10/26 22:04:49] [ info] [filter:kubernetes:kubernetes.0] local POD info OK",
    "[2023/10/26 22:04:49] [ info] [filter:kubernetes:kubernetes.0] testing connectivity with Kubelet...",
    "[2023/10/26 22:04:49] [error] [filter:kubernetes:kubernetes.0] kubelet upstream connection error",
]
# fluent/fluent-bit#505: the filter given the API server's own port instead of the Service's
_APISERVER = [
    "[2018/02/07 18:32:43] [ info] [engine] started",
    "[2018/02/07 18:32:43] [ info] [filter_kube] https=1 host=kubernetes.default.svc.cluster.local port=6443",
    "[2018/02/07 18:32:43] [ info] [filter_kube] testing connectivity with API server...",
    "[2018/02/07 18:32:43] [error] [filter_kube] upstream connection error",
    "[2018/02/07 18:32:43] [error] [filter_kube] upstream connection error",
]
# an output whose peer no node fact shows up (an Elasticsearch that may be down for now)
_OUTPUT = [
    "[2022/12/09 10:01:40] [ info] [output:es:es.0] worker #0 started",
    "[2022/12/09 10:01:41] [error] [output:es:es.0] upstream connection error",
]
# NVIDIA/k8s-device-plugin#33's withdrawal, then the plugin's own progress (registering)
_WITHDRAWN = [
    "2018/02/27 16:43:50 Starting to serve on /var/lib/kubelet/device-plugins/nvidia.sock",
    "2018/02/27 16:43:50 Warning: GPU with UUID GPU-edae6d5d-6698-fb8d-2c6b-2a791224f089 is too old to "
    "support healtchecking with error: %!s(MISSING). Marking it unhealthy",
    "2018/02/27 16:43:51 Registered device plugin with Kubelet",
]


def _log(lines: list[str], container: str = "fluent-bit") -> LogFile:
    return LogFile(f"logs/logging/agent-x/{container}.log", "logging", "agent-x", container, False,
                   tuple(lines))


def test_fluent_bit_levels_are_explicit() -> None:
    assert severity(_KUBELET[-1]) == 2
    assert severity("[error] [filter:kubernetes:kubernetes.0] kubelet upstream connection error") == 2
    assert severity("[2023/01/01 10:00:00] [ warn] [engine] failed to flush chunk") == 0
    assert message_of(_KUBELET[-1]) == "[filter:kubernetes:kubernetes.0] kubelet upstream connection error"


def test_a_ready_kubelet_the_agent_cannot_reach_is_its_own_lasting_failure() -> None:
    found = running_finding(KB, "logging-agent", [_log(_KUBELET)], answering=READY)
    assert found is not None and found.cause == "error_unreachable"
    assert found.context["decisive_line"] == _KUBELET[-1]


def test_the_kubelet_not_ready_may_be_down_for_now() -> None:
    # fluent/fluent-bit#8913: the same line on a new node whose kubelet is not ready yet
    assert running_finding(KB, "logging-agent", [_log(_KUBELET)], answering=NOT_READY) is None


def test_the_api_server_named_before_the_run_of_errors() -> None:
    found = running_finding(KB, "logging-agent", [_log(_APISERVER)], answering=NOT_READY)
    assert found is not None and found.cause == "error_unreachable"


def test_a_peer_no_fact_shows_up_stays_transient() -> None:
    assert running_finding(KB, "logging-agent", [_log(_OUTPUT)], answering=READY) is None
    assert running_finding(KB, "logging-agent", [_log(_KUBELET)]) is None  # no facts given


def test_a_withdrawn_device_lasts_though_the_plugin_goes_on() -> None:
    found = running_finding(KB, "hami-device-plugin", [_log(_WITHDRAWN, "device-plugin")])
    assert found is not None and found.cause == "error_device"
    assert "Marking it unhealthy" in found.context["decisive_line"]
    assert found.evidence[0].source.endswith(":2")


def test_a_device_given_back_is_no_failure() -> None:
    back = [*_WITHDRAWN, "2018/02/27 16:50:02 'nvidia.com/gpu' device marked healthy: "
            "GPU-edae6d5d-6698-fb8d-2c6b-2a791224f089"]
    assert running_finding(KB, "hami-device-plugin", [_log(back, "device-plugin")]) is None
