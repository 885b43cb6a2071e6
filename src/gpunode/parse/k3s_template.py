"""k3s and RKE2 containerd config templates (``config.toml.tmpl``, ``config-v3.toml.tmpl``).

k3s (and RKE2, which runs k3s's agent) renders containerd's ``config.toml`` from the
template at every start, so the template, not the rendered file, is what an operator edits.
k3s's own base template declares ``version = 2`` (``version = 3`` in ``config-v3``) and ends
with one runtime table per item of ``.ExtraRuntimes``: the runtimes k3s found on the host at
start, NVIDIA's container runtimes among them. A user template either copies that base
(ranging over ``.ExtraRuntimes`` itself) or starts with ``{{ template "base" . }}`` and adds
tables after it; both get the NVIDIA runtimes k3s finds without naming them.

Read without rendering: a line holding a template action is dropped (its value is known only
once rendered), and so is the whole table under a header that holds one (the table a range
writes per item, ``[...runtimes."{{$k}}"]``).
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from gpunode.relazy import lazy_compile

_ACTION = "{{"
_HEADER = lazy_compile(r"^\s*\[")
_BASE = lazy_compile(r'\{\{-?\s*template\s+"base"')
_EXTRA_RUNTIMES = lazy_compile(r"\{\{-?\s*range\b[^}]*\.ExtraRuntimes\b")


def is_template(path: str) -> bool:
    """A k3s/RKE2 template (``*.tmpl``), read through ``static_text``."""
    return path.endswith(".tmpl")


def static_text(text: str) -> str:
    """The template with every line that holds an action dropped, and the tables under a
    header that holds one."""
    kept: list[str] = []
    in_templated_table = False
    for line in text.splitlines():
        if _HEADER.match(line):
            in_templated_table = _ACTION in line
        if not in_templated_table and _ACTION not in line:
            kept.append(line)
    return "\n".join(kept)


def renders_base(text: str) -> bool:
    """The template renders k3s's own base first (``{{ template "base" . }}``)."""
    return _BASE.search(text) is not None


def renders_host_runtimes(text: str) -> bool:
    """The rendered config gets the runtimes k3s finds on the host: the template renders the
    base, or ranges over ``.ExtraRuntimes`` as the base does."""
    return renders_base(text) or _EXTRA_RUNTIMES.search(text) is not None


def base_version(path: str) -> int:
    """The config version k3s's base template declares: 3 in ``config-v3.toml.tmpl``, else 2."""
    return 3 if PurePosixPath(path).name.startswith("config-v3") else 2


def with_base_version(path: str, text: str, doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with the base's ``version`` where the template renders the base and sets none."""
    if renders_base(text) and "version" not in doc:
        return {"version": base_version(path), **doc}
    return doc
