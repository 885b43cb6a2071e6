"""A CRI runtime handler as every runtime's config names one (containerd, CRI-O, Docker).

Its own module, below the three parsers that fill it: CRI-O's and Docker's readers need the
type, not containerd's reader.
"""

from __future__ import annotations

import msgspec


class RuntimeHandler(msgspec.Struct, frozen=True):
    """A CRI runtime handler (RuntimeClass ``handler``) and the binary it runs."""

    name: str
    runtime_type: str | None
    binary_name: str | None
