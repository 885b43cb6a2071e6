"""NVML's NOT_SUPPORTED return code for one query, read in a GPU metrics exporter's own log in
its bindings' words (pynvml's ``NVMLError_NotSupported``, go-nvml's "nvml: Not Supported"): the
GPU does not support a field the exporter asks for, the catalogued dcgm_field_unsupported.
DataDog/integrations-extras#612 (the case: a K80's total energy, the check's traceback inside
its JSON error list, whose closing '"}]' is no word of its own),
BugRoger/nvidia-exporter#3 ("Failed to collect metrics: nvml: Not Supported" on a K80).
A fan speed is another matter: NVML reads one only "for all discrete products with dedicated
fans" (nvmlDeviceGetFanSpeed, NVML API reference), so a passively cooled board answers Not
Supported for it by design and the exporter serves the rest ("FanSpeed() error: nvml: Not
Supported" on a Tesla T4, mindprince/nvidia_gpu_prometheus_exporter#16, #21): healthy.
nvidia-smi's "[Not Supported]" value for a field is no such code, and the code in a GPU job's
log is not the exporter's."""

from __future__ import annotations

from typing import Any

from case import Case, gpu_job_case, synthetic_case
from scoreboard import top_pair

#: BugRoger/nvidia-exporter#3
GO_NVML = "2018/11/29 08:01:12 Failed to collect metrics: nvml: Not Supported"
#: DataDog/integrations-extras#612, trimmed to the traceback's last frames
PYNVML = ('2020-06-08 17:32:11 UTC | CORE | ERROR | (pkg/collector/runner/runner.go:292 in work) | '
          'Error running check nvml: [{"message": "Not Supported", '
          '"traceback": "Traceback (most recent call last):\n'
          '  File \\"/opt/datadog-agent/embedded/lib/python3.8/site-packages/pynvml/nvml.py\\", line 366, '
          'in check_return\n    raise NVMLError(ret)\n'
          'pynvml.nvml.NVMLError_NotSupported: Not Supported\n"}]')
#: mindprince/nvidia_gpu_prometheus_exporter#16: a fanless Tesla T4
FAN = "2020/05/29 18:33:26 FanSpeed() error: nvml: Not Supported"
#: nvidia-smi's CSV with a value the GPU does not report (a K80's fan): no error
SMI_VALUE = "Tesla K80, 00000000:00:1E.0, [Not Supported], 37, P8"


def _exporter(text: str) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "pod-state", "component": "dcgm-exporter", "state": "Running"},
        {"kind": "log", "component": "dcgm-exporter", "text": text + "\n"}]
    return synthetic_case("x-nvml-unsupported", evidence, healthy=False)


def test_nvmls_not_supported_in_an_exporters_log_is_the_unsupported_field() -> None:
    for text in (GO_NVML, PYNVML):
        assert top_pair(_exporter(text)) == ("dcgm-exporter", "dcgm_field_unsupported"), text


def test_a_not_supported_value_is_no_unsupported_field() -> None:
    top = top_pair(_exporter(SMI_VALUE))
    assert top is None or top[1] != "dcgm_field_unsupported", top


def test_the_code_in_a_gpu_jobs_log_stays_off_the_exporter() -> None:
    top = top_pair(gpu_job_case("x-job-unsupported", "pynvml.nvml.NVMLError_NotSupported: Not Supported"))
    assert top is None or top[0] != "dcgm-exporter", top


def test_a_fan_the_board_does_not_have_is_no_failure() -> None:
    assert top_pair(_exporter(FAN)) is None


def test_another_query_after_the_fan_keeps_the_unsupported_field() -> None:
    top = top_pair(_exporter(FAN + "\n" + GO_NVML))
    assert top == ("dcgm-exporter", "dcgm_field_unsupported"), top
