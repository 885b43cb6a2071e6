"""apt's record of a package it cannot install, in a host journal: "The following packages have
unmet dependencies:" then " nvidia-docker2 : Depends: docker-ce (= 5:18.09.0~3-0~debian-stretch)
but 5:18.09.1~3-0~debian-stretch is to be installed" (kubernetes/kops#6324: the toolkit's Docker
package pins the exact docker-ce release it was built for; a newer docker-ce published, the node's
setup could not install the NVIDIA runtime). The record carries no error word; its form states the
failure, and the package it names is the layer that failed to install: the toolkit's, at the
class of two versions that disagree. The record keeps no severity (``explain`` reads it by
its form, tests/kb/test_explain_unmet_dependency.py); the host journal's reader takes it.
Look-alikes: the same record about a package of no GPU layer names nothing here, and apt's
report of the toolkit's package already installed is no failure."""

from __future__ import annotations

from typing import Any

import pytest
from case import synthetic_case
from scoreboard import top_pair

from gpunode.decisive import unmet_dependency


def _journal(text: str) -> list[dict[str, Any]]:
    return [{"kind": "node-cmd", "name": "journal-runtime.txt", "text": text}]


_CLUSTER = {"driver_mode": "host"}


@pytest.mark.parametrize("prefix", ["", "Jan 18 10:02:11 ip-172-20-1-1 nodeup[812]: "])
def test_the_toolkits_package_held_by_a_pinned_docker_release_is_the_toolkit(prefix: str) -> None:
    text = (f"{prefix}The following packages have unmet dependencies:\n"
            f"{prefix} nvidia-docker2 : Depends: docker-ce (= 5:18.09.0~3-0~debian-stretch) but "
            "5:18.09.1~3-0~debian-stretch is to be installed\n")
    case = synthetic_case("apt-nvidia-docker2", _journal(text), platform="docker", healthy=False,
                          cluster=_CLUSTER)
    assert top_pair(case) == ("container-toolkit", "error_version_mismatch")


def test_an_unmet_dependency_of_a_package_no_gpu_layer_owns_names_no_gpu_layer() -> None:
    line = " docker-ce : Depends: containerd.io (>= 1.2.2-3) but 1.2.0-1 is to be installed"
    assert unmet_dependency(line)
    case = synthetic_case("apt-docker-ce", _journal("The following packages have unmet dependencies:\n"
                                                     + line + "\n"), platform="docker", cluster=_CLUSTER)
    pair = top_pair(case)
    assert pair is None or pair[0] != "container-toolkit"


def test_the_toolkits_package_already_installed_is_no_failure() -> None:
    line = "nvidia-docker2 is already the newest version (2.13.0-1)."
    assert not unmet_dependency(line)
    case = synthetic_case("apt-installed", _journal(line + "\n"), platform="docker", cluster=_CLUSTER)
    assert top_pair(case) is None
