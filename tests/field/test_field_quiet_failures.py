"""Stack components that fail without a pod state saying so, read from where they spoke:
a stack program the kernel killed for a fault, what the NVIDIA runtime only relays from
runc, and CUDA's insufficient-driver error in a GPU job's log whatever level the job gave
it, settled by the pod's runtime."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from containerd_configs import RUNC_DEFAULT
from scoreboard import top_pair

from gpunode.decisive import message_of, severity


def _case(*evidence: dict[str, Any], **cluster: Any) -> Case:
    raw = {"id": "x-quiet-failures", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "evidence": list(evidence), "expect": {"healthy": False}, "cluster": cluster}
    return msgspec.convert(raw, Case)


#: https://github.com/NVIDIA/nvidia-container-toolkit/issues/1101 (libnvidia-container 1.17.7 on Arch).
SEGFAULT = ("[  182.001204] nvidia-containe[5657]: segfault at 0 ip 000070190de67398 sp 00007ffc29492650 "
            "error 4 in libnvidia-container.so.1.17.7[a398,70190de61000+15000] likely on CPU 6 "
            "(core 12, socket 0)\n")


def test_a_stack_program_the_kernel_killed_for_a_fault_is_its_component_s_failure() -> None:
    case = _case({"kind": "node-cmd", "name": "dmesg.txt", "text": SEGFAULT}, driver_mode="host")
    assert top_pair(case) == ("container-toolkit", "error_unclassified")


def test_a_crash_of_a_program_outside_the_stack_accuses_no_component() -> None:
    # the same kernel line for a process and object the catalog does not name
    line = SEGFAULT.replace("nvidia-containe", "python3")
    line = line.replace("libnvidia-container.so.1.17.7", "libc.so.6")
    case = _case({"kind": "node-cmd", "name": "dmesg.txt", "text": line}, driver_mode="host")
    assert top_pair(case) is None


#: https://github.com/NVIDIA/nvidia-container-toolkit/issues/796 (runc's broken AppArmor profile).
KILL = ("ctr: unknown error after kill: /usr/bin/nvidia-container-runtime did not terminate successfully: "
        "exit status 1: unable to signal init: permission denied")


def test_a_success_denied_is_an_error_not_noise() -> None:
    assert severity(KILL) == 1
    assert severity("Successfully registered node") == 0


def test_what_the_nvidia_runtime_only_relays_from_runc_is_the_container_runtime_s() -> None:
    event = {"kind": "event", "object": {"kind": "Pod", "name": "gpu-workload"}, "type": "Warning",
             "reason": "FailedKillPod", "message": KILL}
    assert top_pair(_case(event)) == ("container-runtime", "error_permission_denied")


#: https://github.com/bottlerocket-os/bottlerocket-kernel-kit/issues/254 (Triton on CUDA 13, R570 driver).
TRITON = ('W0828 21:14:00.831708 1433 pinned_memory_manager.cc:273] "Unable to allocate pinned system '
          'memory, pinned memory pool will not be available: CUDA driver version is insufficient for CUDA '
          'runtime version"\n')


def test_cuda_s_insufficient_driver_at_warning_level_in_a_job_names_the_driver() -> None:
    # on a node whose default runtime is NVIDIA's (cdi off), so the pod got the driver's libraries
    # and CUDA's words mean what they say (under plain runc they say no library was injected)
    log = {"kind": "log", "object": {"kind": "Pod", "name": "triton-server"}, "text": TRITON}
    assert top_pair(_case(log, cdi=False)) == ("driver", "cuda_driver_too_old")


def test_a_job_at_warning_level_naming_nothing_catalogued_accuses_no_component() -> None:
    text = 'W0828 21:14:00.831708 1433 model.cc:12] "Unable to open model config, using defaults"\n'
    log = {"kind": "log", "object": {"kind": "Pod", "name": "triton-server"}, "text": text}
    assert top_pair(_case(log)) is None


def test_the_same_error_in_a_pod_that_got_no_nvidia_runtime_is_the_runtime_s_default() -> None:
    # NVIDIA/gpu-operator#1017: the vectoradd pod names no RuntimeClass, runc is the default and
    # no CDI injects devices, so the container has no driver library and CUDA says the same.
    text = ("Failed to allocate device vector A (error code CUDA driver version is insufficient for CUDA "
            "runtime version)!\n")
    log = {"kind": "log", "object": {"kind": "Pod", "name": "cuda-vectoradd"}, "text": text}
    assert top_pair(_case(log, cdi=False)) == ("driver", "cuda_driver_too_old")  # nvidia is the default
    config = {"kind": "node-file", "path": "etc/containerd/config.toml", "text": RUNC_DEFAULT}
    assert top_pair(_case(log, config, cdi=False)) == ("container-toolkit", "nvidia_not_default_runtime")




def _driver_validation(text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    state = {"kind": "pod-state", "component": "validator", "container": "driver-validation", "init": True,
             "state": "Init:0/4"}
    log = {"kind": "log", "component": "validator", "container": "driver-validation", "init": True,
           "text": text}
    return state, log


#: https://github.com/NVIDIA/gpu-operator/issues/2596 (nvidia-smi prints its table and exits 14).
HOST_DRIVER = ('time="2026-07-03T07:54:31Z" level=info msg="Attempting to validate a pre-installed driver '
               'on the host"\nNo pre-installed driver detected on the host: exit status {code}\n')


def test_nvidia_smi_s_return_code_in_the_driver_check_names_its_cause() -> None:
    case = _case(*_driver_validation(HOST_DRIVER.format(code=14)), driver_mode="host")
    assert top_pair(case) == ("gpu-hardware", "inforom_corrupted")


def test_a_return_code_that_names_no_cause_leaves_the_validator_waiting() -> None:
    case = _case(*_driver_validation(HOST_DRIVER.format(code=1)), driver_mode="host")
    top = top_pair(case)
    assert top is None or top[0] != "gpu-hardware"


#: https://github.com/NVIDIA/gpu-operator/issues/413 (expected until the toolkit set the runtime up).
NO_RUNTIME = {"kind": "event", "component": "device-plugin", "type": "Warning",
              "reason": "FailedCreatePodSandBox", "count": 14,
              "message": 'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get '
                         'sandbox runtime: no runtime for "nvidia" is configured'}


def test_a_sandbox_refused_to_a_pod_that_runs_ready_now_is_its_past() -> None:
    assert top_pair(_case(NO_RUNTIME)) is None


def test_a_sandbox_refused_to_a_pod_still_being_created_names_the_runtime_handler() -> None:
    state = {"kind": "pod-state", "component": "device-plugin", "state": "ContainerCreating"}
    top = top_pair(_case(NO_RUNTIME, state))
    assert top is not None and top[0] == "container-toolkit"


#: https://github.com/NVIDIA/gpu-operator/issues/1015 (toolkit v1.14.3 on an R550 host driver), the
#: validator's message cut where the report's paste ends, before logrus's closing quote.
DEVICE_NODES = ('time="2024-09-27T12:16:45Z" level=info msg="Error: error validating driver installation: '
                'error creating symlink creator: failed to create NVIDIA device nodes: failed to create '
                'device node nvidiactl: failed to determine major: invalid device node\\n\\nFailed to '
                'create symlinks')


def test_a_logrus_message_cut_before_its_closing_quote_is_still_its_message() -> None:
    assert message_of(DEVICE_NODES).startswith("Error: error validating driver installation")
    assert severity(DEVICE_NODES) == 1


def test_a_component_stuck_in_init_with_nothing_failing_below_is_read_in_its_init_container() -> None:
    state = {"kind": "pod-state", "component": "container-toolkit", "container": "driver-validation",
             "init": True, "state": "Init:0/1"}
    log = {"kind": "log", "component": "container-toolkit", "container": "driver-validation", "init": True,
           "text": 'time="2024-09-27T12:16:45Z" level=info msg="creating symlinks under /dev/char"\n'
                   + DEVICE_NODES + "\n"}
    top = top_pair(_case(state, log, driver_mode="host"))
    assert top is not None and top[0] == "container-toolkit" and top[1].startswith("error_")
