"""The few API calls active checks make, through lightkube, with errors as answers.

Every call returns data or an error string; only an unreachable API server at
the very first call is fatal (``SourceUnreachable``, exit 3). Like the collector's, the
client's sockets end by a deadline (each call: its requests within CALL_TIMEOUTS times the
timeout) and a kubeconfig exec credential plugin runs once, with a timeout.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx2
import msgspec
from lightkube import ApiError, codecs
from lightkube.resources.core_v1 import Namespace, PersistentVolumeClaim, Secret
from lightkube.resources.core_v1 import Pod as KubePod

from gpunode.bundle.kube import Pod
from gpunode.collect.access import ClusterAccess
from gpunode.collect.kube import CALL_TIMEOUTS, lightkube_client
from gpunode.deadline import deadline
from gpunode.errors import SourceUnreachable
from gpunode.validate.active.manifests import LEFTOVER_SELECTOR, Json

MAX_LOG_BYTES = 64 * 1024
#: One request of an active check without ``--request-timeout``.
REQUEST_TIMEOUT_S = 20.0
KINDS: dict[str, Any] = {
    "Pod": KubePod,
    "PersistentVolumeClaim": PersistentVolumeClaim,
    "Namespace": Namespace,
    "Secret": Secret,
}


class ClusterApi:
    """Create, read and delete the test objects; a context manager closing the client."""

    def __init__(self, access: ClusterAccess) -> None:
        """``access``: the command's cluster (the kubeconfig read and the credential plugin run
        once, for the whole run); its ``--request-timeout`` bounds each request (None:
        REQUEST_TIMEOUT_S)."""
        config = access.config()
        timeout_s = access.request_timeout_s
        self.server: str = config.cluster.server
        self._call_s = CALL_TIMEOUTS * (timeout_s or REQUEST_TIMEOUT_S)
        self._client = lightkube_client(config, timeout_s or REQUEST_TIMEOUT_S, field_manager="gpunode")

    @contextmanager
    def _bounded(self) -> Iterator[None]:
        """One call's requests (a list's pages, a log) end by its deadline, however the server
        dribbles its answers."""
        with deadline(time.monotonic() + self._call_s):
            yield

    def __enter__(self) -> ClusterApi:
        return self

    def __exit__(self, *_exc: object) -> None:
        self._client.close()

    def leftover_namespaces(self) -> list[str]:
        """Namespaces of earlier active runs (by label); unreachable here is fatal."""
        try:
            with self._bounded():
                found = self._client.list(Namespace, labels=dict(LEFTOVER_SELECTOR))
                return sorted(ns.metadata.name for ns in found if ns.metadata and ns.metadata.name)
        except httpx2.TransportError as exc:
            raise SourceUnreachable(f"cannot reach the Kubernetes API at {self.server}: {exc}") from None
        except ApiError as exc:
            raise SourceUnreachable(f"{self.server}: cannot list namespaces: {exc.status.message}") from None

    def objects_in(self, namespace: str) -> list[tuple[str, str]]:
        """(kind, name) of our pods and claims in ``namespace`` (by label)."""
        out: list[tuple[str, str]] = []
        for kind in ("Pod", "PersistentVolumeClaim"):
            try:
                with self._bounded():
                    for obj in self._client.list(KINDS[kind], namespace=namespace,
                                                 labels=dict(LEFTOVER_SELECTOR)):
                        out.append((kind, obj.metadata.name))
            except (httpx2.HTTPStatusError, httpx2.TransportError):
                continue
        return out

    def create(self, manifest: Json) -> str:
        """Create an object; returns "" or the error message."""
        try:
            with self._bounded():
                self._client.create(codecs.from_dict(manifest))
        except ApiError as exc:
            return f"{exc.status.code} {exc.status.reason}: {exc.status.message}"
        except (httpx2.TransportError, httpx2.HTTPStatusError) as exc:
            return f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
        return ""

    def pod(self, namespace: str, name: str) -> tuple[Pod | None, str, str]:
        """(pod as gpunode's slim struct, its host IP, error): the engine's pod judgements apply."""
        try:
            with self._bounded():
                found = self._client.get(KubePod, name, namespace=namespace)
        except ApiError as exc:
            return None, "", f"{exc.status.code} {exc.status.message}"
        except (httpx2.TransportError, httpx2.HTTPStatusError, msgspec.ValidationError) as exc:
            return None, "", f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
        raw = found.to_dict()
        host_ip = str(raw.get("status", {}).get("hostIP", ""))
        return msgspec.convert(raw, Pod), host_ip, ""

    def claim_phase(self, namespace: str, name: str) -> str:
        try:
            with self._bounded():
                claim = self._client.get(PersistentVolumeClaim, name, namespace=namespace)
        except (httpx2.HTTPStatusError, httpx2.TransportError):
            return ""
        return claim.status.phase if claim.status and claim.status.phase else ""

    def log(self, namespace: str, name: str) -> str:
        """The pod's log, bounded; empty when it cannot be read (yet)."""
        try:
            with self._bounded():
                text = "".join(self._client.log(name, namespace=namespace))
        except (httpx2.HTTPStatusError, httpx2.TransportError):
            return ""
        return text[-MAX_LOG_BYTES:]

    def delete(self, kind: str, name: str, namespace: str | None = None) -> str:
        """Delete an object; "" when it is gone (or was already), else the error."""
        try:
            with self._bounded():
                if namespace is None:
                    self._client.delete(KINDS[kind], name, grace_period=0)
                else:
                    self._client.delete(KINDS[kind], name, namespace=namespace, grace_period=0)
        except ApiError as exc:
            return "" if exc.status.code == 404 else f"{kind} {name}: {exc.status.code} {exc.status.message}"
        except (httpx2.TransportError, httpx2.HTTPStatusError) as exc:
            return f"{kind} {name}: {type(exc).__name__}: {str(exc).splitlines()[0]}"
        return ""
