"""YAML read with its cost bounded before it is paid: depth, aliases and memory.

``yaml.safe_load`` is not safe against hostile text: libyaml's composer recurses in C,
so 100,000 nested ``[`` end the interpreter with a segfault; an alias bomb (ten
aliases of ten aliases …) loads cheaply, as shared objects, and explodes in whatever
walks the result (``json.dumps``); and the node graph it builds before constructing
anything costs about 40 bytes of memory per byte of text (1.3 GB for an 8 MB must-gather
of tiny items), most of it freed only at the end.

This loader builds the Python values straight from libyaml's event stream (its parser
is a state machine, not recursive), with no node graph, and stops with a
``YamlRefused`` (a ValueError; one line naming the file) at the first of:

- nesting deeper than MAX_YAML_DEPTH, aliases counted at the depth they expand to;
- more than MAX_YAML_NODES values once aliases are expanded (an alias bomb);
- an alias to a node not yet complete (a recursive structure);
- memory grown past the run's limit (limits.MemoryBudget), checked every few thousand
  events.

The bounds are handed in (``YamlBounds``) by ``limits.bounded_yaml``, the entry callers use,
so this module imports nothing of gpunode and stands on the lowest floor.

Values are what ``yaml.safe_load`` gives (the same resolver and scalar constructors,
merge keys ``<<`` included); only the first document is read, and a second one is a
YAMLError, as with ``safe_load``. Aliases share the object they name, as PyYAML does.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)
from yaml.nodes import ScalarNode

_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"
#: Events between two looks at the memory grown (a look reads /proc/self/statm).
_MEMORY_EVERY = 4096


class YamlRefused(ValueError):
    """A YAML document refused before its cost was paid; the message is one line."""


@dataclass(frozen=True)
class YamlBounds:
    """What one document may cost: nesting, values with aliases expanded, and memory
    (``memory_over`` says whether the run's memory grew past ``memory_limit``, which
    names the limit in the refusal)."""

    max_depth: int
    max_nodes: int
    memory_over: Callable[[], bool]
    memory_limit: str


class _Open:
    """A mapping or sequence being built, with what its anchor will record."""

    __slots__ = ("anchor", "depth", "key", "merges", "nodes", "value", "wants_key")

    def __init__(self, value: dict[Any, Any] | list[Any], anchor: str | None, depth: int) -> None:
        self.value = value
        self.anchor = anchor
        self.depth = depth  # how deep below it its deepest value sits
        self.nodes = 1  # values it holds once aliases are expanded, itself included
        self.key: Any = None
        self.wants_key = True
        self.merges: list[dict[Any, Any]] = []


class _Builder:
    """Python values from one document's events, bounded as the module says."""

    def __init__(self, where: str, bounds: YamlBounds) -> None:
        self.where = where
        self.max_depth, self.max_nodes = bounds.max_depth, bounds.max_nodes
        self.stack: list[_Open] = []
        #: anchor -> (value, expanded nodes, depth below it); an open one maps to None
        self.anchors: dict[str, tuple[Any, int, int] | None] = {}
        self.total = 0
        self.result: Any = None
        self.done = False
        self.resolver = yaml.resolver.Resolver()
        self.constructor = yaml.constructor.SafeConstructor()

    def refuse(self, why: str) -> YamlRefused:
        return YamlRefused(f"{self.where}: {why}")

    def event(self, ev: Any) -> None:
        if isinstance(ev, ScalarEvent):
            self.add(self.scalar(ev), ev.anchor, 1, 0)
        elif isinstance(ev, AliasEvent):
            self.alias(str(ev.anchor))
        elif isinstance(ev, MappingStartEvent | SequenceStartEvent):
            self.start(ev)
        elif isinstance(ev, MappingEndEvent | SequenceEndEvent):
            self.end()

    def scalar(self, ev: ScalarEvent) -> Any:
        tag = ev.tag if ev.tag not in (None, "!") else \
            self.resolver.resolve(ScalarNode, ev.value, ev.implicit)  # type: ignore[no-untyped-call]
        if tag == _STR:
            return ev.value
        if tag == _MERGE:
            return _MergeKey()
        build = self.constructor.yaml_constructors.get(tag)
        if build is None:
            raise self.refuse(f"unsupported YAML tag {str(tag)[:80]!r}")
        return build(self.constructor, ScalarNode(tag, ev.value, style=ev.style))

    def start(self, ev: MappingStartEvent | SequenceStartEvent) -> None:
        mapping = isinstance(ev, MappingStartEvent)
        if ev.tag not in (None, "!", _MAP if mapping else _SEQ):
            raise self.refuse(f"unsupported YAML tag {str(ev.tag)[:80]!r}")
        if len(self.stack) + 1 > self.max_depth:
            raise self.refuse(f"YAML nested more than {self.max_depth} levels deep")
        if ev.anchor is not None:
            self.anchors[ev.anchor] = None
        self.stack.append(_Open({} if mapping else [], ev.anchor, 0))

    def end(self) -> None:
        node = self.stack.pop()
        if node.merges:  # as PyYAML: merged keys first, the first mapping of a list and
            merged: dict[Any, Any] = {}  # keys written out win
            for mapping in node.merges:
                merged.update(mapping)
            assert isinstance(node.value, dict)
            merged.update(node.value)
            node.value = merged
        self.add(node.value, node.anchor, node.nodes, node.depth + 1, counted=True)

    def alias(self, anchor: str) -> None:
        if anchor not in self.anchors:
            raise self.refuse(f"YAML alias *{anchor[:80]} names no anchor")
        known = self.anchors[anchor]
        if known is None:
            raise self.refuse(f"YAML alias *{anchor[:80]} inside its own anchor (a recursive structure)")
        value, nodes, depth = known
        self.add(value, None, nodes, depth)

    def add(self, value: Any, anchor: str | None, nodes: int, depth: int, *,
            counted: bool = False) -> None:
        """Put a complete value into the open collection (or make it the document)."""
        if not counted:
            self.total += nodes
        if self.total > self.max_nodes:
            raise self.refuse(f"YAML expands to more than {self.max_nodes:,} values (an alias bomb?)")
        if len(self.stack) + depth > self.max_depth:
            raise self.refuse(f"YAML nested more than {self.max_depth} levels deep "
                              "once its aliases are expanded")
        if anchor is not None:
            self.anchors[anchor] = (value, nodes, depth)
        if not self.stack:
            self.result, self.done = value, True
            return
        self.put(self.stack[-1], value, nodes, depth)

    def put(self, parent: _Open, value: Any, nodes: int, depth: int) -> None:
        parent.nodes += nodes
        parent.depth = max(parent.depth, depth)
        if isinstance(parent.value, list):
            parent.value.append(value)
        elif parent.wants_key:
            parent.key, parent.wants_key = value, False
        else:
            self.entry(parent, value)

    def entry(self, parent: _Open, value: Any) -> None:
        key, parent.wants_key = parent.key, True
        assert isinstance(parent.value, dict)
        if isinstance(key, _MergeKey):
            merged = value if isinstance(value, list) else [value]
            if not all(isinstance(m, dict) for m in merged):
                raise self.refuse("a YAML merge key (<<) whose value is not a mapping")
            parent.merges.extend(reversed(merged))  # earlier mappings in the list win
            return
        try:
            parent.value[key] = value
        except TypeError:
            raise self.refuse(f"a YAML mapping key that cannot be a key ({type(key).__name__})") from None


class _MergeKey:
    """The ``<<`` key of a mapping (merged at its end)."""


def load(text: str, where: str, bounds: YamlBounds) -> Any:
    """The first YAML document in ``text``, as ``yaml.safe_load`` gives it, or YamlRefused
    (one line naming ``where``) when its depth, expanded size or memory is past ``bounds``;
    malformed YAML is yaml.YAMLError, as with ``safe_load``."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    builder = _Builder(where, bounds)
    enabled = gc.isenabled()
    gc.disable()  # millions of new containers: the collector would walk them again and again
    try:
        for count, ev in enumerate(yaml.parse(text, Loader=loader)):
            if builder.done:
                if isinstance(ev, DocumentStartEvent):
                    raise yaml.YAMLError(f"{where}: expected a single YAML document, found another")
                continue
            builder.event(ev)
            if count % _MEMORY_EVERY == 0 and bounds.memory_over():
                raise builder.refuse(f"reading its YAML grew memory past {bounds.memory_limit}")
    finally:
        if enabled:
            gc.enable()
    return builder.result
