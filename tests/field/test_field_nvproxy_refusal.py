"""gVisor's nvproxy refusing a GPU sandbox, in runsc's own debug log (``files/var/log/runsc/``,
runsc.toml ``debug-log = "/var/log/runsc/"``, where the gVisor GPU docs send users): the host
driver's version it does not list (the sandbox never boots) or a control command / ioctl it
does not implement, read for a GPU pod under a RuntimeClass other than NVIDIA's that has not
started or ended in an error. The runtime the RuntimeClass's handler names is fixed.

Public lines tried (besides the field cases' own): google/gvisor#12774 (the version refusal
quoted from the debug log), google/gvisor#10413 (unknown control command 0x3d05, multi-GPU
training stuck), google/gvisor#9846 (unknown control command 0x20801230 on H100),
google/gvisor#10272 (unknown frontend ioctl 212 in DDP training). Look-alikes: the info and
debug lines of a sandbox that booted (google/gvisor#10605's driver line, #10272's and #9846's
'nvproxy: frontend ioctl: nr = ...' and 'nvproxy: control command 0x...'), and a warning of
an unknown command in the log of a GPU pod that runs on."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.decisive import severity

REFUSED = {
    # https://github.com/google/gvisor/pull/12774
    "gvisor-12774": ("FATAL ERROR: creating loader: registering filesystems: registering nvproxy driver: "
                     "unsupported Nvidia driver version: 570.211.01", "error_version_mismatch"),
    # https://github.com/google/gvisor/issues/10413
    "gvisor-10413": ("W0509 01:16:28.218428  1772489 frontend.go:521] [   6:  20] nvproxy: unknown control "
                     "command 0x3d05 (paramsSize=24)", "error_not_found"),
    # https://github.com/google/gvisor/issues/9846
    "gvisor-9846": ("nvproxy: unknown control command 0x20801230", "error_not_found"),
    # https://github.com/google/gvisor/issues/10272
    "gvisor-10272": ("W0412 15:55:45.690854  1008391 frontend.go:180] [  15:  42] nvproxy: unknown frontend "
                     "ioctl 212 == 0xd4 (argSize=128, cmd=0xc08046d4)", "error_not_found"),
}

#: A sandbox that booted and forwarded its calls: info and debug lines only.
BOOTED = "\n".join([
    # https://github.com/google/gvisor/issues/10605 (its first line)
    "I0701 16:17:05.097581  2939814 nvproxy.go:35] NVIDIA driver version: 535.161.08",
    # https://github.com/google/gvisor/issues/10272
    "D0412 15:55:45.690841  1008391 frontend.go:154] [  15:  42] nvproxy: frontend ioctl: nr = 0x000000d4, "
    "argSize = 0x00000080",
    # https://github.com/google/gvisor/issues/9846
    "D1229 09:57:11.030417   13265 frontend.go:488] [   2:   2] nvproxy: control command 0x2080122b"])


def _pod(name: str, line: str, *, state: str, healthy: bool, runtime_class: str = "gvisor") -> Case:
    return synthetic_case(f"nvproxy-{name}", [
        {"kind": "workload", "name": "gpu-job", "namespace": "default", "runtimeClassName": runtime_class,
         "state": state, **({"exit_code": 1} if state == "Error" else {})},
        {"kind": "node-file", "path": "var/log/runsc/runsc.log.20240710-210438.005411.boot.txt",
         "text": BOOTED + "\n" + line + "\n"},
    ], healthy=healthy)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_nvproxy_refusing_a_failing_gpu_sandbox_is_the_runtimes(name: str) -> None:
    line, cause = REFUSED[name]
    assert top_pair(_pod(name, line, state="Error", healthy=False)) == ("container-runtime", cause)


def test_a_sandbox_that_never_booted_is_read_while_the_pod_is_created() -> None:
    line, cause = REFUSED["gvisor-12774"]
    assert top_pair(_pod("creating", line, state="ContainerCreating", healthy=False)) == (
        "container-runtime", cause)


def test_a_booted_sandboxs_info_and_debug_lines_are_no_failure() -> None:
    assert top_pair(_pod("booted", "", state="Running", healthy=True)) is None


def test_an_unknown_command_warned_for_a_pod_that_runs_on_is_no_failure() -> None:
    line, _ = REFUSED["gvisor-10413"]
    assert top_pair(_pod("running", line, state="Running", healthy=True)) is None


#: runsc's own words when the sandbox died while it booted (the pipe it waits on closed), as the
#: CRI relays them; runsc's debug log says why (google/gvisor#11328: "The error you are seeing
#: ... means that something went wrong during" the sandbox's startup).
SANDBOX_DIED = {
    # https://github.com/google/gvisor/pull/11328
    "gvisor-11328": "creating container: cannot create sandbox: cannot read client sync file: waiting for "
                    "sandbox to start: EOF",
    # https://github.com/google/gvisor/pull/12774
    "gvisor-12774": ("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to start "
                     "sandbox \"...\": failed to create containerd task: failed to create shim task: OCI "
                     "runtime create failed: creating container: cannot create sandbox: cannot read client "
                     "sync file: waiting for sandbox to start: EOF"),
}


@pytest.mark.parametrize("name", sorted(SANDBOX_DIED))
def test_a_sandbox_that_died_booting_is_a_failed_wait(name: str) -> None:
    assert severity(SANDBOX_DIED[name]) >= 1


def test_the_relay_alone_names_the_runtime() -> None:
    case = synthetic_case("nvproxy-relay-only", [
        {"kind": "workload", "name": "gpu-sandbox", "namespace": "default", "runtimeClassName": "gvisor",
         "state": "ContainerCreating"},
        {"kind": "event", "object": {"kind": "Pod", "name": "gpu-sandbox", "namespace": "default"},
         "type": "Warning", "reason": "FailedCreatePodSandBox", "message": SANDBOX_DIED["gvisor-12774"]},
    ], healthy=False)
    found = top_pair(case)
    assert found is not None and found[0] == "container-runtime", found


def test_a_wait_still_going_is_no_failure() -> None:
    assert severity("waiting for sandbox to start") == 0
