"""A pattern stand-in that counts its searches: tests that a cheap literal test keeps lines
away from a costly regex monkeypatch the module's pattern with it."""

from __future__ import annotations

import re


class Counting:
    """A pattern that counts its searches."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.calls = pattern, 0

    def search(self, line: str) -> re.Match[str] | None:
        self.calls += 1
        return self.pattern.search(line)
