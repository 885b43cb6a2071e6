"""jemalloc refusing the kernel's page size at start-up ("<jemalloc>: Unsupported system page
size": the page size is fixed when jemalloc is built) is a binary built for 4 KiB pages on a
kernel with larger ones, a version mismatch between the image and the node's kernel
(fluent/fluent-bit#10941 on AKS's 64K-page azure-nvidia kernel). It stays decisive over a later
line of another class in the same log. Lines that only state a page size say nothing."""

from __future__ import annotations

import pytest

from gpunode.decisive import decisive_line
from gpunode.kb import load_kb

KB = load_kb()
JEMALLOC = "<jemalloc>: Unsupported system page size"


def test_jemalloc_page_size_is_a_version_mismatch() -> None:
    assert KB.class_of(JEMALLOC) == "error_version_mismatch"


def test_stays_decisive_over_a_classified_line_before_it() -> None:
    lines = [JEMALLOC, "Error in GnuTLS initialization: ASN1 parser: Element was not found.", JEMALLOC]
    found = decisive_line(lines, KB.class_of)
    assert found is not None and found.line == JEMALLOC


@pytest.mark.parametrize(
    "line",
    [
        "jemalloc: page size 65536, using lg_page 16",
        "kernel page size 64K detected, system page size supported",
    ],
)
def test_page_size_statements_are_no_class(line: str) -> None:
    assert KB.class_of(line) != "error_version_mismatch"
