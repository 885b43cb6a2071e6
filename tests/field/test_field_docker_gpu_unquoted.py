"""Docker's refusal of a GPU request that no registered device driver serves (daemon/devices.go:
'could not select device driver %q with capabilities: %v') is the toolkit not wired into the
daemon, whether or not the line keeps the driver's name: quoted by hand, the empty name of
--gpus ("") is often dropped, and the line reads 'could not select device driver with
capabilities: [[gpu]]'; typed through an editor or copied from a web page, the quotes are
typographic ones ('could not select device driver “” with capabilities: [[gpu]]'). The words of
a request for another capability keep no reading.

Sources, each line beside its address."""

from __future__ import annotations

from case import Case, docker_refused_case
from scoreboard import top_pair

#: https://github.com/NVIDIA/nvidia-docker/issues/1642 (the maintainer asks whether the toolkit is installed)
NVIDIA_DOCKER_1642 = ("docker: Error response from daemon: could not select device driver with capabilities:"
                      " [[gpu]].")
#: The same, as troubleshooting pages in public repositories quote it ("Error: could not select
#: device driver with capabilities: [[gpu]]" ... "the NVIDIA Container Toolkit is not installed
#: or Docker is not configured")
DOCS = "could not select device driver with capabilities: [[gpu]]"
#: https://github.com/infiniflow/ragflow/issues/3303 (the daemon's own form, the driver's name kept)
RAGFLOW_3303 = ('Error response from daemon: could not select device driver "nvidia" with capabilities:'
                ' [[gpu]]')
#: https://github.com/sirius-db/sirius README.md ("This means nvidia-driver or
#: nvidia-container-toolkit is not installed"), the typographic quotes as the page has them
SIRIUS_README = ("docker: Error response from daemon: could not select device driver “” with capabilities:"
                 " [[gpu]].")
#: https://www.yurui-deep-learning.com/2021/08/17/docker-error-response-from-daemon-could-not-select-device-driver-with-capabilities-gpu/
#: (the page's title as a linking page quotes it)
YURUI_TITLE = SIRIUS_README
#: The daemon's form for a named driver, with typographic quotes (the pattern's other branch)
NAMED_TYPOGRAPHIC = RAGFLOW_3303.replace('"nvidia"', "“nvidia”")
#: Look-alike: a request for a capability the NVIDIA driver does not serve (no gpu in it).
OTHER_CAPABILITY = "Error response from daemon: could not select device driver with capabilities: [[tpu]]"

_UNREGISTERED = ("container-toolkit", "docker_gpu_capability_unregistered")


def _refused(message: str) -> Case:
    return docker_refused_case("x-docker-gpus", message)


def test_the_refusal_without_the_drivers_name_is_the_toolkit_not_registered() -> None:
    for line in (NVIDIA_DOCKER_1642, DOCS, RAGFLOW_3303, SIRIUS_README, YURUI_TITLE,
                 NAMED_TYPOGRAPHIC):
        assert top_pair(_refused(line)) == _UNREGISTERED, line


def test_a_request_for_another_capability_is_not_read_as_the_gpu_one() -> None:
    assert top_pair(_refused(OTHER_CAPABILITY)) != _UNREGISTERED


def test_typographic_quotes_around_another_capability_keep_no_reading() -> None:
    assert top_pair(_refused(OTHER_CAPABILITY.replace("with", "“” with"))) != _UNREGISTERED


#: https://github.com/open-webui/open-webui/issues/1192 (Portainer's stack editor relays the
#: daemon's answer with a blank before each colon)
PORTAINER_1192 = ('Error response from daemon : could not select device driver "nvidia" with capabilities :'
                  ' [[gpu]]')


def test_the_refusal_re_spaced_by_a_ui_is_the_toolkit_not_registered() -> None:
    assert top_pair(_refused(PORTAINER_1192)) == _UNREGISTERED
    assert top_pair(_refused(PORTAINER_1192.replace('"nvidia" ', ""))) == _UNREGISTERED


def test_another_capability_re_spaced_keeps_no_reading() -> None:
    assert top_pair(_refused(OTHER_CAPABILITY.replace("capabilities:", "capabilities :"))) != _UNREGISTERED
