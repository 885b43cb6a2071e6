"""The agent's history file: one per node under ``--history-dir`` (a host directory).

The DaemonSet mounts ``/var/lib/gpunode`` from the host, so the history survives the
agent's restarts and upgrades. Each write goes to a temporary name in the same
directory and is renamed over the file (a crash leaves the old file or the new one,
never half of one); over 64 KiB the oldest entries are dropped first. A file that does
not read as a history is renamed aside (``<file>.damaged``) with one warning line and a
new history begins: the agent never stops for it. What the entries mean and the trends
read from them: ``gpunode.fleet.history``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import threading
from pathlib import Path
from typing import Final

from gpunode.errors import ParseError
from gpunode.fleet.history import (
    HISTORY_FORMAT,
    HISTORY_MAX_BYTES,
    History,
    HistoryEntry,
    compact,
    decode_history,
    encode_history,
    record,
)

log = logging.getLogger(__name__)

#: Where the DaemonSet mounts the host directory the history lives in.
DEFAULT_HISTORY_DIR: Final = "/var/lib/gpunode"


def history_file(directory: Path, node: str) -> Path:
    """``<dir>/history-<node>.json`` (the node's name keeps files apart if a directory is shared)."""
    safe = "".join(c if c.isalnum() or c in "-._" else "_" for c in node) or "unknown-node"
    return directory / f"history-{safe}.json"


class HistoryStore:
    """One node's history: loaded once, updated after each probe, written atomically.

    Never raises: a directory that cannot be written is logged once and the history is
    kept in memory only (it is still served at /history)."""

    def __init__(self, directory: Path, node: str, max_bytes: int = HISTORY_MAX_BYTES) -> None:
        self.path = history_file(directory, node)
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._write_warned = False
        self._history = self._load(node)
        self._data = encode_history(self._history)

    @property
    def history(self) -> History:
        with self._lock:
            return self._history

    @property
    def data(self) -> bytes:
        """The history file's bytes, as last written (what /history serves)."""
        with self._lock:
            return self._data

    def add(self, entry: HistoryEntry) -> None:
        """Record a probe's state, compact to the bound and write the file."""
        with self._lock:
            history, data = compact(record(self._history, entry), self.max_bytes)
            self._history, self._data = history, data
        self._write(data)

    def _load(self, node: str) -> History:
        empty = History(HISTORY_FORMAT, node)
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return empty
        except OSError as exc:
            log.warning("history %s: cannot read (%s); starting a new one", self.path, exc.strerror or exc)
            return empty
        try:
            history = decode_history(data)
        except ParseError as exc:
            aside = self.path.with_name(self.path.name + ".damaged")
            with contextlib.suppress(OSError):
                os.replace(self.path, aside)
            log.warning("history %s: %s; set aside as %s, starting a new one", self.path, exc, aside.name)
            return empty
        return History(HISTORY_FORMAT, node, history.entries)

    def _write(self, data: bytes) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(data)
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(tmp, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError as exc:
            if not self._write_warned:
                log.warning("history %s: cannot write (%s); keeping it in memory only",
                            self.path, exc.strerror or exc)
                self._write_warned = True
            return
        if self._write_warned:
            log.info("history %s written again", self.path)
            self._write_warned = False
