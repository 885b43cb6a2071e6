"""The dynamic loader's 'cannot open shared object file' quoted without the errno glibc adds
after it (elf/dl-load.c: ': ' and strerror) is error_not_found: the library was not where the
loader searched (kanokgan/home-brain RB-008, 'libnvidia-encode.so.1: cannot open shared object
file'). With its errno, the errno's class reads it as before: permission denied, a file absent
or not a loadable ELF file (file state)."""

from __future__ import annotations

import pytest

from gpunode.kb import load_kb

KB = load_kb()


def test_the_loader_s_words_without_errno_are_not_found() -> None:
    for line in ("libnvidia-encode.so.1: cannot open shared object file",
                 "ImportError: libcuda.so.1: cannot open shared object file"):
        assert KB.class_of(line) == "error_not_found", line


@pytest.mark.parametrize(
    ("line", "cls"),
    [
        ("libfoo.so.1: cannot open shared object file: Permission denied", "error_permission_denied"),
        ("libfoo.so.1: cannot open shared object file: No such file or directory", "error_file_state"),
        ("libnvidia-ml.so.1: cannot open shared object file: file too short", "error_file_state"),
    ],
)
def test_with_its_errno_the_errno_s_class_reads_it(line: str, cls: str) -> None:
    assert KB.class_of(line) == cls
