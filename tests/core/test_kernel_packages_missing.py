"""The running kernel's own packages that the driver build cannot find are its missing build
tree, whichever of the family the build installs (issue 20: a catalogued cause where it truly
fits). Lines are real ones from public reports (address beside each)."""

from __future__ import annotations

import pytest

from gpunode.kb import load_kb

KB = load_kb()


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # NVIDIA/gpu-operator#2811: OKD's Driver Toolkit container finds no package of the node's kernel
        ("Error: Unable to find a match: kernel-6.12.0-233.el10.x86_64", "kernel_headers_missing"),
        # NVIDIA/gpu-operator#190: the headers of a RHEL kernel the repositories no longer carry
        ("Unable to find a match: kernel-devel-4.18.0-240.22.1.el8_3.x86_64", "kernel_headers_missing"),
        # a package of another name that merely begins with "kernel" is not the kernel's own
        ("Error: Unable to find a match: kernelshark", None),
    ],
)
def test_the_running_kernels_packages_not_found(line: str, expected: str | None) -> None:
    found = KB.catalogued_in("driver", line)
    assert (found.code if found else None) == expected
    assert KB.catalogued_in("container-toolkit", line) is None  # the driver build's, no one else's
