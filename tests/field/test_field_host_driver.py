"""A GPU job's CUDA diagnostics (TensorFlow's and XLA's cuda_diagnostics.cc) comparing the
loaded kernel module with the libcuda ("DSO") the job loaded, read against the node's own
driver (checks/workload_logs.py, ``_image_libcuda``): a DSO newer than a node driver that
answers at the module's release is the image's CUDA forward-compatibility library, so the
node's driver is too old for the image; any other pair stays the driver's library mismatch.
Each line from a public report (its address beside it)."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import diagnose_case, top_root_cause


def _job_case(lines: str, driver: str, smi_text: str | None = None, cuda: str | None = None) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "job", "namespace": "default", "container": "job",
         "state": "Error", "exit_code": 1},
        {"kind": "log", "object": {"kind": "Pod", "name": "job", "namespace": "default"},
         "container": "job", "text": lines}]
    if smi_text is not None:
        evidence.append({"kind": "node-cmd", "name": "nvidia-smi.txt", "text": smi_text})
    raw = {"id": "x-host-driver", "source": "https://example.org/x", "title": "t", "platform": "docker",
           "cluster": {"driver_mode": "host", "gpu_node": {"gpus": 1, "driver_version": driver,
                                                            **({"cuda_version": cuda} if cuda else {})}},
           "evidence": evidence, "expect": {"healthy": True}}
    return msgspec.convert(raw, Case)


def _top(case: Case) -> tuple[str, str] | None:
    top = top_root_cause(diagnose_case(case), case.node)
    return (top.component, top.cause) if top else None


#: NVIDIA/nvidia-docker#1704: nvidia/cuda:11.7.1 (compat libcuda 515) on a K80 host with
#: driver 470; nvidia/cuda:11.4.3 works there (numbers as XLA prints them, the report's
#: dots filled with the 470 and 515 releases of the time).
CUINIT = ("E external/xla/xla/stream_executor/cuda/cuda_driver.cc:152] failed call to cuInit: "
          "INTERNAL: CUDA error: Failed call to cuInit: CUDA_ERROR_UNKNOWN: unknown error\n")
DSO_1704 = ("E external/xla/xla/stream_executor/cuda/cuda_diagnostics.cc:262] kernel version "
            "470.141.3 does not match DSO version 515.65.1 -- cannot find working devices in this "
            "configuration\n")
#: tensorflow/tensorflow#4349 (a later comment): kernel 460.91.3, DSO 470.57.2, and the
#: host's own nvidia-smi "Failed to initialize NVML: Driver/library version mismatch": the
#: host upgraded its libraries without reloading the module.
DSO_4349 = ("E tensorflow/stream_executor/cuda/cuda_diagnostics.cc:313] kernel version 460.91.3 "
            "does not match DSO version 470.57.2 -- cannot find working devices in this configuration\n")
#: tensorflow/tensorflow#4768: kernel 352.63, DSO 361.93.2 (a host whose libraries moved on).
DSO_4768 = ("E tensorflow/stream_executor/cuda/cuda_diagnostics.cc:296] kernel version 352.63.0 does "
            "not match DSO version 361.93.2 -- cannot find working devices in this configuration\n")


def test_a_newer_dso_on_a_node_driver_at_the_module_s_release_is_a_driver_too_old() -> None:
    # the diagnostics' verdict after the failed cuInit it explains, and the verdict alone
    assert _top(_job_case(CUINIT + DSO_1704, "470.141.03")) == ("driver", "cuda_driver_too_old")
    assert _top(_job_case(DSO_1704, "470.141.03")) == ("driver", "cuda_driver_too_old")


def test_a_host_that_fails_the_same_way_stays_the_driver_s_library_mismatch() -> None:
    mismatch = "Failed to initialize NVML: Driver/library version mismatch\n"
    assert _top(_job_case(DSO_4349, "460.91.03", mismatch)) == ("driver", "driver_library_mismatch")


def test_a_node_driver_at_the_dso_s_release_stays_the_driver_s_library_mismatch() -> None:
    # the node answers at the library's release: its module is the older one
    assert _top(_job_case(DSO_4768, "361.93.02", cuda="8.0")) == ("driver", "driver_library_mismatch")
    both = _job_case(CUINIT + DSO_4768, "361.93.02", cuda="8.0")
    assert _top(both) == ("driver", "driver_library_mismatch")


def test_a_failed_cuinit_without_the_verdict_is_not_read_here() -> None:
    # healthy look-alike of the rule: the same cuInit line alone names no library pair
    assert _top(_job_case(CUINIT, "470.141.03")) != ("driver", "cuda_driver_too_old")
