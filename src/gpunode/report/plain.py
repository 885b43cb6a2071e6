"""A text stream that drops the padding rich adds at the end of lines (piped output)."""

from __future__ import annotations

from typing import BinaryIO, TextIO


class PlainWriter:
    """Wraps a stream; each line is written without trailing blanks, on every newline."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        if "\n" in self._pending:
            done, self._pending = self._pending.rsplit("\n", 1)
            self._stream.write("\n".join(line.rstrip() for line in done.split("\n")) + "\n")
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self._stream.write(self._pending)
            self._pending = ""
        self._stream.flush()

    @property
    def buffer(self) -> BinaryIO | None:
        """The wrapped stream's bytes, for output with no padding to drop (JSON: jsonout.py)."""
        return getattr(self._stream, "buffer", None)

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self._stream.fileno()

    @property
    def encoding(self) -> str:
        return getattr(self._stream, "encoding", "utf-8") or "utf-8"
