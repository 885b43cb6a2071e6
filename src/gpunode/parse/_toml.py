"""TOML loading shared by the container runtime config parsers."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from gpunode.errors import ParseError
from gpunode.parse.k3s_template import is_template, static_text, with_base_version


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
