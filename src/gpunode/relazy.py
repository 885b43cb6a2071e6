"""Regular expressions compiled where they are first used, not when their module loads.

The checks hold some five hundred module-level patterns; ``re`` parses and compiles in
Python, and a diagnosis uses only the patterns its files reach (a command that never judges
a node, none at all). ``lazy_compile`` stands for ``re.compile`` in a module's constants: the
first attribute asked of it (``search``, ``groupindex`` …) compiles the pattern once and keeps
that attribute in the object's ``__dict__``, where later uses find it as they would find it on
the compiled pattern (a bound method of it). ``pattern`` is known without compiling.

Only attributes: where a compiled ``re.Pattern`` object itself is needed (``re.sub(p, …)``,
``isinstance``), use ``re.compile``.
"""

from __future__ import annotations

import re
from typing import Any, AnyStr, cast


class _LazyPattern:
    """A pattern and its flags; the compiled pattern's attributes once asked."""

    def __init__(self, pattern: str | bytes, flags: int) -> None:
        self.pattern = pattern
        self._flags = flags

    def _compiled(self) -> re.Pattern[Any]:
        found: re.Pattern[Any] | None = self.__dict__.get("_re")
        if found is None:  # two threads may both compile it: either result is the same
            found = self.__dict__["_re"] = re.compile(self.pattern, self._flags)
        return found

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "_re":  # copy, pickle and the like ask these
            raise AttributeError(name)
        value = self.__dict__[name] = getattr(self._compiled(), name)
        return value

    def __reduce__(self) -> tuple[Any, ...]:
        return (_LazyPattern, (self.pattern, self._flags))

    def __repr__(self) -> str:
        return repr(self._compiled())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _LazyPattern):
            other = other._compiled()
        return self._compiled() == other

    def __hash__(self) -> int:
        return hash(self._compiled())


def lazy_compile(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """``re.compile(pattern, flags)``, compiled on first use."""
    return cast("re.Pattern[AnyStr]", _LazyPattern(pattern, flags))
