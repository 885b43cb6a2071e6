"""Text from collected data made safe to print on a terminal.

Logs, events and object names come from clusters gpunode does not trust; an
escape sequence in them could retitle the window, clear the screen or plant a
hyperlink. Everything printed from collected data passes through here: escape
sequences are removed and other control characters shown as ``\\xNN``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TypeVar

import msgspec

from gpunode.errors import BundleError
from gpunode.relazy import lazy_compile

#: CSI / OSC / DCS / other ESC sequences (7-bit and their 8-bit C1 forms), bounded and linear.
_ESCAPES = lazy_compile(
    r"(?:\x1b\[|\x9b)[0-?]{0,64}[ -/]{0,16}[@-~]?"  # CSI … final byte
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]{0,4096}(?:\x07|\x1b\\|\x9c)?"  # OSC, DCS…
    r"|\x1b[ -/]{0,8}[0-~]?"  # two-byte ESC sequences (ESC c, ESC ( B …)
)
_CONTROLS = lazy_compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

S = TypeVar("S")


def strip_controls(text: str) -> str:
    """``text`` without escape sequences; other control characters (not tab/newline) escaped,
    and so are lone surrogates: a file name's bytes that are not UTF-8 (Python reads them
    as U+DC80-U+DCFF) as ``\\xNN``, which no encoder refuses."""
    if text.isprintable():
        return text
    text = _ESCAPES.sub("", text)
    text = _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    return _SURROGATES.sub(_surrogate, text)


_SURROGATES = lazy_compile(r"[\ud800-\udfff]")


def _surrogate(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def safe_struct(value: S, kind: type[S]) -> S:
    """A msgspec Struct (a report) with every string passed through ``strip_controls``."""
    return safe_encoded(value, kind)[0]


def safe_encoded(value: S, kind: type[S]) -> tuple[S, bytes]:
    """``safe_struct(value, kind)`` and its compact JSON encoding (what JSON output writes).

    JSON encoding turns C0 controls into ``\\u00XX``, ``\\b``, ``\\f`` or ``\\r``
    escapes (a carriage return or backspace printed by ``jq -r`` overwrites what a terminal
    shows), so one pass over the encoded text finds them all; the struct is rebuilt (and
    encoded again) only when there was any. The pass looks for the bytes every match starts
    with first (``bytes.find`` runs at memory speed; a fleet's 40 MB report held none).
    """
    try:
        data = msgspec.json.encode(value)
    except UnicodeEncodeError:  # a lone surrogate: a path named by bytes that are not UTF-8
        data = b"\\"
    else:
        if not _may_hold_control(data) or not _holds_control(data):
            return value, data
    clean = msgspec.convert(_clean(msgspec.to_builtins(value)), kind)
    return clean, msgspec.json.encode(clean)


#: An escape the encoder wrote (after an even run of backslashes: ``\\\\r`` is a backslash and
#: an ``r``), DEL, or a C1 control (UTF-8 ``\xc2\x80``-``\xc2\x9f``).
_JSON_CONTROL = lazy_compile(rb"(?<!\\)(?:\\\\)*\\(?:u00[01][0-9a-fA-F]|[bfr])|\x7f|\xc2[\x80-\x9f]")


def _holds_control(data: bytes) -> bool:
    """``_JSON_CONTROL.search(data)``, walking from backslash to backslash: the regex's
    look-behind made a 30 MB report holding any backslash (an escaped quote of a quoted
    log line) cost 0.7 s; the walk costs a step per backslash."""
    if b"\x7f" in data or (b"\xc2" in data and _C1.search(data)):
        return True
    start = data.find(b"\\")
    while start >= 0:
        end = start
        while end < len(data) and data[end] == 0x5C:  # a run of backslashes
            end += 1
        if (end - start) % 2 and _ESCAPED_CONTROL.match(data, end):  # odd: the last one escapes
            return True
        start = data.find(b"\\", end)
    return False


_C1 = lazy_compile(rb"\xc2[\x80-\x9f]")
_ESCAPED_CONTROL = lazy_compile(rb"u00[01][0-9a-fA-F]|[bfr]")


def _may_hold_control(data: bytes) -> bool:
    """Whether ``data`` holds a byte that a _JSON_CONTROL match begins with."""
    return b"\\" in data or b"\x7f" in data or b"\xc2" in data


def _clean(obj: object) -> object:
    if isinstance(obj, str):
        return strip_controls(obj)
    if isinstance(obj, (list, tuple)):  # msgspec's to_builtins keeps a Struct's tuples as tuples
        return [_clean(v) for v in obj]
    if isinstance(obj, dict):
        return {strip_controls(str(k)): _clean(v) for k, v in obj.items()}
    return obj


_UNSAFE_IN_NAME = lazy_compile(r"[\x00-\x1f\x7f\\%\ud800-\udfff]")


def safe_part(name: str) -> str:
    """One path component from an untrusted name: never empty, ``.``, ``..`` or control text."""
    escaped = _UNSAFE_IN_NAME.sub(lambda m: f"%{ord(m.group()):02X}", name)
    if escaped in ("", ".", ".."):
        return escaped.replace(".", "%2E") or "%00"
    return escaped


def inside(root: Path, rel: str) -> Path:
    """``root / rel`` with every component made safe, and never a path outside ``root``.

    Names from the API (namespaces, pods, containers, nodes, hostPaths) become bundle
    paths; a hostile server's ``../`` must not write outside the output directory.
    """
    parts = [safe_part(p) for p in rel.split("/") if p]
    if not parts:
        raise BundleError(f"empty bundle path {rel!r}")
    target = root.joinpath(*parts)
    real_root = root.resolve()
    if not target.parent.resolve().is_relative_to(real_root):
        raise BundleError(f"bundle path {rel!r} leaves {root}")
    return target
