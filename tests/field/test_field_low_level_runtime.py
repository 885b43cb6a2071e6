"""The NVIDIA runtime finding no low-level OCI runtime: "error constructing low-level runtime:
error locating runtime: no runtime binary found from candidate list: [docker-runc runc crun]"
(nvidia-container-toolkit's internal/oci lookup, its default candidate list). On a Docker node
the engine's packages put runc on the host's path, so none of the default candidates found is
the engine's own runc missing (TextyMcSpeechy#47: a WSL distribution with Docker's client and
no daemon): the container runtime. Look-alikes that stay the toolkit's: the same words on a
CRI-O node (CRI-O keeps runc and crun under /usr/libexec/crio, off the list's path), and a list
the toolkit's config changed (a balena engine's runc missing from it)."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

_DEFAULT = ("ERRO[0000] failed to create NVIDIA Container Runtime: error constructing low-level runtime: "
            "error locating runtime: no runtime binary found from candidate list: [docker-runc runc crun]\n")
_EDITED = ("ERRO[0000] failed to create NVIDIA Container Runtime: error constructing low-level runtime: "
           "error locating runtime: no runtime binary found from candidate list: [balena-runc]\n")


def _evidence(journal: str) -> list[dict[str, Any]]:
    return [{"kind": "workload", "name": "trainer", "namespace": "default", "state": "RunContainerError"},
            {"kind": "node-cmd", "name": "journal-runtime.txt", "text": journal}]


def test_no_default_low_level_runtime_on_a_docker_node_is_the_container_runtime() -> None:
    case = synthetic_case("no-runc-docker", _evidence(_DEFAULT), platform="docker", healthy=False,
                          cluster={"driver_mode": "host"})
    assert top_pair(case) == ("container-runtime", "error_not_found")


def test_the_same_words_on_a_crio_node_stay_the_toolkits() -> None:
    case = synthetic_case("no-runc-crio", _evidence(_DEFAULT), platform="crio", healthy=False,
                          cluster={"driver_mode": "host", "runtime": "crio"})
    pair = top_pair(case)
    assert pair is not None and pair[0] == "container-toolkit"


def test_a_candidate_list_the_toolkits_config_changed_stays_the_toolkits() -> None:
    case = synthetic_case("no-runc-edited", _evidence(_EDITED), platform="docker", healthy=False,
                          cluster={"driver_mode": "host"})
    pair = top_pair(case)
    assert pair is not None and pair[0] == "container-toolkit"
