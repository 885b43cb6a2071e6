"""Evidence read as healthy although it names a layer of the stack: a line in a GPU job's
log or event, the kernel's log or a running plugin's or agent's own log that says which layer
failed, each with its public source and a look-alike that must stay as it was (one section a
reading)."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

_HAMI: dict[str, Any] = {"kind": "pod-state", "component": "hami-device-plugin", "state": "Running"}


def _top(*evidence: dict[str, Any], cluster: dict[str, Any] | None = None) -> tuple[str, str] | None:
    return top_pair(synthetic_case("x-unjudged", list(evidence), healthy=False,
                                   cluster=cluster or {"driver_mode": "host"}))


def _dmesg(line: str) -> dict[str, Any]:
    return {"kind": "node-cmd", "name": "dmesg.txt", "text": f"[1835488.737042] {line}\n"}


def _job(text: str, state: str = "CrashLoopBackOff") -> list[dict[str, Any]]:
    return [{"kind": "workload", "name": "job-0", "namespace": "default", "container": "main",
             "state": state, **({"restarts": 3} if state == "CrashLoopBackOff" else {})},
            {"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
             "container": "main", "text": text}]


# A GPU image's own statement that the node's driver is older than its CUDA: the NGC
# entrypoint's banner ("This container was built for NVIDIA Driver Release 590.48 or later,
# but", NVIDIA/nvidia-docker#1479, hiyouga/LlamaFactory#5962) and nvidia-docker 1.0's check
# ("Error: unsupported CUDA version: driver 7.5 < image 8.0", NVIDIA/nvidia-docker#177).
# Look-alikes: the banner's forward-compatibility notice, and "driver 0.0", a driver the check
# could not read at all (NVIDIA/nvidia-docker#190).
_BANNER = ("ERROR: This container was built for NVIDIA Driver Release 590.48 or later, but\n"
           "       version 580.159.03 was detected and compatibility mode is UNAVAILABLE.\n")


def test_the_ngc_banner_names_the_driver_too_old() -> None:
    assert _top(*_job(_BANNER, state="Running")) == ("driver", "cuda_driver_too_old")


def test_the_ngc_forward_compatibility_notice_is_healthy() -> None:
    text = ("NOTE: CUDA Forward Compatibility mode ENABLED.\n"
            "  Using CUDA 12.9 driver version 575.51.03 with kernel driver version 570.133.20.\n")
    found = _top(*_job(text, state="Running"))
    assert found is None or found[1] != "cuda_driver_too_old"


def _refused(message: str) -> dict[str, Any]:
    return {"kind": "event", "object": {"kind": "Pod", "name": "cuda", "namespace": "default"},
            "type": "Warning", "reason": "Failed", "message": message}


def test_nvidia_docker_1_s_cuda_check_names_the_driver_too_old() -> None:
    found = _top(_refused("nvidia-docker | 2016/08/22 12:54:02 Error: unsupported CUDA version: "
                          "driver 7.5 < image 8.0"))
    assert found == ("driver", "cuda_driver_too_old")


def test_a_driver_the_check_could_not_read_is_not_too_old() -> None:
    found = _top(_refused("nvidia-docker | 2016/09/04 14:43:17 Error: unsupported CUDA version: "
                          "driver 0.0 < image 8.0"))
    assert found is None or found[1] != "cuda_driver_too_old"


# A GPU job's crash inside HAMi-core, the interposer a vGPU device plugin preloads into the
# containers it serves: the kernel's fault line names the object the process died in
# ("segfault at 0 ... error 4 in libvgpu.so[...]", Project-HAMi/HAMi-core#333,
# Project-HAMi/HAMi#1219), and the library's error-level header names itself ("[HAMI-core ERROR
# (pid:362 thread=... context.c:114)]: cuCtxSetCurrent failed res=4", Project-HAMi/HAMi-core#63).
# Look-alikes: a job that faults in libc, HAMi-core's Msg and Warn lines, and its error for an
# allocation over the container's memory share (the share enforced).
_FAULT = "python[3864703]: segfault at 0 ip 00007efeb76ad8a2 sp 00007ffd19dc5450 error 4 in "


def test_a_fault_inside_the_interposer_is_the_vgpu_plugin_s() -> None:
    found = _top(_HAMI, _dmesg(_FAULT + "libvgpu.so[7efeb767e000+38000]"))
    assert found is not None and found[0] == "hami-device-plugin"


def test_a_fault_in_libc_names_no_plugin() -> None:
    found = _top(_HAMI, _dmesg(_FAULT + "libc.so.6[7f00b1a28000+195000]"))
    assert found is None or found[0] != "hami-device-plugin"


def test_the_interposer_fault_without_its_plugin_names_none() -> None:
    found = _top(_dmesg(_FAULT + "libvgpu.so[7efeb767e000+38000]"))
    assert found is None or found[0] != "hami-device-plugin"


def test_the_interposer_s_error_header_names_its_plugin() -> None:
    line = "[HAMI-core ERROR (pid:362 thread=140045668926464 context.c:114)]: cuCtxSetCurrent failed res=4\n"
    found = _top(_HAMI, *_job(line))
    assert found is not None and found[0] == "hami-device-plugin"


def test_the_interposer_s_notices_stay_quiet() -> None:
    text = ("[HAMI-core Msg(257:140492977980928:libvgpu.c:873)]: Initializing.....\n"
            "[HAMi-core Warn(1062:140445645899264:utils.c:287)]: count1=1\n")
    found = _top(_HAMI, *_job(text, state="Running"))
    assert found is None or found[0] != "hami-device-plugin"


def test_the_interposer_enforcing_the_memory_share_is_no_fault() -> None:
    # Project-HAMi/HAMi#585: CUDA_ERROR_OUT_OF_MEMORY for an allocation over the container's share
    line = "[HAMI-core ERROR (pid:7 thread=140360328144640 allocator.c:115)]: cuMemoryAllocate failed res=2\n"
    found = _top(_HAMI, *_job(line, state="Running"))
    assert found is None or found[0] != "hami-device-plugin"


# An RDMA device plugin's own word that its discovery found no device at all
# (hustcat/k8s-rdma-device-plugin#19). Look-alikes: the same words before a round that serves
# devices, and a count of devices found.
def _plugin_log(text: str) -> list[dict[str, Any]]:
    return [{"kind": "pod-state", "component": "rdma-device-plugin", "state": "Running"},
            {"kind": "log", "component": "rdma-device-plugin", "text": text}]


def test_an_rdma_plugin_that_finds_no_device_says_so() -> None:
    # hustcat/k8s-rdma-device-plugin#19
    text = ("I0520 10:03:24.135872   30847 main.go:31] Fetching devices.\n"
            "I0520 10:03:24.137327   30847 main.go:39] No devices found.\n")
    assert _top(*_plugin_log(text)) == ("rdma-device-plugin", "error_not_found")


def test_a_later_round_that_serves_devices_ends_it() -> None:
    # the same words, then a round that serves (the plugin's rediscovery found the device)
    text = ("I0520 10:03:24.137327   30847 main.go:39] No devices found.\n"
            '2023/09/02 06:23:37 Updating "rdma/rdma_shared_device_a" devices\n'
            '2023/09/02 06:23:37 exposing "63" devices\n')
    found = _top(*_plugin_log(text))
    assert found is None or found[0] != "rdma-device-plugin"


def test_a_count_of_devices_found_is_no_failure() -> None:
    text = "I0520 10:03:24.137327   30847 main.go:39] 2 devices found.\n"
    found = _top(*_plugin_log(text))
    assert found is None or found[0] != "rdma-device-plugin"


# A collector's own word that a round collected none of a kind of series
# (aws-observability/aws-otel-collector#1987, #2486). Look-alike: a round that counts what it got.
def _agent_log(text: str) -> list[dict[str, Any]]:
    return [{"kind": "pod-state", "component": "otel-agent", "state": "Running"},
            {"kind": "log", "component": "otel-agent", "text": text}]


def test_an_agent_that_collects_no_pod_series_says_so() -> None:
    # aws-observability/aws-otel-collector#1987 (a GPU node of EKS)
    text = ('2023-04-20T08:40:30.214Z\twarn\tcadvisor/container_info_processor.go:93\tNo pod metric collected'
            '\t{"kind": "receiver", "name": "awscontainerinsightreceiver", "data_type": "metrics", '
            '"metrics count": 47}\n')
    assert _top(*_agent_log(text)) == ("otel-agent", "error_not_found")


def test_an_agent_that_counts_what_it_collected_is_healthy() -> None:
    text = ('2023-04-20T08:40:20.101Z\tinfo\tservice/service.go:161\tEverything is ready. Begin running and '
            'processing data.\n'
            '2023-04-20T08:40:30.214Z\tdebug\tcadvisor/container_info_processor.go:90\t47 metrics collected'
            '\t{"kind": "receiver", "name": "awscontainerinsightreceiver"}\n')
    found = _top(*_agent_log(text))
    assert found is None or found[0] != "otel-agent"
