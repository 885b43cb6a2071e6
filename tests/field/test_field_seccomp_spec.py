"""runc refusing a seccomp rule of a GPU container ("error adding seccomp filter rule for syscall
clone3: permission denied") is the NVIDIA runtime's rewrite of the spec dropping the rule's
errno, the toolkit's (src/gpunode/checks/seccomp_spec.py; NVIDIA/nvidia-container-runtime#157,
NVIDIA/nvidia-container-toolkit#507, containerd/containerd#6203: fixed by NVIDIA's rebuilt
runtime). A pod whose RuntimeClass names another handler leaves NVIDIA's runtime out: there
the line stays runc's own (containerd/nerdctl#414, fixed by a newer runc). A healthy GPU job
that prints the engine's seccomp settings says nothing."""

from __future__ import annotations

import json

from case import Case, running_job_case, synthetic_case
from scoreboard import top_pair

_REFUSED = ("Error: failed to create shim: OCI runtime create failed: container_linux.go:380: starting "
            "container process caused: error adding seccomp filter rule for syscall {syscall}: "
            "permission denied: unknown")


def _refused(syscall: str, runtime_class: str | None = None) -> Case:
    """A GPU pod whose start fails on runc's refusal of the seccomp rule for ``syscall``."""
    workload: dict[str, object] = {"kind": "workload", "name": "train", "namespace": "default",
                                   "container": "train", "state": "RunContainerError", "restarts": 2}
    if runtime_class is not None:
        workload["runtimeClassName"] = runtime_class
    return synthetic_case("x-seccomp-spec", [
        workload,
        {"kind": "event", "object": {"kind": "Pod", "name": "train", "namespace": "default"},
         "type": "Warning", "reason": "Failed", "count": 3, "message": _REFUSED.format(syscall=syscall)},
    ], platform="docker", healthy=False, cluster={"driver_mode": "host"})


def test_clone3_rule_refused_in_a_gpu_container_is_the_toolkits() -> None:
    assert top_pair(_refused("clone3")) == ("container-toolkit", "error_permission_denied")


def test_any_syscalls_rule_refused_is_read_alike() -> None:
    assert top_pair(_refused("socket")) == ("container-toolkit", "error_permission_denied")


def test_rule_refused_under_another_runtime_handler_stays_the_runtimes() -> None:
    assert top_pair(_refused("clone3", "kata-qemu")) == ("container-runtime", "error_permission_denied")


def test_healthy_job_printing_its_seccomp_settings_stays_healthy() -> None:
    case = running_job_case("x-seccomp-healthy", " Security Options:\n  seccomp\n   Profile: builtin\n"
                            "Seccomp:\t2\nSeccomp_filters:\t1\nstep 100 loss 0.41")
    assert top_pair(case) is None


def _operand_refused(component: str, driver_mode: str = "host") -> Case:
    """A stack pod of ``component`` whose container cannot be created for the same refusal."""
    return synthetic_case("x-seccomp-operand", [
        {"kind": "pod-state", "component": component, "state": "RunContainerError", "restarts": 3,
         "message": _REFUSED.format(syscall="clone3")},
    ], healthy=False, cluster={"driver_mode": driver_mode})


def test_gpu_operand_whose_seccomp_rule_is_refused_meets_the_toolkit() -> None:
    assert top_pair(_operand_refused("device-plugin")) == ("container-toolkit", "error_permission_denied")


def test_driver_pod_run_by_runc_alone_keeps_its_own_refusal() -> None:
    assert top_pair(_operand_refused("driver", "operator")) == ("driver", "error_permission_denied")


_JOURNAL = ('Nov 01 10:00:00 gpu-wk-01 dockerd[912]: time="2021-11-01T10:00:00.1Z" level=error '
            'msg="Handler for POST /v1.41/containers/abc/start returned error: failed to create shim: OCI '
            'runtime create failed: container_linux.go:380: starting container process caused: error adding '
            'seccomp filter rule for syscall clone3: permission denied: unknown"\n')


def _journal_refused(default_runtime: str) -> Case:
    """The refusal in the Docker daemon's journal only, on a node whose daemon.json makes
    ``default_runtime`` the default and registers NVIDIA's runtime."""
    daemon = json.dumps({"default-runtime": default_runtime,
                         "runtimes": {"nvidia": {"path": "nvidia-container-runtime", "runtimeArgs": []}}})
    return synthetic_case("x-seccomp-journal", [
        {"kind": "node-cmd", "name": "journal-runtime.txt", "text": _JOURNAL},
        {"kind": "node-file", "path": "etc/docker/daemon.json", "text": daemon},
    ], platform="docker", healthy=False, cluster={"driver_mode": "host"})


def test_refusal_in_the_journal_where_nvidia_is_the_default_runtime_is_the_toolkits() -> None:
    assert top_pair(_journal_refused("nvidia")) == ("container-toolkit", "error_permission_denied")


def test_refusal_in_the_journal_where_runc_is_the_default_stays_the_runtimes() -> None:
    assert top_pair(_journal_refused("runc")) == ("container-runtime", "error_permission_denied")
