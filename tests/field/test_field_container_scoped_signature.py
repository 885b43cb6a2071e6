"""A catalogued signature kept to named containers reads its line only there: nvidia-smi's
"couldn't find libnvidia-ml.so" in the GPU operator's validator (``toolkit-validation``) tests
the toolkit's library injection, so there it is the toolkit's ldconfig path; the same words in
a metrics agent's own pod are that agent's container lacking the library (its own mounts),
the exporter's not-found. influxdata/telegraf#4388 (the case), utkuozdemir/nvidia_gpu_exporter#146
("this is the container's GPU libraries rather than the exporter": hand-mounted libraries) and
utkuozdemir/nvidia_gpu_exporter#105 (an EKS DaemonSet; the fix is the chart's volumeMounts);
the validator's reading: NVIDIA/nvidia-container-toolkit#553."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

#: nvidia-smi's two lines (the second is advice to the reader)
SMI = ("NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the "
       "NVIDIA Display Driver is properly installed and present in your system.\n"
       "Please also try adding directory that contains libnvidia-ml.so to your system PATH.\n")


def _agent(text: str) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "pod-state", "component": "dcgm-exporter", "state": "Running"},
        {"kind": "log", "component": "dcgm-exporter", "text": text}]
    return synthetic_case("x-agent-smi", evidence, healthy=False)


def _validator(text: str) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "pod-state", "component": "validator", "container": "toolkit-validation", "init": True,
         "state": "Init:CrashLoopBackOff"},
        {"kind": "log", "component": "validator", "container": "toolkit-validation", "init": True,
         "text": text + "toolkit is not ready\n"}]
    return synthetic_case("x-validator-smi", evidence, healthy=False, cluster={"driver_mode": "host"})


def test_the_words_in_an_agents_own_log_are_its_own() -> None:
    assert top_pair(_agent(SMI)) == ("dcgm-exporter", "error_not_found")


def test_the_validators_container_keeps_the_toolkits_reading() -> None:
    assert top_pair(_validator(SMI)) == ("container-toolkit", "toolkit_ldconfig_path_wrong")

