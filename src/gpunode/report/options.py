"""How much a reporter shows: set from the command line, the same for every format."""

from __future__ import annotations

import msgspec


class RenderOptions(msgspec.Struct, frozen=True):
    """``expand``: every node of a grouped cause (``--all``, ``-o wide``);
    ``show_stack``: the stack pictures after the diagnosis (``--stack``); ``narrowed``:
    ``diagnose --component/--layer`` narrowed the report, so "none found" reads "none shown"."""

    expand: bool = False
    show_stack: bool = False
    narrowed: bool = False


DEFAULT = RenderOptions()
