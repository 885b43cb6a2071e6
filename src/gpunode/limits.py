"""Bounds on what gpunode reads, so hostile or broken input costs bounded memory and time.

Every limit is documented in docs/limits.md; a value beyond one is either a
one-line error naming the file (exit 2) or a truncation recorded as evidence.
"""

from __future__ import annotations

from typing import Any

#: One bundle file (a cluster list, a node file) read into memory at most this large.
MAX_FILE_BYTES = 1024 * 1024 * 1024
#: A node file (command output, host file, metrics scrape) kept at most this large; the rest
#: is cut and the cut named as a parse error of that observation.
MAX_NODE_FILE_BYTES = 32 * 1024 * 1024
#: All bytes read out of one archive (decompressed); a gzip bomb stops here.
MAX_TOTAL_BYTES = 4 * 1024 * 1024 * 1024
#: Files in one bundle (archive members or folder entries).
MAX_FILES = 1_000_000
#: Characters of one line kept by ``explain`` and the signature scan; longer lines are cut.
MAX_LINE_CHARS = 64 * 1024
#: Text read by ``explain`` from one file or stdin.
MAX_EXPLAIN_BYTES = 64 * 1024 * 1024
#: Nodes a YAML document may have once its aliases are expanded (alias bombs).
MAX_YAML_NODES = 2_000_000


def bounded_yaml(text: str, where: str) -> Any:
    """``yaml.safe_load`` that refuses documents whose aliases expand beyond MAX_YAML_NODES.

    PyYAML shares aliased objects, so loading is cheap; whatever walks or serialises the
    result later is not. The walk below counts nodes as if expanded and stops at the limit.
    PyYAML is imported here, when a YAML document is read (start-up time).
    """
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    doc = yaml.load(text, Loader=loader)
    _count_expanded(doc, where)
    return doc


def _count_expanded(doc: Any, where: str) -> None:
    stack: list[Any] = [doc]
    seen = 0
    while stack:
        node = stack.pop()
        seen += 1
        if seen > MAX_YAML_NODES:
            raise ValueError(f"{where}: YAML expands to more than {MAX_YAML_NODES} nodes "
                             "(an alias bomb?)")
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def cut_line(line: str) -> str:
    """A line bounded to MAX_LINE_CHARS, its cut marked."""
    if len(line) <= MAX_LINE_CHARS:
        return line
    return line[:MAX_LINE_CHARS] + f" …[{len(line) - MAX_LINE_CHARS} characters cut]"
