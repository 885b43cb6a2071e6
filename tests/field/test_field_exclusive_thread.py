"""CUDA's 216 (a context or device already in use by another thread) in a GPU job, settled by
the node's compute mode (checks.busy_gpus): on GPUs in Exclusive_Thread mode it is the driver's
setting refusing the job's threads (tensorflow/tensorflow#526); on Default-mode GPUs it is the
job's own threading and stays unread."""

from __future__ import annotations

from case import synthetic_case
from scoreboard import top_pair

from gpunode.checks.busy_gpus import thread_bound_index, thread_exclusive

#: https://github.com/tensorflow/tensorflow/issues/526
TF = ("F tensorflow/stream_executor/cuda/cuda_driver.cc:383] Check failed: CUDA_SUCCESS == "
      "dynload::cuCtxSetCurrent(context) (0 vs. 216)")
#: the runtime API's name and text for the same code
RUNTIME = ("RuntimeError: cudaErrorDeviceAlreadyInUse: exclusive-thread device that is already in use "
           "by a different thread")
#: look-alikes: another check failing with another code, and a line that only counts to 216
OTHER_CODE = ("F tensorflow/stream_executor/cuda/cuda_driver.cc:383] Check failed: CUDA_SUCCESS == "
              "dynload::cuCtxSetCurrent(context) (0 vs. 201)")
STEPS = "step 216: loss 0.41 (0 vs. 216 batches skipped)"


def _job(mode: str, line: str) -> tuple[str, str] | None:
    case = synthetic_case("x-thread", [
        {"kind": "workload", "name": "job-0", "namespace": "default", "container": "main",
         "state": "Error", "exit_code": 134},
        {"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
         "container": "main", "text": line + "\nAborted\n"}],
        healthy=False, cluster={"driver_mode": "host", "gpu_node": {"gpu": "Tesla K20m", "gpus": 2,
                                                                    "compute_mode": mode}})
    return top_pair(case)


def test_words_of_cuda_216() -> None:
    for line in (TF, RUNTIME):
        assert thread_bound_index([line]) == 0
    for line in (OTHER_CODE, STEPS):
        assert thread_bound_index([line]) is None


def test_compute_modes_that_are_all_exclusive_thread() -> None:
    xml = "<compute_mode>Exclusive_Thread</compute_mode>\n<compute_mode>Exclusive_Thread</compute_mode>"
    assert thread_exclusive("", xml)
    assert not thread_exclusive("", xml.replace("Thread</", "Process</", 1))
    assert not thread_exclusive("", "")


def test_216_on_exclusive_thread_gpus_is_the_driver_s_setting() -> None:
    assert _job("Exclusive_Thread", TF) == ("driver", "error_device")
    assert _job("Exclusive_Thread", RUNTIME) == ("driver", "error_device")


def test_216_on_default_mode_gpus_is_not_read() -> None:
    assert _job("Default", TF) != ("driver", "error_device")
    assert _job("Exclusive_Thread", OTHER_CODE) != ("driver", "error_device")
