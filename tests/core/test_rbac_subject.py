"""A refusal of 'nodes' belongs to the identity refused: the kubelet answers every client
it does not authorise in the same words, so NFD's RBAC cause claims it only where the
service account is NFD's own."""

from __future__ import annotations

from gpunode.kb import load_kb

KB = load_kb()

# open-telemetry/opentelemetry-helm-charts#1283: the collector's kubeletstats receiver, GKE
_COLLECTOR_REFUSED = (
    '2024-07-30T15:20:00.952Z        error   kubeletstatsreceiver@v0.105.0/scraper.go:113    call to /pods '
    'endpoint failed       {"kind": "receiver", "name": "kubeletstats", "data_type": "metrics", "error": '
    '"kubelet request GET https://gke-otel-default-pool-6a2b7a08-ldsm:10250/pods failed - '
    '\\"403 Forbidden\\", '
    'response: \\"Forbidden (user=system:serviceaccount:default:otel-daemonset-otel-opentelemetry-collector, '
    'verb=get, resource=nodes, subresource=proxy)\\""}')


def test_another_agent_refused_by_the_kubelet_is_not_nfd_s_rbac() -> None:
    assert KB.catalogued_elsewhere("otel-agent", _COLLECTOR_REFUSED) is None
    assert KB.class_of(_COLLECTOR_REFUSED) == "error_permission_denied"


def test_nfd_s_own_service_account_refused_is_still_its_rbac() -> None:
    nfd = _COLLECTOR_REFUSED.replace("default:otel-daemonset-otel-opentelemetry-collector",
                                     "gpu-operator:node-feature-discovery-worker")
    cause = KB.catalogued_in("nfd", nfd)
    assert cause is not None and cause.code == "nfd_rbac_forbidden"
