"""A large bundle folder's node files read ahead, on a core that would otherwise wait.

Loading a bundle is serial: its cluster lists are decoded and indexed before any node can
be judged, and meanwhile the machine's other cores idle (the node pass spreads over them
only afterwards, nodepool.py). A helper process forked before the lists are decoded uses
one of them: it walks ``nodes/`` (the listing that every node read needs) and parses each
node's ``nvidia-smi -q -x`` output (a node's costliest single parse), and hands both over
through memory shared with this process. The loader takes the listing instead of walking
(DirSource.listings_made); the node pass stops the helper when it reads its first node,
and then takes each node's parse (ClusterFacts.ahead) when the text it read itself has the
same length and hash as the text the helper parsed.

Whatever the helper did not finish, could not do or got wrong in any way is done as
without it, so the facts and the report are the same either way. It runs only where the
node pass will use worker processes anyway (nodepool.jobs), from a process without
threads, and can be turned off (GPUNODE_READ_AHEAD=0) or forced on for any bundle folder
(GPUNODE_READ_AHEAD=1, tests).
"""

from __future__ import annotations

import contextlib
import mmap
import os
import select
import signal
import struct
import time
import weakref
from collections.abc import Mapping
from itertools import islice

import msgspec

from gpunode import nodepool
from gpunode.bundle.source import BundleSource, DirSource
from gpunode.errors import ParseError
from gpunode.facts import ParsedAhead, index_node_dirs
from gpunode.limits import MAX_NODE_BYTES, MAX_NODE_FILE_BYTES
from gpunode.parse.nvidia_smi import NvidiaSmiReport, parse_nvidia_smi_xml

ENV = "GPUNODE_READ_AHEAD"
#: The node file parsed ahead, as it lies under a node folder, and its parser.
NVIDIA_SMI_XML = "nvidia-smi-q.xml"
NVIDIA_SMI_KEY = f"cmd/{NVIDIA_SMI_XML}"
#: Shared memory for the listing and the parses (address space: only written pages use
#: memory; a listing or parses that do not fit are left to this process).
REGION_BYTES = 128 << 20
#: How long the node pass waits for the helper to end the node it is parsing.
FINISH_TIMEOUT_S = 1.0

# The region: a stop byte (this process asks the helper to stop), the header, then data.
_STOP = 0
_HEADER = struct.Struct("<qqq")  # listing bytes, index offset, index bytes
_HEADER_AT = 8
_DATA_AT = 64
_LISTED, _FAILED = b"L", b"F"

_Entry = tuple[int, int, NvidiaSmiReport | None, str | None]  # text length, text hash, parse
_ENTRY_ENCODER = msgspec.msgpack.Encoder()
_ENTRY_DECODER = msgspec.msgpack.Decoder(_Entry)
_INDEX_DECODER = msgspec.msgpack.Decoder(list[tuple[bytes, int, int]])


class ReadAhead:
    """This process's side of a helper that lists ``nodes/`` and parses node files."""

    def __init__(self, pid: int, region: mmap.mmap, ready: int) -> None:
        self._pid = pid
        self._region = region
        self._ready = ready  # the helper's pipe: one byte when the listing is ready, EOF at its end
        self._index: dict[str, tuple[int, int]] | None = None
        self._ended = False
        self._reaper = weakref.finalize(self, _reap, pid, ready)

    def listing(self) -> list[str] | None:
        """The helper's listing of ``nodes/`` (DirSource.list's answer); None: list it here."""
        try:
            word = os.read(self._ready, 1)
        except OSError:
            word = b""
        if word != _LISTED:
            self.close()
            return None
        size = _HEADER.unpack_from(self._region, _HEADER_AT)[0]
        if size == 0:
            return []
        return self._region[_DATA_AT : _DATA_AT + size].decode("utf-8", "surrogatepass").split("\0")

    def parsed(self, node: str, cmd: Mapping[str, str]) -> dict[str, ParsedAhead]:
        """The node's nvidia-smi parse, when the helper made it from this very text."""
        if self._index is None:
            self._finish()
        spot = self._index.get(node) if self._index else None
        text = cmd.get(NVIDIA_SMI_XML)
        if spot is None or text is None:
            return {}
        length, digest, report, error = _ENTRY_DECODER.decode(self._region[spot[0] : spot[0] + spot[1]])
        if length != len(text) or digest != hash(text):
            return {}  # not the text the node pass read: it parses its own
        return {NVIDIA_SMI_KEY: (report, error)}

    def close(self) -> None:
        """Stop the helper now, if it still runs, and drop what it made: the command is
        done with the nodes, or loading failed."""
        self._index = {}
        self._end(0.0)

    def _finish(self) -> None:
        """Ask the helper to stop after its current node, wait for it, and take its index."""
        self._region[_STOP] = 1
        self._index = {}
        if self._end(FINISH_TIMEOUT_S):
            self._index = self._read_index()

    def _end(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for the helper to exit (killed after): True if it ended well."""
        if self._ended:
            return False
        self._ended = True
        deadline = time.monotonic() + timeout
        ended = _await_eof(self._ready, deadline)
        if not ended:
            _kill(self._pid)
        status = _wait(self._pid)
        os.close(self._ready)
        self._reaper.detach()
        return ended and status == 0

    def _read_index(self) -> dict[str, tuple[int, int]]:
        _, at, size = _HEADER.unpack_from(self._region, _HEADER_AT)
        if size <= 0:
            return {}
        try:
            rows = _INDEX_DECODER.decode(self._region[at : at + size])
        except msgspec.DecodeError:
            return {}
        return {name.decode("utf-8", "surrogatepass"): (offset, length) for name, offset, length in rows}


def start_read_ahead(source: BundleSource) -> ReadAhead | None:
    """A helper reading ``source``'s nodes ahead, when it pays and is safe; else None."""
    if not isinstance(source, DirSource) or not _wanted(source):
        return None
    try:
        region = mmap.mmap(-1, REGION_BYTES)  # anonymous and shared with the forked helper
        ready, done = os.pipe()
    except (OSError, ValueError):
        return None
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        os.close(ready)
        os.close(done)
        return None
    if pid == 0:  # the helper: never returns into the caller's code
        code = 1
        try:
            os.close(ready)
            code = _helper(source, region, done, parent)
        finally:
            os._exit(code)
    os.close(done)
    ahead = ReadAhead(pid, region, ready)
    source.listings_made["nodes"] = ahead.listing
    return ahead


def _wanted(source: DirSource) -> bool:
    """Whether the node pass will run in worker processes (nodepool.jobs), counted from
    the folders in ``nodes/`` (a bundle's node folders are its GPU nodes and a few more)."""
    wanted = os.environ.get(ENV, "").strip()
    if wanted == "0":
        return False
    if wanted != "1":
        folders = _folders(source, nodepool.MIN_NODES)
        if folders < nodepool.MIN_NODES or nodepool.jobs(folders) < 2:
            return False
    return nodepool.can_fork()  # last: it loads multiprocessing


def _folders(source: DirSource, most: int) -> int:
    """Entries in ``nodes/``, counted up to ``most``."""
    nodes = source.root / "nodes"
    try:
        if nodes.is_symlink():
            return 0
        with os.scandir(nodes) as entries:
            return sum(1 for _ in islice(entries, most))
    except OSError:
        return 0


def _helper(source: DirSource, region: mmap.mmap, ready: int, parent: int) -> int:
    """The helper process: the listing first (the loader waits for it), then node parses
    until asked to stop, the parent is gone, the region is full or every node is done."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends it quietly, with the command
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        listing = source.list("nodes")
        data = "\0".join(listing).encode("utf-8", "surrogatepass")
    except Exception:  # the loader lists again and reports what is wrong
        os.write(ready, _FAILED)
        return 1
    end = _DATA_AT + len(data)
    if end > len(region):
        os.write(ready, _FAILED)
        return 1
    region[_DATA_AT:end] = data
    _HEADER.pack_into(region, _HEADER_AT, len(data), 0, 0)
    os.write(ready, _LISTED)
    rows: list[tuple[bytes, int, int]] = []
    index_bytes = 16  # at most: the index's array header, and each row's name and two numbers
    for node, files in index_node_dirs(listing)["node_files"].items():
        if region[_STOP] or os.getppid() != parent:
            break
        entry = _parsed_entry(source, node, files)
        if entry is None:
            continue
        name = node.encode("utf-8", "surrogatepass")
        index_bytes += len(name) + 24
        if end + len(entry) + index_bytes > len(region):
            break
        region[end : end + len(entry)] = entry
        rows.append((name, end, len(entry)))
        end += len(entry)
    index = msgspec.msgpack.encode(rows)
    region[end : end + len(index)] = index
    _HEADER.pack_into(region, _HEADER_AT, len(data), end, len(index))
    return 0


def _parsed_entry(source: DirSource, node: str, files: tuple[str, ...]) -> bytes | None:
    """The node's nvidia-smi XML parsed, with its text's length and hash; None when the node
    has none or anything goes wrong (the node pass then does it itself). Read alone, with
    the limit a node's files start from: the rare text the node pass reads shorter (the
    files before it used up the node's share) has another length, and is parsed again."""
    rel = f"nodes/{node}/{NVIDIA_SMI_KEY}"
    if rel not in files:
        return None
    try:
        data = source.read(rel, min(MAX_NODE_FILE_BYTES, MAX_NODE_BYTES))
        if data is None:
            return None
        return _ENTRY_ENCODER.encode(_parse(data.decode("utf-8", errors="replace")))
    except Exception:  # the node pass reads and parses it again, and says what is wrong
        return None


def _parse(text: str) -> _Entry:
    try:
        return len(text), hash(text), parse_nvidia_smi_xml(text), None
    except ParseError as exc:
        return len(text), hash(text), None, str(exc)


def _await_eof(fd: int, deadline: float) -> bool:
    """Read ``fd`` until its end (the helper exited, closing its side) or the deadline."""
    while select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
        try:
            if not os.read(fd, 64):
                return True
        except OSError:
            return True
    return False


def _kill(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def _wait(pid: int) -> int:
    """The helper's exit code (-1 when it was killed or already reaped)."""
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return -1
    return os.waitstatus_to_exitcode(status)


def _reap(pid: int, ready: int) -> None:
    """The helper of a ReadAhead dropped without finishing (an error, the end of a test)."""
    _kill(pid)
    _wait(pid)
    with contextlib.suppress(OSError):
        os.close(ready)
