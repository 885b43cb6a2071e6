"""The ldconfig the toolkit's CLI is configured to run on Debian-family hosts
(config.toml's ldconfig = "@/sbin/ldconfig.real", NVIDIA/nvidia-docker#587) reported missing in a
pod's event or container message without the CLI's prefix ("'/sbin/ldconfig.real': No such file
or directory", FootprintAI/multikf's kind troubleshooting) names the toolkit and is
toolkit_ldconfig_path_wrong. Look-alikes: a plain /sbin/ldconfig missing (an image's own script),
ldconfig.real named in a line that reports no failure."""

from __future__ import annotations

import pytest

from gpunode.catalog import load_catalog
from gpunode.kb import load_kb

KB = load_kb()
CATALOG = load_catalog()


@pytest.mark.parametrize(
    "line",
    [
        "'/sbin/ldconfig.real': No such file or directory",
        "exec: /sbin/ldconfig.real: no such file or directory",
    ],
)
def test_missing_ldconfig_real_is_the_toolkit_s_path(line: str) -> None:
    assert CATALOG.named_in(line) == "container-toolkit"
    found = KB.catalogued_in("container-toolkit", line)
    assert found is not None and found.code == "toolkit_ldconfig_path_wrong"


@pytest.mark.parametrize(
    "line",
    [
        "/bin/sh: 1: /sbin/ldconfig: No such file or directory",
        "Running /sbin/ldconfig.real -p to list the library cache",
    ],
)
def test_look_alike_names_no_toolkit_ldconfig(line: str) -> None:
    assert CATALOG.named_in(line) != "container-toolkit"
    found = KB.catalogued_in("container-toolkit", line)
    assert found is None or found.code != "toolkit_ldconfig_path_wrong"
