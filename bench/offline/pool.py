"""The node pass in worker processes against the same pass serially, in one process.

    PYTHONPATH=src .venv/bin/python bench/offline/pool.py BUNDLE [--rounds 3] [--view validate]

Loads the bundle once, then runs the node pass of ``diagnose`` (or ``validate``, whose
node checks ride on it) several rounds, each round three ways one after the other:
serially (``serial``), in one worker process (``pool1``: what the pool itself costs,
with no second process competing for the cores) and in one worker per core (``pool``).
Interleaving the three in one process keeps slow drifts of a shared machine out of
the comparison; the round with the least CPU is kept for each. Per way: CPU seconds
of this process (``parent_cpu_s``) and of its workers (``workers_cpu_s``, from
``RUSAGE_CHILDREN`` once they are reaped), minor page faults of each, wall seconds,
bytes the workers sent back, the time from the pool's start to its first result and
how long each fork took.
Prints one JSON line.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import resource
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from gpunode import nodepool
from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.facts import ClusterFacts
from gpunode.validate.runner import validate_and_diagnose

_SENT: list[int] = []
_FIRST: list[float] = []


def _counting(codec: nodepool.Codec | None) -> nodepool.Codec | None:
    """The pool's codec, counting the bytes of every chunk it decodes."""
    if codec is None:
        return None
    encode, decode = codec

    def counted(data: bytes) -> list[Any]:
        _SENT.append(len(data))
        return decode(data)

    return encode, counted


def _timed(original: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    def in_workers(names: Sequence[str], work: Callable[[str], Any], workers: int,
                   codec: nodepool.Codec | None) -> Iterator[Any]:
        started = time.perf_counter()
        for i, result in enumerate(original(names, work, WORKERS[0] or workers, _counting(codec))):
            if i == 0:
                _FIRST.append(time.perf_counter() - started)
            yield result

    return in_workers


WORKERS = [0]
nodepool._in_workers = _timed(nodepool._in_workers)  # type: ignore[assignment]
_FORKS: list[float] = []
_fork = os.fork


def _timed_fork() -> int:
    """``os.fork`` timed in the parent: copying the page tables of a large process."""
    started = time.perf_counter()
    pid = _fork()
    if pid:
        _FORKS.append(time.perf_counter() - started)
    return pid


os.fork = _timed_fork


def one_pass(facts: ClusterFacts, view: str, jobs: int, workers: int) -> dict[str, float]:
    """One node pass (with the cluster judgements around it): CPU, faults, wall."""
    os.environ[nodepool.JOBS_ENV] = str(jobs)
    WORKERS[0] = workers
    _SENT.clear()
    _FIRST.clear()
    _FORKS.clear()
    gc.collect()
    me0, kids0 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    if view == "validate":
        validate_and_diagnose(facts, read_node_observations)
    else:
        diagnose(facts, read_node_observations)
    wall = time.perf_counter() - wall
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "wall_s": round(wall, 3),
        "parent_cpu_s": round(me.ru_utime + me.ru_stime - me0.ru_utime - me0.ru_stime, 3),
        "workers_cpu_s": round(kids.ru_utime + kids.ru_stime - kids0.ru_utime - kids0.ru_stime, 3),
        "parent_minflt": me.ru_minflt - me0.ru_minflt,
        "workers_minflt": kids.ru_minflt - kids0.ru_minflt,
        "sent_bytes": sum(_SENT),
        "first_result_s": round(_FIRST[0], 3) if _FIRST else 0.0,
        "fork_ms": [round(f * 1e3, 1) for f in _FORKS],
    }


def _spin(table: dict[int, int], steps: int) -> None:
    """Dictionary lookups over a table larger than the caches: what judging nodes is like."""
    at = 0
    for _ in range(steps):
        at = table[at]


def _cpu_of(children: int, table: dict[int, int], steps: int) -> float:
    """CPU seconds of each of ``children`` forked processes spinning at the same time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    pids = []
    for _ in range(children):
        pid = os.fork()
        if pid == 0:
            _spin(table, steps)
            os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / children


def concurrency_cost(cores: int, rounds: int) -> float:
    """CPU of the same work in ``cores`` processes at once over one process alone (best of
    ``rounds`` each): above 1 when processes running together slow each other (shared
    caches and memory bandwidth, or virtual cores that are one physical core's threads).
    No pool can be cheaper than this; it says what of a pool's cost is the machine's."""
    size = 1 << 21
    order = list(range(1, size))
    random.Random(7).shuffle(order)
    table = dict(zip([0, *order], [*order, 0], strict=True))  # one cycle through every key
    steps = 3_000_000
    alone = min(_cpu_of(1, table, steps) for _ in range(rounds))
    together = min(_cpu_of(cores, table, steps) for _ in range(rounds))
    return round(together / alone, 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--view", choices=("diagnose", "validate"), default="diagnose")
    args = parser.parse_args()
    facts = load_bundle(args.bundle)
    cores = nodepool.jobs(nodepool.MIN_NODES)
    ways = {"serial": (1, 0), "pool1": (2, 1), "pool": (cores, cores)}
    one_pass(facts, args.view, 1, 0)  # fills the per-process caches every way shares
    best: dict[str, dict[str, float]] = {}
    for _ in range(args.rounds):
        for way, (jobs, workers) in ways.items():
            got = one_pass(facts, args.view, jobs, workers)
            cpu = got["parent_cpu_s"] + got["workers_cpu_s"]
            if way not in best or cpu < best[way]["parent_cpu_s"] + best[way]["workers_cpu_s"]:
                best[way] = got
    print(json.dumps({"view": args.view, "gpu_nodes": len(facts.gpu_nodes()), "cores": cores,
                      "load_avg": os.getloadavg()[0],
                      "concurrency_cost": concurrency_cost(cores, args.rounds), **best}))


if __name__ == "__main__":
    main()
