"""docker-compose refusing a Compose file before any container is created
(data/job_errors/container_engines.toml, compose-file-invalid and compose-service-key-invalid):
its validation header and its per-key lines, which name the key by its path from
``services.<name>``, are the container engine's config error; JSON Schema's
additionalProperties wording is a config-invalid class word (data/causes/classes.toml).
Look-alikes: a Helm chart's values schema and compose's own healthy lines stay silent.

Sources: docker/compose 1.29.2 compose/config/validation.py (handle_errors,
get_unsupported_config_msg, handle_generic_error); docker/compose#6691,
iot-salzburg/gpu-jupyter#46."""

from __future__ import annotations

import pytest
from case import docker_refused_case
from scoreboard import top_pair

from gpunode.job_errors import job_error
from gpunode.kb import load_kb

KB = load_kb()

READ = {
    "compose-file-invalid": [
        "ERROR: The Compose file './docker-compose.yml' is invalid because:",
        "The Compose file is invalid because:",
    ],
    "compose-service-key-invalid": [
        "Unsupported config option for services.engine: 'runtime'",
        "services.gpu-jupyter.deploy.resources.reservations value Additional properties are not "
        "allowed ('devices' was unexpected)",
        "services.trainer.deploy.resources.reservations.devices contains unsupported option: 'gpus'",
    ],
}

LOOK_ALIKES = [
    # a Helm chart's values schema: another program's document, no compose path
    "Error: values don't meet the specifications of the schema(s) in the following chart(s):\n"
    "gpu-operator: - (root): Additional property foo is not allowed",
    "Creating network \"gpu-jupyter_default\" with the default driver",
    "Recreating gpu-jupyter ... done",
    "WARNING: Some services (engine) use the 'deploy' key, which will be ignored.",
]


@pytest.mark.parametrize(("entry", "line"), [(e, line) for e, lines in READ.items() for line in lines])
def test_compose_refusal_is_the_engines(entry: str, line: str) -> None:
    found = job_error(line)
    assert found is not None and found.id == entry
    assert found.component == "container-runtime"


@pytest.mark.parametrize("line", LOOK_ALIKES)
def test_look_alikes_stay_unread(line: str) -> None:
    found = job_error(line)
    assert found is None or found.id not in READ


@pytest.mark.parametrize("line", [
    "services.x.deploy.resources.reservations value Additional properties are not allowed "
    "('devices' was unexpected)",
    "validating docker-compose.yml: services.x.deploy.resources.reservations "
    "Additional property devices is not allowed",
])
def test_schema_unknown_key_is_config_invalid(line: str) -> None:
    assert KB.class_of(line) == "error_config_invalid"


def test_schema_words_need_the_refusal() -> None:
    assert KB.class_of("additionalProperties: false keeps the schema closed") is None


def test_a_gpu_service_compose_refused() -> None:
    message = ("The Compose file './docker-compose.yml' is invalid because:\n"
               "services.gpu-jupyter.deploy.resources.reservations value Additional properties are "
               "not allowed ('devices' was unexpected)")
    assert top_pair(docker_refused_case("x-compose-devices", message)) == (
        "container-runtime", "error_config_invalid")


def test_a_compose_pod_that_started_stays_healthy() -> None:
    message = "Started container gpu-jupyter"
    assert top_pair(docker_refused_case("x-compose-ok", message)) != (
        "container-runtime", "error_config_invalid")
