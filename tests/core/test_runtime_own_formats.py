"""The OCI runtime's own failure to create a container, in the formats other than runc 1.1+'s
"runc create failed": runc before 1.1 naming its own source files, and CRI-O's (and libpod's)
relay of what the runtime wrote through conmon ("container create failed: <message>"). Read
only where no word of the line names a layer above: the same wrappers around nvidia-container-
cli's words name the layer those words name. Lines are from public reports (each source is
named beside it)."""

from __future__ import annotations

from gpunode.catalog import load_catalog
from gpunode.checks.decisive import Text, workload_names
from gpunode.checks.named import runtime_own_error

CATALOG = load_catalog()

#: runc 1.0 of Docker 20.10 (a public note, arm64): a host folder mounted over the container's /dev
OLD_RUNC = ("failed to create shim: OCI runtime create failed: container_linux.go:380: starting container "
            "process caused: process_linux.go:545: container init caused: open /dev/ptmx: no such file or "
            "directory: unknown.")
#: NVIDIA/nvidia-container-runtime#157: runc of Docker 20.10 refusing a seccomp rule (runc < 1.1), a
#: rule NVIDIA's older runtime had rewritten (checks.seccomp_spec: the toolkit's under its runtime)
OLD_RUNC_SECCOMP = ("failed to create shim: OCI runtime create failed: container_linux.go:380: starting "
                    "container process caused: error adding seccomp filter rule for syscall clone3: "
                    "permission denied: unknown.")
#: the GPU Operator's documentation (v26.3.1, hostUsers: false): crun's error relayed by CRI-O
CRIO_RELAY = "Error: container create failed: read status from sync socket: No such process"
#: runc < 1.1 relaying the hook's own words, as public notes quote them (a missing
#: /sbin/ldconfig.real, NVIDIA/nvidia-docker#614; a driver upgraded under a running module)
_OLD_HOOK = ('docker: Error response from daemon: OCI runtime create failed: container_linux.go:349: '
             'starting container process caused "process_linux.go:449: container init caused '
             '\\"process_linux.go:432: running prestart hook 0 caused \\\\\\"error running hook: '
             'exit status 1, stdout: , stderr: '
             'nvidia-container-cli: {}\\\\\\\\n\\\\\\"\\"": unknown.')
OLD_RUNC_LDCACHE = _OLD_HOOK.format("ldcache error: open failed: /sbin/ldconfig.real: no such file or "
                                    "directory")
OLD_RUNC_MISMATCH = _OLD_HOOK.format("initialization error: nvml error: driver/library version mismatch")


def _names(line: str) -> str | None:
    return workload_names(CATALOG, Text("event pod ml/train-0 reason=Failed count=1", [line], "cannot start",
                                        numbered=False, reason="Failed"), line)


def test_runc_before_1_1_naming_its_source_files_is_the_runtime_s() -> None:
    assert runtime_own_error(OLD_RUNC)
    assert _names(OLD_RUNC) == "container-runtime"
    assert runtime_own_error(OLD_RUNC_SECCOMP)  # the runtime's format, whoever wrote the rule


def test_crio_relaying_the_runtime_s_create_failure_is_the_runtime_s() -> None:
    assert runtime_own_error(CRIO_RELAY)
    assert _names(CRIO_RELAY) == "container-runtime"


def test_the_same_wrappers_around_a_hook_s_words_name_the_hook_s_layer() -> None:
    assert _names(OLD_RUNC_LDCACHE) == "container-toolkit"
    assert _names(OLD_RUNC_MISMATCH) == "driver"  # nvidia-container-cli relays NVML's answer


def test_a_create_failure_with_nothing_after_it_or_another_tool_s_wording_is_not_read() -> None:
    assert not runtime_own_error("container create failed")  # no runtime message relayed
    assert not runtime_own_error("Container Create Failed: 409 Conflict")  # an API client's own log
    assert not runtime_own_error("failed to create containerd task: context deadline exceeded: unknown")
