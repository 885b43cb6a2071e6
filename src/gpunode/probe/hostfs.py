"""Bounded, read-only access to the host's files under ``--host-root``.

Inside a pod the host is mounted at e.g. ``/host``; its absolute symlinks
(``/var/run -> /run``) must be followed *inside* that root, not in the pod, so paths
are resolved component by component. Every text read is capped and remembered for
the bundle, keyed by its absolute path on the node.
"""

from __future__ import annotations

import fnmatch
import os
import stat

MAX_FILE_BYTES = 256 * 1024
MAX_DIR_ENTRIES = 512
_MAX_LINK_HOPS = 40


class HostFS:
    """Reads under one host root and records what it read (``texts``) and failures."""

    def __init__(self, root: str = "/") -> None:
        self.root = os.path.abspath(root or "/")
        self.texts: dict[str, str] = {}
        self.errors: list[str] = []

    def resolve(self, node_path: str) -> str:
        """The local path of ``node_path``, following symlinks within the root."""
        if self.root == "/":
            return node_path
        pending = [p for p in node_path.split("/") if p]
        resolved: list[str] = []
        hops = 0
        while pending:
            part = pending.pop(0)
            if part in (".", ".."):
                if part == ".." and resolved:
                    resolved.pop()
                continue
            local = os.path.join(self.root, *resolved, part)
            if os.path.islink(local) and hops < _MAX_LINK_HOPS:
                hops += 1
                target = os.readlink(local)
                resolved = [] if target.startswith("/") else resolved
                pending = [p for p in target.split("/") if p] + pending
                continue
            resolved.append(part)
        return os.path.join(self.root, *resolved)

    def exists(self, node_path: str) -> bool:
        return os.path.exists(self.resolve(node_path))

    def read(self, node_path: str, limit: int = MAX_FILE_BYTES, keep: bool = True) -> str | None:
        """Text of a file (at most ``limit`` bytes), None if absent or unreadable."""
        try:
            with open(self.resolve(node_path), "rb") as handle:
                data = handle.read(limit)
        except FileNotFoundError:
            return None
        except OSError as exc:
            self.errors.append(f"{node_path}: {exc.strerror or exc}")
            return None
        text = data.decode("utf-8", errors="replace")
        if keep:
            self.texts[node_path] = text
        return text

    def read_bytes(self, node_path: str, limit: int = 64) -> bytes | None:
        """A few raw bytes (efivars are binary)."""
        try:
            with open(self.resolve(node_path), "rb") as handle:
                return handle.read(limit)
        except OSError:
            return None

    def listdir(self, node_path: str) -> list[str]:
        """Sorted entry names (at most MAX_DIR_ENTRIES); [] if absent or unreadable."""
        try:
            names = os.listdir(self.resolve(node_path))
        except FileNotFoundError:
            return []
        except OSError as exc:
            self.errors.append(f"{node_path}: {exc.strerror or exc}")
            return []
        return sorted(names)[:MAX_DIR_ENTRIES]

    def glob(self, pattern: str) -> list[str]:
        """Node paths matching a pattern whose wildcards are in the last component only."""
        directory, _, name = pattern.rpartition("/")
        if any(ch in directory for ch in "*?["):
            return []
        return [f"{directory}/{n}" for n in self.listdir(directory) if fnmatch.fnmatch(n, name)]

    def lstat(self, node_path: str) -> os.stat_result | None:
        try:
            return os.stat(self.resolve(node_path))
        except OSError:
            return None

    def readlink(self, node_path: str) -> str | None:
        """The target a symlink names, as written (its parent resolved within the root);
        None when it is no symlink or cannot be read."""
        parent, name = os.path.split(node_path.rstrip("/"))
        try:
            return os.readlink(os.path.join(self.resolve(parent), name))
        except OSError:
            return None

    def is_socket(self, node_path: str) -> bool:
        info = self.lstat(node_path)
        return info is not None and stat.S_ISSOCK(info.st_mode)

    def is_file(self, node_path: str) -> bool:
        info = self.lstat(node_path)
        return info is not None and stat.S_ISREG(info.st_mode)
