"""The kernel's module loader reporting its own failure is the module-load class, whatever words
its reason uses: the class is read by the documented precedence over the whole line (module_load
first), not from its innermost reason (issue 20: which class). Lines are real ones from public
reports (address beside each)."""

from __future__ import annotations

import pytest

from gpunode.kb import load_kb

KB = load_kb()


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # NVIDIA/gpu-operator#2619: the peermem container's modprobe, the module not installed
        ("modprobe: FATAL: Module nvidia-peermem not found in directory /lib/modules/6.8.0-1059-azure",
         "error_module_load"),
        # NVIDIA/gpu-operator#671: the validator's modprobe of nvidia-modeset
        ("modprobe: ERROR: could not insert 'nvidia_modeset': No such device", "error_module_load"),
        # the loader that reports success says no error
        ("modprobe: loaded module nvidia", None),
        # a package that is not found is not the loader's failure (the class's own example)
        ("E: Unable to locate package linux-headers-5.15.0-1053-azure", "error_not_found"),
        # NVIDIA/gpu-operator#2811: dnf, not the loader, finds no kernel package
        ("Error: Unable to find a match: kernel-6.12.0-233.el10.x86_64", "error_not_found"),
    ],
)
def test_the_loaders_own_failure_is_module_load(line: str, expected: str | None) -> None:
    assert KB.class_of(line) == expected
