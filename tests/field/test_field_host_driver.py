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


def _banner_case(runtime_class: bool, warn: bool = True, named: str | None = None) -> Case:
    """A CUDA image's GPU pod whose log opens with the entrypoint's no-driver banner, on a
    containerd node whose default runtime is runc (the pod names NVIDIA's RuntimeClass or
    none), as gpu-operator#1017's vector-add pod is placed."""
    log = "==========\n== CUDA ==\n==========\nCUDA Version 12.4.1\n" + (
        f"{BANNER}\n   Use the NVIDIA Container Toolkit to start this container with GPU support; see\n"
        "   https://docs.nvidia.com/datacenter/cloud-native/ .\n" if warn else "")
    raw = {"id": "x-banner", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "cluster": {"runtime_class": runtime_class},
           "evidence": [{"kind": "workload", "name": "job", "namespace": "default", "container": "job",
                         "state": "Error", "exit_code": 1, **({"runtimeClassName": named} if named else {})},
                        {"kind": "log", "object": {"kind": "Pod", "name": "job", "namespace": "default"},
                         "container": "job", "text": log}],
           "expect": {"healthy": True}}
    return msgspec.convert(raw, Case)


#: The CUDA images' entrypoint banner (NVIDIA/free-threaded-python
#: docker/entrypoint.d/50-gpu-driver-check.sh: no libcuda.so.1 in the ld cache or
#: LD_LIBRARY_PATH, or no /dev/nvidiactl; asus-ocis-asus/cvat_triton_server check_env.sh).
BANNER = "WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available."


def test_the_cuda_entrypoint_s_no_driver_banner_under_plain_runc_is_the_runtime_default() -> None:
    assert _top(_banner_case(runtime_class=False)) == ("container-toolkit", "nvidia_not_default_runtime")


def test_a_cuda_image_s_banner_less_start_stays_healthy() -> None:
    # healthy look-alike: the same banner header without the warning line
    assert _top(_banner_case(runtime_class=False, warn=False)) is None


def test_the_banner_in_a_pod_under_nvidia_s_runtime_is_the_toolkit_s_injection() -> None:
    top = _top(_banner_case(runtime_class=True, named="nvidia"))
    assert top is not None and top[0] == "container-toolkit" and top[1] != "nvidia_not_default_runtime"


def _xorg_case(text: str) -> Case:
    raw = {"id": "x-xorg", "source": "https://example.org/x", "title": "t", "platform": "docker",
           "cluster": {"driver_mode": "host"},
           "evidence": [{"kind": "workload", "name": "desktop", "namespace": "default",
                         "container": "desktop", "state": "CrashLoopBackOff", "restarts": 3, "exit_code": 1},
                        {"kind": "log", "object": {"kind": "Pod", "name": "desktop", "namespace": "default"},
                         "container": "desktop", "text": text}],
           "expect": {"healthy": True}}
    return msgspec.convert(raw, Case)


#: selkies-project/docker-selkies-glx-desktop#11 (a GPU desktop container's Xorg) and
#: andyljones/coolgpus#8 (a second X server on GPUs the host's display holds).
MODESET = ("[  2386.268] (EE) NVIDIA(GPU-0): Failed to acquire modesetting permission.\n"
           "[  2386.268] (EE) NVIDIA(0): Failing initialization of X screen\n"
           "(EE) no screens found(EE)\n")


def test_the_x_driver_refused_modesetting_is_the_driver_s_permission() -> None:
    assert _top(_xorg_case(MODESET)) == ("driver", "error_permission_denied")


def test_the_x_driver_s_ordinary_start_is_not_read_as_a_refusal() -> None:
    # healthy look-alike: the same driver's own lines where it got the GPU (Bumblebee-Project/Bumblebee#580)
    quiet = ("[ 20875.999] (II) NVIDIA(GPU-0): Found DRM driver nvidia-drm (20130102)\n"
             "[ 20875.999] (II) NVIDIA(0): NVIDIA GPU GeForce GT 540M (GF108) at PCI:1:0:0 (GPU-0)\n")
    assert _top(_xorg_case(quiet)) is None


#: TensorFlow's diagnostics after a failed cuInit where no NVIDIA kernel module answers (the
#: module's procfs file absent; openxla/xla xla/stream_executor/cuda/cuda_diagnostics.cc prints
#: it where /proc/driver/nvidia/version cannot be read, tensorflow/tensorflow#1158 shows the same
#: diagnostics reading the module's version from that file).
NO_MODULE = ("E tensorflow/stream_executor/cuda/cuda_driver.cc:491] failed call to cuInit: "
             "CUDA_ERROR_UNKNOWN\n"
             "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:140] kernel driver does not appear to be "
             "running on this host (node-1): /proc/driver/nvidia/version does not exist\n")


def test_cuinit_explained_by_no_kernel_module_is_the_driver_not_loaded() -> None:
    assert _top(_job_case(NO_MODULE, "570.133.20")) == ("driver", "driver_not_loaded")


def test_the_same_verdict_in_a_container_without_libcuda_is_not_the_module_s() -> None:
    # tensorflow/tensorflow#57764: a pod whose cuInit hit CUDA's stub library (error 34); and the
    # loader finding no libcuda first: the container got no driver library, the injection's question
    stub = NO_MODULE.replace("CUDA_ERROR_UNKNOWN", "UNKNOWN ERROR (34)")
    assert _top(_job_case(stub, "570.133.20")) != ("driver", "driver_not_loaded")
    missing = ("W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic "
               "library 'libcuda.so.1'; dlerror: libcuda.so.1: cannot open shared object file: No such "
               "file or directory\n") + NO_MODULE
    assert _top(_job_case(missing, "570.133.20")) != ("driver", "driver_not_loaded")
