"""Decode cost of a large pods.json: full decoders vs gpunode's slim structs.

Usage: python bench/core/decode.py PODS_JSON MODE   (one measurement per process,
so peak RSS is that mode's own). Prints one JSON line: mode, seconds, peak RSS MiB.
"""

from __future__ import annotations

import gc
import json
import sys
import time
from pathlib import Path

import msgspec

from gpunode.bundle.load import _LIST_DECODERS, gc_paused


def _status_mib(field: str) -> float:
    """VmHWM (peak) or VmRSS (now) of this process; ru_maxrss would include the
    parent's peak inherited across fork, which is not ours."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _peak_mib() -> float:
    return _status_mib("VmHWM")


def run(path: Path, mode: str) -> dict[str, object]:
    data = path.read_bytes()
    base = _status_mib("VmRSS")
    gc_off = mode.endswith("-nogc")
    if gc_off:
        gc.disable()
    start = time.perf_counter()
    if mode.startswith("json"):
        obj = json.loads(data)
        count = len(obj["items"])
    elif mode.startswith("msgspec-untyped"):
        obj = msgspec.json.decode(data)
        count = len(obj["items"])
    elif mode == "gpunode-slim":
        with gc_paused():
            obj = _LIST_DECODERS["pods"].decode(data)
        count = len(obj.items)  # type: ignore[attr-defined]
    else:
        raise SystemExit(f"unknown mode {mode}")
    seconds = time.perf_counter() - start
    return {
        "mode": mode,
        "items": count,
        "seconds": round(seconds, 3),
        "peak_rss_mib": round(_peak_mib(), 1),
        "rss_with_input_mib": round(base, 1),
        "decoded_mib": round(_status_mib("VmRSS") - base, 1),
        "json_mib": round(len(data) / 2**20, 1),
    }


if __name__ == "__main__":
    print(json.dumps(run(Path(sys.argv[1]), sys.argv[2])))
