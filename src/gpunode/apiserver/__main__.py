"""``python -m gpunode.apiserver BUNDLE``: serve a bundle until interrupted."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from gpunode.apiserver.faults import Faults
from gpunode.apiserver.server import serve_bundle
from gpunode.errors import GpunodeError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpunode-apiserver",
        description="Serve a gpunode bundle over the Kubernetes API on loopback (test aid).")
    parser.add_argument("bundle", type=Path, help="bundle directory or .tar.gz")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--token", default=None, help="bearer token (random by default)")
    parser.add_argument("--kubeconfig", type=Path, default=None, help="write a kubeconfig here")
    parser.add_argument("--ready-file", type=Path, default=None,
                        help="write {url, kubeconfig, ca, token} as JSON here once serving")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added per request")
    parser.add_argument("--too-many-every", type=int, default=0, help="429 every Nth request")
    parser.add_argument("--retry-after", type=int, default=1, help="Retry-After on 429s")
    parser.add_argument("--error-500-every", type=int, default=0, help="500 every Nth request")
    parser.add_argument("--drop-every", type=int, default=0, help="drop every Nth connection")
    parser.add_argument("--forbid", action="append", default=[],
                        help='403 for "VERB RESOURCE [NAMESPACE|-]", e.g. "create pods/exec" '
                             '(repeatable; "-" means cluster-wide requests only)')
    parser.add_argument("--answer", action="append", default=[],
                        help='"ANSWER[xN] VERB RESOURCE [NAMESPACE|-]": answer 404/410/500/…, '
                             'hang, cut or garble instead (repeatable; see Faults.answers)')
    parser.add_argument("--hang", type=float, default=5.0, help="seconds a hang rule waits")
    parser.add_argument("--no-page-cache", action="store_true",
                        help="re-render every list page instead of keeping encoded pages")
    return parser


def faults_from(args: argparse.Namespace) -> Faults:
    return Faults(latency_s=args.latency, too_many_every=args.too_many_every,
                  retry_after_s=args.retry_after, error_500_every=args.error_500_every,
                  drop_every=args.drop_every, forbid=tuple(args.forbid),
                  answers=tuple(args.answer), hang_s=args.hang)


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until SIGINT/SIGTERM; print the URL and kubeconfig path on stdout."""
    args = build_parser().parse_args(argv)
    try:
        server = serve_bundle(args.bundle, host=args.host, port=args.port,
                              faults=faults_from(args), token=args.token,
                              kubeconfig_path=args.kubeconfig,
                              cache_pages=not args.no_page_cache)
    except GpunodeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: _stop(done))
    if args.ready_file:  # started by a test's serve_bundle: never outlive the process that did
        threading.Thread(target=_watch_parent, args=(os.getppid(), done), daemon=True).start()
    with server:
        print(f"serving {args.bundle} at {server.url}; kubeconfig: {server.kubeconfig_path}",
              flush=True)
        if args.ready_file:
            args.ready_file.write_text(json.dumps({
                "url": server.url, "kubeconfig": str(server.kubeconfig_path),
                "ca": str(server.ca_cert_path), "token": server.token}))
        done.wait()
    return 0


def _stop(done: threading.Event) -> None:
    """The first signal stops serving; a second one, while a handler still streams or hangs
    on purpose (a fault), ends the process at once."""
    if done.is_set():
        os._exit(0)
    done.set()


def _watch_parent(parent: int, done: threading.Event) -> None:
    """Stop serving when the process that started this server is gone (a test killed before
    it could stop it): its child is re-parented, so the parent's pid changes."""
    while not done.wait(1.0):
        if os.getppid() != parent:
            done.set()


if __name__ == "__main__":
    sys.exit(main())
