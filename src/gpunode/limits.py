"""Bounds on what gpunode reads, so hostile or broken input costs bounded memory and time.

Every limit is documented in docs/limits.md; a value beyond one is either a
one-line error naming the file (exit 2) or a truncation recorded as evidence.
"""

from __future__ import annotations

import os
import sys
from typing import Any

#: One bundle file (a cluster list, a node file) read into memory at most this large.
MAX_FILE_BYTES = 1024 * 1024 * 1024
#: ``manifest.json`` (beyond it: exit 2) and ``cluster/version.json`` (beyond it: ignored, a
#: warning) read at most this large; real ones hold a few KiB (a few hundred KiB when a
#: manifest names 5,000 nodes).
MAX_DOC_BYTES = 4 * 1024 * 1024
#: A node file (command output, host file, metrics scrape) kept at most this large; the rest
#: is cut and the cut named as a parse error of that observation.
MAX_NODE_FILE_BYTES = 32 * 1024 * 1024
#: All node files of one node read together: a file gets at most what the files listed
#: before it left (cut: a parse error, so unknown); a real node's files hold a few MiB.
MAX_NODE_BYTES = 128 * 1024 * 1024
#: Container logs read for one node (or for the cluster-side pods) together: each log takes
#: at most an even share of what is left, its last bytes and last lines (a node's stack has
#: about 6 pods of 2 containers, current and previous: 24 logs at most in practice).
MAX_NODE_LOG_BYTES = 64 * 1024 * 1024
MAX_NODE_LOG_LINES = 500_000
#: All bytes read out of one archive (decompressed); a gzip bomb stops here.
MAX_TOTAL_BYTES = 4 * 1024 * 1024 * 1024
#: Memory a run may add while it decodes a bundle's cluster lists and judges its nodes,
#: checked after each piece of a list (bundle/pieces.py) and every few judged nodes:
#: beyond it, exit 2 with one line naming the file and item, or the nodes judged so far.
#: A 5,000-node, 100,000-pod bundle adds about 300 MiB; a list of millions of tiny
#: items (``{}``: three bytes, about 100 bytes decoded) or tens of thousands of node
#: folders end here.
MAX_MEMORY_GROWTH = 416 * 1024 * 1024
#: Environment variable that sets MAX_MEMORY_GROWTH in MiB for one run: a fleet larger than
#: about 7,000 GPU nodes needs more (about 60 MiB per 1,000 nodes), and the machine decides.
MEMORY_ENV = "GPUNODE_MAX_MEMORY_MIB"
#: What one judged node's report costs when the report is written at the end (JSON encoded,
#: then indented: about 12 KiB held at once); reserved by the node pass's memory check.
REPORT_BYTES_PER_NODE = 12 * 1024
#: Items in one cluster list (Kubernetes supports at most 150,000 pods in a cluster).
MAX_LIST_ITEMS = 5_000_000
#: One page of a live list (``collect``): a body beyond it is asked again with a quarter of
#: the ``limit`` (down to one item), then the list is cut. 500 pods weigh 1.5-5 MiB; a
#: page of tiny items (``0,``: two bytes) decodes into about 28 times its size.
MAX_PAGE_BYTES = 8 * 1024 * 1024
#: Any other live answer (a log, a metrics scrape, agent facts) read at most this far:
#: past it the reading stops and the cut is named (bounded.Capped); real ones weigh KiBs
#: to a few MiB, an exporter streaming an endless /metrics would never end.
MAX_BODY_BYTES = 32 * 1024 * 1024
#: A command's output read from a pod exec (the batched node commands together): past it
#: the command is left and the cut named; nvidia-smi -q -x of 8 GPUs is about 1 MiB.
MAX_EXEC_OUTPUT_BYTES = 32 * 1024 * 1024
#: Items of one live page: a server may ignore ``limit`` (aggregated APIs do) and answer a
#: list whole; beyond this many items in one page the list is cut.
MAX_PAGE_ITEMS = 10_000
#: Pages of one live list: a server that keeps answering with a ``continue`` token
#: (MAX_LIST_ITEMS at 500 a page) is cut there; a token answered twice in a row at once.
MAX_LIST_PAGES = 10_000
#: Files in one bundle (archive members or folder entries): a 5,000-node bundle holds about
#: 35,000; indexing 250,000 costs about 200 MiB (1,000,000 cost about 800 MiB).
MAX_FILES = 250_000
#: Characters of one line kept by ``explain`` and the signature scan; longer lines are cut.
MAX_LINE_CHARS = 64 * 1024
#: Text read by ``explain`` from one file or stdin.
MAX_EXPLAIN_BYTES = 64 * 1024 * 1024
#: Nodes a YAML document may have once its aliases are expanded (alias bombs).
MAX_YAML_NODES = 2_000_000
#: Nesting of a YAML document, aliases counted where they expand: Kubernetes objects nest
#: about 20 deep; libyaml's composer recursed in C and segfaulted at 100,000.
MAX_YAML_DEPTH = 256
#: A YAML file read whole (kubeconfig, must-gather listing); beyond it, exit 2 naming it.
MAX_YAML_BYTES = 64 * 1024 * 1024


def cut_line(line: str) -> str:
    """A line bounded to MAX_LINE_CHARS, its cut marked."""
    if len(line) <= MAX_LINE_CHARS:
        return line
    return line[:MAX_LINE_CHARS] + f" …[{len(line) - MAX_LINE_CHARS} characters cut]"


def resident_bytes() -> int:
    """This process's resident memory now (Linux), else its peak so far."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def memory_growth_limit() -> int:
    """MAX_MEMORY_GROWTH, or the MiB that GPUNODE_MAX_MEMORY_MIB names (a bad value is a
    usage error: a typo must not silently keep, or lift, the bound)."""
    text = os.environ.get(MEMORY_ENV, "").strip()
    if not text:
        return MAX_MEMORY_GROWTH
    from gpunode.errors import UsageError

    try:
        mib = int(text)
    except ValueError:
        raise UsageError(f"{MEMORY_ENV}={text!r}: not a whole number of MiB") from None
    if mib <= 0:
        raise UsageError(f"{MEMORY_ENV}={text!r}: must be a positive number of MiB")
    return mib * 1024 * 1024


def memory_limit_hint(limit: int) -> str:
    """How the limit reads in an error line, with the way to raise it."""
    return f"{limit >> 20} MiB (the limit; {MEMORY_ENV} raises it)"


class MemoryBudget:
    """Resident memory grown since a bundle began to be read (MAX_MEMORY_GROWTH, or
    GPUNODE_MAX_MEMORY_MIB)."""

    def __init__(self) -> None:
        self.limit = memory_growth_limit()
        self.start = resident_bytes()

    def over(self, reserve: int = 0) -> bool:
        """Whether memory grew past the limit, counting ``reserve`` bytes still to come."""
        return resident_bytes() - self.start + reserve > self.limit


def bounded_yaml(text: str, where: str) -> Any:
    """``yaml.safe_load``'s values, refused (a ValueError, one line naming ``where``) past
    MAX_YAML_DEPTH levels, MAX_YAML_NODES values with aliases expanded, or the run's memory
    limit, before that cost is paid; malformed text is a YAMLError. The reader is imported
    here, when a YAML document is read, so PyYAML loads only then (start-up time), and it is
    handed its bounds rather than importing them (it stands a floor below this module)."""
    from gpunode.boundedyaml import YamlBounds, load

    budget = MemoryBudget()
    bounds = YamlBounds(MAX_YAML_DEPTH, MAX_YAML_NODES, budget.over, memory_limit_hint(budget.limit))
    return load(text, where, bounds)
