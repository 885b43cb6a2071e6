"""The floor for ``diagnose --from``: read every byte of the bundle, decode the cluster lists.

    python bench/offline/floor.py BUNDLE

Walks the bundle once, reads every file, and msgspec-decodes each ``cluster/*.json``
into the same needed-fields Structs gpunode uses (GC off). Nothing is judged: no
tool that looks at all of a bundle's data can be faster than this in Python.
Prints one JSON line: files, bytes, seconds.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
from pathlib import Path

from gpunode.bundle.load import _LIST_DECODERS


def main() -> None:
    root = Path(sys.argv[1])
    gc.disable()
    started = time.perf_counter()
    files = size = 0
    for folder, _dirs, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            with open(path, "rb") as handle:
                data = handle.read()
            files += 1
            size += len(data)
            stem, ext = os.path.splitext(name)
            if ext == ".json" and os.path.basename(folder) == "cluster" and stem in _LIST_DECODERS:
                _LIST_DECODERS[stem].decode(data)
    print(json.dumps({"files": files, "bytes": size,
                      "seconds": round(time.perf_counter() - started, 3)}))


if __name__ == "__main__":
    main()
