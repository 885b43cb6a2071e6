"""What reading the node list whole costs a ``-l`` collection (issue 22, item 1).

    PYTHONPATH=src .venv/bin/python bench/live/selector.py [--nodes 5000] [--every 10] [--runs 5]

Writes a bundle of ``--nodes`` GPU nodes (the demo's healthy gpu-wk-01, renamed, one in
``--every`` labelled ``pool=a``), serves it with the test API server and times, best of
``--runs``: the node list narrowed by the API (``labelSelector=pool=a``, as the collector
did before) and read whole, then the collector's own narrowing of the whole list (decode each
node, match the selector) and the left-out GPU nodes' signs. With ``--collect`` it times a
whole ``collect_bundle(selector="pool=a")`` instead (run it with PYTHONPATH at an older
checkout for the before figure). Prints JSON.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if not os.environ.get("PYTHONPATH"):  # an older checkout's src for the before figure
    sys.path.insert(0, str(HERE.parents[1] / "src"))

from gpunode import sim  # noqa: E402
from gpunode.apiserver import serve_bundle  # noqa: E402
from gpunode.collect.kube import KubeApi, load_config  # noqa: E402

SELECTOR = "pool=a"


def make_bundle(root: Path, count: int, every: int) -> Path:
    """The demo cluster with ``count`` copies of its healthy GPU node instead of two."""
    bundle = sim.build_bundle(sim.load_scenario("falcon-ai"), root / "bundle")
    path = bundle / "cluster" / "nodes.json"
    doc = json.loads(path.read_text())
    template = next(n for n in doc["items"] if n["metadata"]["name"] == "gpu-wk-01")
    items = [n for n in doc["items"] if not n["metadata"]["name"].startswith("gpu-")]
    for i in range(count):
        node = copy.deepcopy(template)
        node["metadata"]["name"] = f"gpu-{i:05d}"
        node["metadata"]["labels"]["kubernetes.io/hostname"] = f"gpu-{i:05d}"
        if i % every == 0:
            node["metadata"]["labels"]["pool"] = "a"
        items.append(node)
    doc["items"] = items
    path.write_text(json.dumps(doc))
    return bundle


def best(runs: int, work: Callable[[], Any]) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(runs):
        started = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - started)
    return min(times), result


def node_list(api: KubeApi, params: dict[str, str]) -> tuple[int, int, list[bytes]]:
    """(pages, bytes, items) of one paged node list."""
    pages, size, items = 0, 0, []
    for body, page in api.list_pages("/api/v1/nodes", params, 500):
        pages, size = pages + 1, size + len(body)
        items.extend(bytes(i) for i in page.items)
    return pages, size, items


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--collect", action="store_true", help="time a whole collect_bundle -l")
    args = parser.parse_args()
    if args.collect:
        return collect(args)
    from gpunode.collect.live import _chosen_nodes, _left_out, _Run
    from gpunode.collect.slim import Node

    with tempfile.TemporaryDirectory(prefix="gpunode-bench-selector-") as tmp:
        bundle = make_bundle(Path(tmp), args.nodes, args.every)
        with serve_bundle(bundle) as server:
            api = KubeApi(load_config(server.kubeconfig_path, None))
            try:
                narrowed_s, (n_pages, n_bytes, n_items) = best(
                    args.runs, lambda: node_list(api, {"labelSelector": SELECTOR}))
                whole_s, (w_pages, w_bytes, items) = best(args.runs, lambda: node_list(api, {}))
            finally:
                api.close()

    def narrow() -> _Run:
        run = _Run(api=None, writer=None, selector=SELECTOR)  # type: ignore[arg-type]
        left: list[Any] = []
        kept = _chosen_nodes(run, items, left)
        run.unselected = left
        import msgspec

        run.nodes = [msgspec.json.decode(i, type=Node) for i in kept]
        run.left_out = _left_out(run)
        return run

    narrow_s, run = best(args.runs, narrow)
    print(json.dumps({
        "nodes": args.nodes, "chosen": len(run.nodes), "left_out_gpu_nodes": len(run.left_out),
        "api_narrowed": {"pages": n_pages, "bytes": n_bytes, "items": len(n_items),
                         "best_s": round(narrowed_s, 3)},
        "read_whole": {"pages": w_pages, "bytes": w_bytes, "items": len(items), "best_s": round(whole_s, 3)},
        "narrow_and_signs_s": round(narrow_s, 3),
    }, indent=1))
    return 0


def collect(args: argparse.Namespace) -> int:
    from gpunode.collect import collect_bundle

    with tempfile.TemporaryDirectory(prefix="gpunode-bench-selector-") as tmp:
        bundle = make_bundle(Path(tmp), args.nodes, args.every)
        with serve_bundle(bundle) as server:
            runs = []
            for i in range(args.runs):
                started, cpu = time.perf_counter(), time.process_time()
                result = collect_bundle(Path(tmp) / f"out{i}", kubeconfig=server.kubeconfig_path,
                                        quiet=True, selector=SELECTOR)
                runs.append((time.perf_counter() - started, time.process_time() - cpu, result))
    wall, cpu, result = min(runs, key=lambda r: r[0])
    print(json.dumps({"nodes": args.nodes, "selector": SELECTOR, "best_wall_s": round(wall, 2),
                      "its_cpu_s": round(cpu, 2), "api_calls": result.api_calls,
                      "nodes_in_bundle": result.objects.get("nodes"),
                      "left_out": len(getattr(result, "left_out", ()))}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
