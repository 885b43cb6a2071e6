"""apt's unmet dependency is quoted by ``explain`` as a version mismatch.

apt reports a package that pins another to a version other than the one to be installed
("<pkg> : Depends: <other> (= V) but W is to be installed") with no error word, then gives up
("E: Unable to correct problems, you have held broken packages."). The pinned and the offered
versions disagree (class error_version_mismatch), whether the paste holds the dependency line
alone or apt's whole answer: https://github.com/NVIDIA/nvidia-docker/issues/719,
https://github.com/BVLC/caffe/issues/6735, https://github.com/NVIDIA/nvidia-docker/issues/974,
https://github.com/NVIDIA/nvidia-docker/issues/902, and a pin on a version the archive does not
have ("but it is not installable", https://github.com/NVIDIA/nvidia-docker/issues/540). A
package's declared dependencies as ``apt-cache show`` prints them ("Depends: libc6 (>= 2.34)")
state no failure."""

from __future__ import annotations

import pytest

from gpunode.decisive import severity
from gpunode.explain import explain_lines
from gpunode.kb import load_kb

_DEPENDS = [
    # NVIDIA/nvidia-docker#719
    "nvidia-docker2: Depends: docker-ce (= 18.03.0~ce-0~ubuntu) but 18.03.0~ce-0~ubuntu is to be installed",
    # BVLC/caffe#6735
    " nvidia-docker2 : Depends: docker-ce (= 5:18.09.3-3-0-ubuntu-xenial) but 5:18.09.4-3-0-ubuntu-xenial "
    "is to be installed or",
    # NVIDIA/nvidia-docker#902 (the alternatives on one line)
    " nvidia-docker2 : Depends: docker-ce (= 5:18.09.0~3-0~ubuntu-xenial) but "
    "5:18.09.1~3-0~ubuntu-xenial is to be installed or docker-ee (= 5:18.09.0~3-0~ubuntu-xenial) "
    "but it is not installable",
]

#: NVIDIA/nvidia-docker#974, apt's whole answer.
_APT_ANSWER = [
    "Reading package lists... Done",
    "Building dependency tree       ",
    "Reading state information... Done",
    "Some packages could not be installed. This may mean that you have",
    "requested an impossible situation or if you are using the unstable",
    "distribution that some required packages have not yet been created",
    "or been moved out of Incoming.",
    "The following information may help to resolve the situation:",
    "",
    "The following packages have unmet dependencies:",
    " nvidia-docker2 : Depends: docker-ce (= 5:18.09.5~3-0~ubuntu-bionic) but "
    "5:18.09.6~3-0~ubuntu-bionic is to be installed or",
    "                           docker-ee (= 5:18.09.5~3-0~ubuntu-bionic) but it is not installable",
    "E: Unable to correct problems, you have held broken packages.",
]


@pytest.mark.parametrize("line", _DEPENDS)
def test_a_dependency_pinned_to_another_version_is_a_version_mismatch(line: str) -> None:
    found = explain_lines(["Reading package lists... Done", line], load_kb())
    assert found.decisive is not None and found.decisive.text == line.strip()
    assert found.decisive_class == "error_version_mismatch"


def test_apt_s_whole_answer_is_a_version_mismatch() -> None:
    found = explain_lines(_APT_ANSWER, load_kb())
    assert found.decisive is not None and found.decisive.text == _APT_ANSWER[-1]
    assert found.decisive_class == "error_version_mismatch"


def test_a_pin_on_a_version_the_archive_lacks_is_a_version_mismatch() -> None:
    # NVIDIA/nvidia-docker#540
    line = " nvidia-docker2 : Depends: docker-ce (= 17.09.0~ce-0~ubuntu) but it is not installable or"
    found = explain_lines([line], load_kb())
    assert found.decisive_class == "error_version_mismatch"


def test_the_dependency_line_changes_no_severity() -> None:
    assert severity(_DEPENDS[0]) == 0


def test_declared_dependencies_state_no_failure() -> None:
    found = explain_lines(["Package: nvidia-docker2", "Version: 2.0.3+docker18.09.1-1",
                           "Depends: docker-ce (= 5:18.09.1~3-0~ubuntu-bionic) | "
                           "docker-ee (= 5:18.09.1~3-0~ubuntu-bionic), nvidia-container-runtime (>= 2.0.0)"],
                          load_kb())
    assert found.decisive is None and found.decisive_class is None
