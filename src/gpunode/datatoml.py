"""The package's own TOML data files decoded (knowledge base, catalog, tables)."""

from __future__ import annotations

import re
import tomllib
from typing import Any

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
    in about three quarters of the instructions: tomllib reads a basic string (``"..."``) one
    character at a time in Python and a literal one (``'...'``) with one search, so each
    one-line basic string with nothing to unescape and no apostrophe is read as the literal
    string of the same text (the same value, at the same line and column). A text that does
    not decode so is decoded as written, for its own error."""
    try:
        return tomllib.loads(_QUOTED.sub(_as_literal, text))
    except tomllib.TOMLDecodeError:
        return tomllib.loads(text)
