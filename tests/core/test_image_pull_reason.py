"""An image that cannot be pulled is a state whose reason the kubelet's pull event gives
(issue 20: a state is never the whole answer while a line below it says why). Where the
reason is what the catalogued image_pull_failed describes by its example (the image or tag
is not there: 'not found', 'manifest unknown') the catalogued cause stays, quoting the line;
where the pull failed on the path to the registry (its certificate, a timeout) or on the
credentials, the line falls in a more specific class than that example and the class is the
cause. The kubelet's own back-off wording and its event that only names the state
('Error: ErrImagePull') are no reason."""

from __future__ import annotations

import msgspec
import pytest

from gpunode.bundle.kube import Event, Pod
from gpunode.checks.decisive import Text, decisive_finding, pod_texts
from gpunode.kb import load_kb
from gpunode.model import Finding, Status

KB = load_kb()
OPERATOR = "nvcr.io/nvidia/gpu-operator:v23.9.0"
CUDA = "nvcr.io/nvidia/cuda@sha256:ed72"
PULL = Finding("gpu-operator", Status.FAILED, "image_pull_failed", (), {"container": "gpu-operator"}, 10)


def _event(message: str, reason: str = "Failed") -> Text:
    return Text(f"event pod gpu-operator/gpu-operator-x reason={reason} count=3", [message], "cannot start",
                numbered=False, reason=reason)


@pytest.mark.parametrize(
    ("message", "cause"),
    [
        # kubernetes/minikube#12944: the registry's certificate is not trusted by the runtime
        ('Failed to pull image "selenium/hub": rpc error: code = Unknown desc = Error response from daemon: '
         'Get "https://registry-1.docker.io/v2/": x509: certificate signed by unknown authority',
         "error_unreachable"),
        # NVIDIA/gpu-operator#1519: the event as the reporter quoted it, the verdict alone
        ("tls: failed to verify certificate: x509: certificate signed by unknown authority",
         "error_unreachable"),
        # containerd's answer for a registry that wants credentials it was not given
        (f'Failed to pull image "{OPERATOR}": rpc error: code = Unknown desc = failed to pull and unpack '
         f'image "{OPERATOR}": failed to resolve reference "{OPERATOR}": pulling from host nvcr.io failed '
         "with status code [manifests v23.9.0]: 401 Unauthorized", "error_permission_denied"),
        # NVIDIA/gpu-operator#388 and #407: the digest is gone from the registry
        (f'Failed to pull image "{CUDA}": rpc error: code = NotFound desc = failed to pull and unpack image '
         f'"{CUDA}": failed to resolve reference "{CUDA}": {CUDA}: not found', "image_pull_failed"),
        (f'Failed to pull image "{CUDA}": rpc error: code = Unknown desc = Error reading manifest '
         "sha256:ed72 in nvcr.io/nvidia/cuda: manifest unknown: manifest unknown", "image_pull_failed"),
    ],
)
def test_pull_reason(message: str, cause: str) -> None:
    found = decisive_finding(KB, "gpu-operator", PULL, [_event(message)])
    assert found is not None
    assert found.cause == cause
    assert found.context["decisive_state"] == "image_pull_failed"


def test_the_kubelets_own_words_are_no_reason() -> None:
    # NVIDIA/gpu-operator#1968: the back-off message and the event that names the state only
    pod = msgspec.convert({"metadata": {"name": "gpu-operator-x", "namespace": "gpu-operator"}, "status": {
        "containerStatuses": [{"name": "gpu-operator", "state": {"waiting": {
            "reason": "ImagePullBackOff",
            "message": 'Back-off pulling image "nvcr.io/nvidia/gpu-operator:v25.10.1"'}}}]}}, Pod)
    events = [msgspec.convert({"type": "Warning", "reason": "Failed", "message": message}, Event)
              for message in ("Error: ImagePullBackOff", "Error: ErrImagePull")]
    texts = list(pod_texts(pod, (), events, "gpu-operator"))
    assert texts == []
    assert decisive_finding(KB, "gpu-operator", PULL, texts) is None


def test_an_error_that_is_more_than_a_state_name_is_read() -> None:
    events = [msgspec.convert({"type": "Warning", "reason": "Failed",
                               "message": 'Error: configmap "dcgm-metrics" not found'}, Event)]
    texts = list(pod_texts(Pod(), (), events, ""))
    assert [t.lines for t in texts] == [['Error: configmap "dcgm-metrics" not found']]
