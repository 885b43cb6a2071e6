"""One way to damage bytes for the fuzz tests (importable as ``fuzzdamage``)."""

from __future__ import annotations

#: How ``damage`` hurts the bytes.
HOWS = ("truncate", "insert", "overwrite", "replace")


def damage(data: bytes, how: str, at: int, junk: bytes) -> bytes:
    """``data`` cut at, with ``junk`` inserted at or written over position ``at`` (modulo its
    length), or replaced by ``junk`` entirely."""
    cut = at % (len(data) + 1)
    if how == "truncate":
        return data[:cut]
    if how == "insert":
        return data[:cut] + junk + data[cut:]
    if how == "overwrite":
        return data[:cut] + junk + data[cut + len(junk):]
    return junk  # replace
