"""docker-compose refusing a Compose file before any container is created
(data/job_errors/container_engines.toml, compose-file-invalid and compose-service-key-invalid):
its validation header and its per-key lines, which name the key by its path from
``services.<name>``, are the container engine's config error; JSON Schema's
additionalProperties wording is a config-invalid class word (data/causes/classes.toml).
The entries' own lines and look-alikes are read with the other engines' in
test_field_engine_client_words.py (a Helm chart's values schema and compose's own healthy lines
stay silent there).

Sources: docker/compose 1.29.2 compose/config/validation.py (handle_errors,
get_unsupported_config_msg, handle_generic_error); docker/compose#6691,
iot-salzburg/gpu-jupyter#46."""

from __future__ import annotations

import pytest
from case import docker_refused_case
from scoreboard import top_pair

from gpunode.kb import load_kb

KB = load_kb()


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
