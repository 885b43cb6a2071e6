"""A pod waiting on its image (ErrImagePull, ImagePullBackOff) whose decisive line is the
runtime's own answer to the pull, as the kubelet relays it without its 'Failed to pull image'
prefix (the waiting message, or a Failed event of dockershim's days), is the pull state the
image_pull_failed cause names, whichever runtime wrote it: containerd's 'failed to pull and
unpack image' (sympozium-ai/sympozium#207, forcedotcom/salesforcedx-docker#35), dockerd's
'Error response from daemon: manifest for X not found' (mattmattox/drain-node-on-crash#7,
lachie83/k8s-kubectl#157), CRI-O's 'Error reading manifest T in R: manifest unknown'
(cri-o/cri-o#4388, containers/crun#324). A pull refused for the registry's certificate still
reads as that more specific class."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import top_pair


def _top(state: str, message: str, event: str | None = None) -> tuple[str, str] | None:
    evidence: list[dict[str, Any]] = [
        {"kind": "pod-state", "component": "device-plugin", "state": state, "message": message}]
    if event:
        evidence.append({"kind": "event", "component": "device-plugin", "type": "Warning",
                         "reason": "Failed", "message": event})
    raw: dict[str, Any] = {"id": "x-pull-words", "source": "https://example.org/x", "title": "t",
                           "platform": "ubuntu", "evidence": evidence, "expect": {"healthy": True}}
    return top_pair(msgspec.convert(raw, Case))


_CONTAINERD = ('rpc error: code = NotFound desc = failed to pull and unpack image '
               '"ghcr.io/sympozium-ai/sympozium/llmfit-daemon:v0.10.34": failed to resolve reference '
               '"ghcr.io/sympozium-ai/sympozium/llmfit-daemon:v0.10.34": '
               'ghcr.io/sympozium-ai/sympozium/llmfit-daemon:v0.10.34: not found')
_SALESFORCE = ('rpc error: code = NotFound desc = failed to pull and unpack image '
               '"docker.io/salesforce/salesforcedx:latest": failed to resolve reference '
               '"docker.io/salesforce/salesforcedx:latest": '
               'docker.io/salesforce/salesforcedx:latest: not found')
_DOCKERD = ('rpc error: code = Unknown desc = Error response from daemon: manifest for '
            'drainnode/leader:v1.0-rc9 not found: manifest unknown: manifest unknown')
_DOCKERD_EVENT = ('Error response from daemon: manifest for lachlanevenson/k8s-kubectl:v1.18.20 not found: '
                  'manifest unknown: manifest unknown')
_CRIO = ('rpc error: code = Unknown desc = Error reading manifest latest in registry.mydomain/image: '
         'manifest unknown: manifest unknown')
_CRIO_PODMAN = ('Error initializing source docker://registry.fedoraproject.org/hello-world:latest: '
                'Error reading manifest latest in registry.fedoraproject.org/hello-world: '
                'manifest unknown: manifest unknown')
_X509 = ('rpc error: code = Unknown desc = failed to pull and unpack image '
         '"harbor.local/nvidia/k8s-device-plugin:v0.14.0": failed to resolve reference '
         '"harbor.local/nvidia/k8s-device-plugin:v0.14.0": failed to do request: '
         'Head "https://harbor.local/v2/nvidia/k8s-device-plugin/manifests/v0.14.0": '
         'x509: certificate signed by unknown authority')


def test_containerd_s_answer_in_the_waiting_message_is_the_pull() -> None:
    assert _top("ErrImagePull", _CONTAINERD) == ("device-plugin", "image_pull_failed")
    assert _top("ErrImagePull", _SALESFORCE) == ("device-plugin", "image_pull_failed")


def test_dockerd_s_answer_is_the_pull() -> None:
    assert _top("ErrImagePull", _DOCKERD) == ("device-plugin", "image_pull_failed")
    assert _top("ErrImagePull", "", _DOCKERD_EVENT) == ("device-plugin", "image_pull_failed")


def test_cri_o_s_answer_is_the_pull() -> None:
    assert _top("ErrImagePull", _CRIO) == ("device-plugin", "image_pull_failed")
    assert _top("ImagePullBackOff", "", _CRIO_PODMAN) == ("device-plugin", "image_pull_failed")


def test_a_refused_certificate_keeps_its_class() -> None:
    assert _top("ErrImagePull", _X509) == ("device-plugin", "error_unreachable")
