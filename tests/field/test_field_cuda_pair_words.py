"""A job that prints its runtime's and its driver's CUDA versions settles whether its driver is
too old (checks.cuda_pair_words): CUDA's deviceQuery ("CUDA Driver Version / Runtime Version",
cuda-samples deviceQuery.cpp), PaddlePaddle's "Driver API Version: 11.4, Runtime API Version:
11.2" (gpu_context.cc) and NVIDIA Warp's "CUDA Toolkit 12.8, Driver 13.0" (warp/context.py).
A driver at or above the runtime runs it (drivers are backward compatible:
https://docs.nvidia.com/deploy/cuda-compatibility/), so a too-old verdict in that log is the
job library's own and the node stays healthy (NVIDIA/warp#940: Warp 1.7.1's entry-point probe
on an R580 driver). A pair whose driver is older keeps the driver's verdict."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.checks.cuda_pair_words import driver_older_than_compiler, driver_serves_runtime

ERROR_36 = ("Warp CUDA error 36: API call is not supported in the installed CUDA driver "
            "(in function cuda_init, warp/native/warp.cu:277)")
WARP_NEWER_DRIVER = ERROR_36 + "\nWarp 1.7.1 initialized:\n   CUDA Toolkit 12.8, Driver 13.0\n"
DEVICE_QUERY = ("  CUDA Driver Version / Runtime Version          13.0 / 12.8\n"
                "cudaMallocAsync returned 36\n-> API call is not supported in the installed CUDA driver\n")
PADDLE_OLDER_DRIVER = (
    "W0218 10:33:59.574426  1503 device_context.cc:404] Please NOTE: device: 0, GPU Compute Capability: 7.0, "
    "Driver API Version: 10.1, Runtime API Version: 10.2\n"
    "OSError: (External) Cuda error(35), CUDA driver version is insufficient for CUDA runtime version.\n")


def _job(text: str, *, healthy: bool) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "sim-0", "namespace": "default", "container": "sim",
         "state": "Running"},
        {"kind": "log", "object": {"kind": "Pod", "name": "sim-0", "namespace": "default"},
         "container": "sim", "text": text}]
    return synthetic_case("x-cuda-pair", evidence, healthy=healthy, platform="docker",
                          cluster={"driver_mode": "host", "gpu_node": {"gpus": 1}})


def test_the_pair_is_read_in_each_programs_words() -> None:
    assert driver_serves_runtime(WARP_NEWER_DRIVER.splitlines())
    assert driver_serves_runtime(DEVICE_QUERY.splitlines())
    assert not driver_serves_runtime(PADDLE_OLDER_DRIVER.splitlines())
    assert not driver_serves_runtime([ERROR_36])


def test_a_driver_newer_than_the_jobs_runtime_is_not_too_old() -> None:
    assert top_pair(_job(WARP_NEWER_DRIVER, healthy=True)) is None
    assert top_pair(_job(DEVICE_QUERY, healthy=True)) is None


def test_a_driver_older_than_the_jobs_runtime_stays_too_old() -> None:
    assert top_pair(_job(PADDLE_OLDER_DRIVER, healthy=False)) == ("driver", "cuda_driver_too_old")
    assert top_pair(_job(ERROR_36 + "\n", healthy=False)) == ("driver", "cuda_driver_too_old")


#: google-deepmind/alphafold3#272: XLA on a node whose driver supports CUDA 12.2.
XLA_OLDER = ("The NVIDIA driver's CUDA version is 12.2 which is older than the PTX compiler version 12.6.77. "
             "Because the driver is older than the PTX compiler version, XLA is disabling parallel "
             "compilation, which may slow down compilation.")


def _xla(driver: str, cuda: str, text: str = XLA_OLDER) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "fold-0", "namespace": "default", "container": "af3",
         "state": "Running"},
        {"kind": "log", "object": {"kind": "Pod", "name": "fold-0", "namespace": "default"},
         "container": "af3", "text": text + "\n"}]
    node = {"driver_version": driver, "cuda_version": cuda}
    return synthetic_case("x-xla-older", evidence, healthy=False,
                          cluster={"driver_mode": "host", "gpu_node": node})


def test_xla_s_driver_older_than_its_compiler_on_that_node_is_the_driver_too_old() -> None:
    assert driver_older_than_compiler(XLA_OLDER) == ((12, 2), (12, 6))
    assert top_pair(_xla("535.183.01", "12.2")) == ("driver", "cuda_driver_too_old")
    old_form = ("The NVIDIA driver's CUDA version is 11.4 which is older than the ptxas CUDA version "
                "(11.6.55).")
    assert driver_older_than_compiler(old_form) == ((11, 4), (11, 6))


def test_xla_s_warning_about_another_driver_or_a_newer_one_says_nothing() -> None:
    # look-alike: the node's driver answers with a CUDA version other than the line's
    assert top_pair(_xla("570.133.20", "12.8")) is None
    newer = XLA_OLDER.replace("is 12.2 which", "is 12.8 which")
    assert driver_older_than_compiler(newer) is None
