"""Read a large cluster list (``{"kind": "…List", "items": [ … ]}``) in pieces of whole items.

Read whole, a list file's bytes and its decoded items are held at once (a 315 MB,
100,000-pod list peaked at 564 MiB), and nothing bounds how many items its bytes
decode into (``{}`` is three bytes and one struct). So the items' array is cut at
top-level commas into pieces of about PIECE_BYTES, each decoded on its own while
only that piece's bytes are held; the loader checks its memory after each one.

Where to cut: the bytes between the first two items (the separator: in a
``kubectl``-style file ``\\n        },\\n        {\\n            "apiVersion"``, in a
collected one ``},{"apiVersion"``) are searched backwards from the end of each
window, at C speed. A separator can also occur inside an item; such a cut is
wrong, the piece then fails to decode and is cut again exactly, item by item
(msgspec finds where each item ends). Every cut is checked that way: a piece that
decodes as a JSON array on its own ends outside any string at the array's own
depth, so the items read piece by piece are those of the whole document.
"""

from __future__ import annotations

import tarfile
from dataclasses import dataclass
from typing import IO

import msgspec

from gpunode.errors import BundleError
from gpunode.relazy import lazy_compile

#: Bytes of the list read at once (its items decoded together).
PIECE_BYTES = 1024 * 1024
#: One item may be larger than a piece up to this (Kubernetes stores objects of at most 1.5 MiB).
MAX_ITEM_BYTES = 4 * 1024 * 1024
#: Where the list's ``"items": [`` must start, and its end (``], "kind": …}``) lie.
FRAME_BYTES = 1024 * 1024

_ITEMS_KEY = lazy_compile(rb'"items"\s*:\s*\[')
_TRAILING = lazy_compile(r"JSON is malformed: trailing characters \(byte (\d+)\)")
_AT_BYTE = lazy_compile(r"\(byte (\d+)\)")
_WHITESPACE = b" \t\r\n"
_RAW = msgspec.json.Decoder(msgspec.Raw)


class _Frame(msgspec.Struct):
    kind: str = ""
    items: list[msgspec.Raw] = []


class _TopLevel(msgspec.Struct):
    items: list[str] = []


_FRAME = msgspec.json.Decoder(_Frame)
_TOP_LEVEL = msgspec.json.Decoder(_TopLevel)


@dataclass(frozen=True)
class Piece:
    """Whole items of the list as one JSON array; ``offset``: where its first byte was."""

    offset: int
    data: bytes
    next: int
    exact: bool


class ListFile:
    """The items' array of one list file, handed out piece by piece."""

    def __init__(self, handle: IO[bytes], size: int, where: str) -> None:
        self.handle, self.size, self.where = handle, size, where
        self.start, self.end, self.kind = self._frame()
        self._separator = b""
        self._comma_at = 0  # the comma's place inside the separator

    def read(self, offset: int, length: int) -> bytes:
        try:
            self.handle.seek(offset)
            return self.handle.read(length)
        except (OSError, EOFError, tarfile.TarError) as exc:
            raise BundleError(f"{self.where}: cannot read: {exc}") from None

    def _frame(self) -> tuple[int, int, str]:
        """Offsets of the items' array content and the list's kind, from its first and last MiB."""
        head = self.read(0, min(self.size, FRAME_BYTES))
        match = _ITEMS_KEY.search(head)
        if match is None:
            raise BundleError(f"{self.where}: not a Kubernetes list: no \"items\": [ in its first "
                              f"{FRAME_BYTES // 1024 // 1024} MiB")
        prefix, start = head[: match.end()], match.end()
        tail_at = max(start, self.size - FRAME_BYTES)
        tail = self.read(tail_at, self.size - tail_at)
        close = len(tail)
        for _ in range(16):  # the list's own metadata after its items may hold a few ']'
            close = tail.rfind(b"]", 0, close)
            if close < 0:
                break
            kind = _frame_kind(prefix, tail[close + 1 :])
            if kind is not None:
                return start, tail_at + close, kind
        raise BundleError(f"{self.where}: malformed or cut short: its items' array does not end "
                          "as a Kubernetes list does")

    def piece(self, pos: int, exact: bool = False) -> Piece:
        """Whole items from ``pos`` (just after ``[`` or a top-level comma) up to about PIECE_BYTES."""
        limit = PIECE_BYTES
        while True:
            window = self.read(pos, min(limit, self.end - pos))
            last = pos + len(window) >= self.end
            if last and len(window) <= PIECE_BYTES:
                return Piece(pos, _bracketed(window, len(window)), self.end, True)
            comma = None if exact or not self._separator else self._by_separator(window)
            exact_cut = comma is None
            if comma is None:
                comma = self._by_items(window, pos, last)
            if comma is not None:
                if comma == len(window):
                    return Piece(pos, _bracketed(window, comma), self.end, True)
                return Piece(pos, _bracketed(window, comma), pos + comma + 1, exact_cut)
            if limit >= MAX_ITEM_BYTES:
                raise BundleError(f"{self.where}: an item larger than {MAX_ITEM_BYTES // 1024 // 1024}"
                                  f" MiB at byte {pos} (Kubernetes objects are at most 1.5 MiB)")
            limit = MAX_ITEM_BYTES

    def _by_separator(self, window: bytes) -> int | None:
        found = window.rfind(self._separator)
        return None if found <= 0 else found + self._comma_at

    def _by_items(self, window: bytes, pos: int, last: bool) -> int | None:
        """The comma after the last whole item in ``window`` (its length when the window holds
        the rest of the list), found item by item; learns the separator on the way."""
        view, at, comma = memoryview(window), 0, None
        while True:
            try:
                _RAW.decode(view[at:])
            except msgspec.DecodeError as exc:
                message = str(exc)
                trailing = _TRAILING.fullmatch(message)
                if trailing is None:
                    if message.startswith("Input data was truncated") and not last:
                        return comma  # the window ends inside this item
                    raise BundleError(f"{self.where}: {_at(message, pos + at)}") from None
                found = at + int(trailing[1]) - 1  # msgspec counts past the character
                if window[found] != ord(","):
                    raise BundleError(f"{self.where}: JSON is malformed: expected ',' or ']' "
                                      f"(byte {pos + found})") from None
                if not self._separator:
                    self._learn(window, found)
                comma, at = found, found + 1
                continue
            except RecursionError:
                raise BundleError(f"{self.where}: nested too deeply") from None
            return len(window) if last else comma

    def _learn(self, window: bytes, comma: int) -> None:
        """The bytes around a top-level comma that every item boundary is likely to share."""
        left = comma
        while left and window[left - 1] in _WHITESPACE:
            left -= 1
        if left and window[left - 1] in b"}]":
            left -= 1
            while left and window[left - 1] in b" \t":
                left -= 1
            if left and window[left - 1] == ord("\n"):
                left -= 1
        right = comma + 1
        while right < len(window) and window[right] in _WHITESPACE:
            right += 1
        if right < len(window) and window[right] == ord("{"):
            right += 1
            while right < len(window) and window[right] in _WHITESPACE:
                right += 1
            if right < len(window) and window[right] == ord('"'):
                close = window.find(b'"', right + 1)
                right = close + 1 if close > 0 else right
        self._separator, self._comma_at = window[left:right], comma - left

    def malformed(self, piece: Piece, exc: Exception) -> BundleError:
        """The decoder's complaint about a piece, its byte offset made the file's."""
        return BundleError(f"{self.where}: {_at(str(exc).splitlines()[0], piece.offset - 1)}")


def _bracketed(window: bytes, end: int) -> bytes:
    """``[`` + ``window[:end]`` + ``]``, copied once (the concatenation copied a piece three
    times: about a gigabyte written, in fresh pages, for a 315 MB list)."""
    return b"".join((b"[", memoryview(window)[:end], b"]"))


def _frame_kind(prefix: bytes, suffix: bytes) -> str | None:
    """The list's kind if ``prefix [ … ] suffix`` is a list whose top-level ``items`` array
    is the one at the end of ``prefix``; None otherwise."""
    if b'"items"' in suffix:
        return None  # a second "items" key: read such a list whole
    try:
        frame = _FRAME.decode(prefix + b"]" + suffix)
    except (msgspec.DecodeError, RecursionError):
        return None
    try:
        _TOP_LEVEL.decode(prefix + b"0]" + suffix)
    except msgspec.ValidationError as exc:
        return frame.kind if str(exc).endswith("`$.items[0]`") else None
    except (msgspec.DecodeError, RecursionError):
        return None
    return None


def _at(message: str, offset: int) -> str:
    """A decoder message whose ``(byte N)`` counts from ``offset`` in the file."""
    return _AT_BYTE.sub(lambda m: f"(byte {int(m[1]) + offset})", message)
