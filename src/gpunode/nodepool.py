"""Per-node work of a large fleet spread over the machine's cores, in node order.

Judging a node is a pure function of the cluster facts and that node's files, so
a fleet's nodes can be judged in forked worker processes that inherit the facts
(nothing is pickled on the way in) and send back only each node's result. The
results come back in the order of the nodes, so the report is the same as a
serial run's, byte for byte. Small fleets, one core, ``GPUNODE_JOBS=1``, a
process with threads (forking it is unsafe) or a platform without ``fork`` are
judged serially in this process.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

# multiprocessing and concurrent.futures (which loads logging) are imported only where a
# pool is started: a probe or a small bundle never needs them (start-up time).

#: Fewer nodes than this are judged in this process: starting workers costs more than it saves.
MIN_NODES = 256
#: Nodes sent to a worker at a time: large enough to amortise the round trip, small
#: enough that every worker stays busy to the end.
MAX_CHUNK = 64
JOBS_ENV = "GPUNODE_JOBS"

#: The work of the current pool, set before its workers fork (they inherit it, unpickled).
_WORK: dict[str, Callable[[str], Any]] = {}
#: How a chunk's results travel back: bytes out of a worker, the results again here.
Codec = tuple[Callable[[list[Any]], bytes], Callable[[bytes], list[Any]]]
_CODEC: dict[str, Codec] = {}


def jobs(nodes: int) -> int:
    """Worker processes for ``nodes`` nodes: 1 means serial, in this process.

    ``GPUNODE_JOBS`` sets the number (1 turns workers off); by default every core
    this process may run on, for fleets of at least MIN_NODES nodes."""
    wanted = os.environ.get(JOBS_ENV, "").strip()
    if wanted:
        return max(1, int(wanted)) if wanted.isdigit() else 1
    if nodes < MIN_NODES:
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, cores)


def judged(names: Sequence[str], work: Callable[[str], Any], codec: Codec | None = None) -> Iterator[Any]:
    """``work(name)`` for every name, in order; spread over worker processes when it pays.

    ``codec`` carries a chunk's results back from a worker (pickled otherwise): an
    encoder of typed structures is several times cheaper than pickle. A worker that
    dies (killed for memory) does not lose nodes: whatever the pool did not return is
    judged here, serially."""
    wanted = jobs(len(names))
    workers = min(wanted, len(names) - 1)  # the first node is judged here
    done = 0
    if wanted > 1 and workers > 0 and can_fork():
        # The first node is judged here before the workers fork: whatever it computes
        # once for all nodes (facts-wide indexes, compiled patterns, validate's
        # cluster-wide sets) is then shared by the workers, not rebuilt (and its
        # memory copied) in each of them.
        yield work(names[0])
        done = 1
        for result in _in_workers(names[1:], work, workers, codec):
            yield result
            done += 1
    yield from map(work, names[done:])


def can_fork() -> bool:
    """Forking a process with other threads running can deadlock the child."""
    import multiprocessing

    return threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods()


def _in_workers(names: Sequence[str], work: Callable[[str], Any], workers: int,
                codec: Codec | None) -> Iterator[Any]:
    """Results of the leading nodes the workers judged (all of them unless the pool broke)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    chunks = _chunks(names, workers)
    _WORK["work"] = work
    if codec is not None:
        _CODEC["codec"] = codec
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))
    try:
        try:
            chunked = pool.map(_run_chunk, chunks)
        except OSError:  # no process could be started here
            return
        try:
            for results in chunked:
                if isinstance(results, bytes):
                    assert codec is not None
                    yield from codec[1](results)
                else:
                    yield from results
        except BrokenProcessPool:  # a worker died: the caller judges the rest
            return
    finally:  # on an error too: pending chunks are dropped, not judged
        pool.shutdown(wait=True, cancel_futures=True)
        _WORK.clear()
        _CODEC.clear()


def _chunks(names: Sequence[str], workers: int) -> list[list[str]]:
    """Chunks of up to MAX_CHUNK nodes, the last few a quarter of that: a worker that takes
    the last chunk then finishes soon after the others (no core idles long at the end)."""
    size = max(1, min(MAX_CHUNK, len(names) // (workers * 8)))
    small = max(1, size // 4)
    head = max(0, len(names) - small * workers * 4) // size * size
    return ([list(names[i : i + size]) for i in range(0, head, size)]
            + [list(names[i : i + small]) for i in range(head, len(names), small)])


def _run_chunk(names: list[str]) -> list[Any] | bytes:
    work = _WORK["work"]
    results = [work(name) for name in names]
    codec = _CODEC.get("codec")
    return results if codec is None else codec[0](results)
