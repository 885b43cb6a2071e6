"""Singularity 2.x's --nv library step failing on its own path (data/job_errors/
container_engines.toml, singularity-nv-libs-bind) names the GPU-library injection, the toolkit's
part under other engines: its errors creating the session's libs directory or the image's
/.singularity.d/libs bind point (src/lib/runtime/files/libs/libs.c,
https://github.com/apptainer/singularity/blob/release-2.6/src/lib/runtime/files/libs/libs.c;
Apptainer's GPU guide, https://apptainer.org/docs/user/main/gpu.html: --nv binds the host's
libraries into /.singularity.d/libs; apptainer/singularity#1548). Look-alike: the engine's
other directories (its home directory, apptainer/singularity#1417) are not the toolkit's."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

LIBS_DIR = ("ERROR  : Failed creating directory /var/singularity/mnt/final/.singularity.d/libs :No such file"
            " or directory")
TEMP_LIBS = "ERROR  : Failed creating temp lib directory at: /var/singularity/mnt/session/libs"
#: apptainer/singularity#1417: the engine's home directory, not --nv's
HOME_DIR = ("ERROR  : Failed creating home directory in container /opt/singularity/var/singularity/mnt/final/"
            "home/username: Operation not supported")


def _start(line: str) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "job-0", "namespace": "default", "container": "main",
         "state": "RunContainerError", "message": line},
        {"kind": "event", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
         "type": "Warning", "reason": "Failed", "message": line + "\nABORT  : Retval = 255\n"}]
    return synthetic_case("x-singularity-nv", evidence)


def test_the_nv_library_step_failing_names_the_injection() -> None:
    for line in (LIBS_DIR, TEMP_LIBS):
        top = top_pair(_start(line))
        assert top is not None and top[0] == "container-toolkit", (line, top)


def test_the_engines_other_directories_are_not_the_injection() -> None:
    top = top_pair(_start(HOME_DIR))
    assert top is None or top[0] != "container-toolkit", top
