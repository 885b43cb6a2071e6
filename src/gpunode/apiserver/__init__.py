"""A small Kubernetes API server that serves a bundle on loopback (tests, demos, benchmarks).

``serve_bundle(bundle_dir)`` answers list/get with selectors and pagination,
pod logs, exec (WebSocket) and the pod proxy from a bundle directory, over
HTTPS with a generated CA and bearer-token auth, with injectable faults.
"""

from gpunode.apiserver.faults import Faults
from gpunode.apiserver.httpserver import AuditRecord
from gpunode.apiserver.kubeconfig import write_kubeconfig
from gpunode.apiserver.server import RunningServer, serve_bundle

__all__ = ["AuditRecord", "Faults", "RunningServer", "serve_bundle", "write_kubeconfig"]
