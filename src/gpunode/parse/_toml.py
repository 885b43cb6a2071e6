"""TOML loading shared by the container runtime config parsers, and the package's own data files."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from gpunode.errors import ParseError
from gpunode.parse.k3s_template import is_template, static_text, with_base_version

#: The tokens of a TOML document that hold quotes or apostrophes: a comment, a multi-line
#: string, a one-line string. ``plain``: the text of a one-line basic string that has no
#: escape, no apostrophe and no control character (outside strings and comments neither
#: character can stand, so the tokens are found left to right without parsing the rest).
_QUOTED = re.compile(r'#[^\n]*+'
                     r'|"""(?:[^"\\]++|\\[\s\S]|"{1,2}(?!"))*+"{3,5}'
                     r"|'''(?:[^']++|'{1,2}(?!'))*+'{3,5}"
                     r"""|"(?P<plain>[^"\\'\x00-\x08\x0a-\x1f\x7f]*+)\""""
                     r'|"(?:[^"\\\n]++|\\.)*+"'
                     r"|'[^'\n]*+'")


def _as_literal(token: re.Match[str]) -> str:
    plain = token["plain"]
    return token[0] if plain is None else f"'{plain}'"


def load_data_toml(text: str) -> dict[str, Any]:
    """``tomllib.loads`` for the package's own data files (knowledge base, catalog, tables),
    in about four fifths of the instructions: tomllib reads a basic string (``"..."``) one
    character at a time in Python and a literal one (``'...'``) with one search, so each
    one-line basic string with nothing to unescape and no apostrophe is read as the literal
    string of the same text (the same value, at the same line and column). A text that does
    not decode so is decoded as written, for its own error."""
    try:
        return tomllib.loads(_QUOTED.sub(_as_literal, text))
    except tomllib.TOMLDecodeError:
        return tomllib.loads(text)


def load_toml(path: str, text: str) -> dict[str, Any]:
    """Decode one file; a k3s/RKE2 template (``*.tmpl``) is read without its template
    actions, with the version of k3s's base when it renders the base (parse/k3s_template)."""
    source = static_text(text) if is_template(path) else text
    try:
        doc = tomllib.loads(source)
    except tomllib.TOMLDecodeError as exc:
        raise ParseError(f"{path}: invalid TOML: {exc}") from None
    except RecursionError:
        raise ParseError(f"{path}: invalid TOML: nested too deeply") from None
    return with_base_version(path, text, doc) if is_template(path) else doc


def table(doc: Mapping[str, Any], *keys: str) -> dict[str, Any] | None:
    """The nested table at ``keys``, or None if any step is missing or not a table."""
    node: Any = doc
    for key in keys:
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return dict(node) if isinstance(node, Mapping) else None


def string_or_none(value: Any) -> str | None:
    """A non-empty string value, else None (empty strings mean "unset" in these configs)."""
    return value if isinstance(value, str) and value else None


def bool_or_none(value: Any) -> bool | None:
    """A TOML boolean, else None."""
    return value if isinstance(value, bool) else None


def glob_matches(pattern: str, candidates: Mapping[str, str]) -> list[str]:
    """Keys of ``candidates`` matching an absolute glob, sorted as Go's filepath.Glob does."""
    return sorted(key for key in candidates if PurePosixPath(key).match(pattern))


def absolute(parent_file: str, path: str) -> str:
    """``path`` made absolute relative to the directory of ``parent_file``."""
    joined = PurePosixPath(parent_file).parent / path
    return str(PurePosixPath(*_normalised(joined.parts)))


def _normalised(parts: tuple[str, ...]) -> list[str]:
    """Resolve ``.`` and ``..`` lexically, like Go's filepath.Clean."""
    out: list[str] = []
    for part in parts:
        if part == "..":
            if len(out) > 1:
                out.pop()
        elif part != ".":
            out.append(part)
    return out
