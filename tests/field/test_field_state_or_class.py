"""Where the component was right but the cause a state or the wrong class: a security context
the image contradicts (the spec, not access), a metrics input that repeats a series (invalid
input), the errno a running agent logged just before its unclassified last word (the kernel's
inotify limits: a resource, not the disk), a wait that timed out after the error that says why
(an API not installed: not found, not unreachable), and the missing OCI hook binary named by
Docker or the runtime. Each public line is beside its address; each look-alike must read as it
did before."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

from gpunode.checks.decisive import running_finding
from gpunode.decisive import decisive_line
from gpunode.facts import LogFile
from gpunode.kb import load_kb

KB = load_kb()


def _pair(case_id: str, *evidence: dict[str, Any], platform: str = "generic",
          cluster: dict[str, Any] | None = None) -> tuple[str, str] | None:
    return top_pair(synthetic_case(case_id, list(evidence), platform=platform, healthy=False,
                                   cluster=cluster))


# -- a security context the image contradicts ---------------------------------------------

#: intel/CPU-Manager-for-Kubernetes#299: the kubelet's Failed event, the pod in
#: CreateContainerConfigError.
NON_ROOT = ('Error: container has runAsNonRoot and image will run as root (pod: '
            '"cmk-cluster-init-pod_cmk-namespace(fa1d4889-e80e-4506-ab08-40e0c50305cf)", '
            'container: cmk-cluster-init-pod)')


def test_a_security_context_the_image_contradicts_is_a_config_to_change() -> None:
    assert KB.class_of(NON_ROOT) == "error_config_invalid"
    state = {"kind": "pod-state", "component": "device-plugin",
             "state": "CreateContainerConfigError", "message": NON_ROOT}
    assert _pair("x-nonroot", state) == ("device-plugin", "error_config_invalid")


def test_the_same_state_with_a_missing_secret_stays_not_found() -> None:
    # look-alike: the same kubelet state, another reason in its line
    missing = 'Error: secret "registry-creds" not found'
    assert KB.class_of(missing) == "error_not_found"
    # and access refused in its own words stays a permission error
    assert KB.class_of("open /dev/nvidiactl: permission denied") == "error_permission_denied"


# -- a metrics input that repeats a series --------------------------------------------------

#: prometheus/node_exporter#753 (a textfile collector's file repeating its series), one error kept.
DUPLICATE = ('time="2017-12-06T06:15:36Z" level=error msg="error gathering metrics: 12 error(s) '
             'occurred:\\n* [from Gatherer #1] collected metric node_textfile_mtime label:<name:\\"file\\" '
             'value:\\"1.prom\\" > gauge:<value:1.512540839e+09 >  was collected before with the same '
             'name and label values"')


def test_a_series_collected_twice_is_an_invalid_input() -> None:
    assert KB.class_of(DUPLICATE) == "error_config_invalid"
    pod = {"kind": "pod-state", "component": "node-exporter", "state": "Running"}
    log = {"kind": "log", "component": "node-exporter", "text": DUPLICATE + "\n"}
    assert _pair("x-dup-series", pod, log) == ("node-exporter", "error_config_invalid")


def test_a_gather_that_fails_to_connect_stays_unreachable() -> None:
    # look-alike: the same gather error, the reason a refused connection
    refused = ('level=error msg="error gathering metrics: Get \\"http://127.0.0.1:9400/metrics\\": '
               'dial tcp 127.0.0.1:9400: connect: connection refused"')
    assert KB.class_of(refused) == "error_unreachable"


# -- the errno logged just before a running agent's last word ------------------------------

#: fluent/fluent-bit-docker-image#41: the tail input's inotify call, then the input it lost.
TAIL_EMFILE = (
    "[2021/08/27 03:45:37] [ info] [engine] started (pid=81)",
    "[2021/08/27 03:45:37] [error] [plugins/in_tail/tail_fs.c:180 errno=24] Too many open files",
    "[2021/08/27 03:45:37] [error] Failed initialize input tail.0",
)


def _agent_log(*lines: str) -> LogFile:
    return LogFile("logs/logging/fluent-bit-klw4f/fluent-bit.log", "logging", "fluent-bit-klw4f",
                   "fluent-bit", False, lines)


def test_the_errno_before_a_running_agent_s_last_error_is_its_reason() -> None:
    found = running_finding(KB, "logging-agent", [_agent_log(*TAIL_EMFILE)])
    assert found is not None and found.cause == "error_resource_exhausted"
    pod = {"kind": "pod-state", "component": "logging-agent", "state": "Running"}
    log = {"kind": "log", "component": "logging-agent", "text": "\n".join(TAIL_EMFILE) + "\n"}
    assert _pair("x-tail-emfile", pod, log) == ("logging-agent", "error_resource_exhausted")


def test_a_last_error_alone_or_with_its_own_class_stays_as_it_was() -> None:
    # look-alike: the same last word after a line that is no error reads as before
    alone = running_finding(KB, "logging-agent", [_agent_log(TAIL_EMFILE[0], TAIL_EMFILE[2])])
    assert alone is not None and alone.cause == "error_unclassified"
    # a last error with a class of its own keeps it, whatever stood before
    own = running_finding(KB, "logging-agent", [_agent_log(
        TAIL_EMFILE[1], "[2021/08/27 03:45:38] [error] [output:es:es.0] HTTP status=403 URI=/_bulk")])
    assert own is not None and own.cause == "error_permission_denied"


# -- a wait that timed out after the error that says why ------------------------------------

#: NVIDIA/gpu-operator#602: the operator lists an API its CRD did not install, then gives up.
CRD_MISSING = (
    "failed to get API group resources: unable to retrieve the complete list of server APIs: "
    "nvidia.com/v1alpha1: the server could not find the requested resource",
    "failed to wait for nvidia-driver-controller caches to sync: timed out waiting for cache to be "
    "synced for Kind *v1alpha1.NVIDIADriver",
)
#: apecloud/kubeblocks#5837: the same controller-runtime wait with no reason logged before it.
CACHE_TIMEOUT = ('2023-11-15T02:23:25.395Z\tERROR\tCould not wait for Cache to sync\t{"controller": '
                 '"componentdefinition", "error": "failed to wait for componentdefinition caches to sync: '
                 'timed out waiting for cache to be synced for Kind *v1alpha1.ComponentDefinition"}')


def test_a_timed_out_wait_is_read_through_to_the_error_before_it() -> None:
    found = decisive_line(CRD_MISSING, KB.class_of)
    assert found is not None and found.line_no == 1
    assert KB.class_of(found.message) == "error_not_found"


def test_a_timed_out_wait_with_no_reason_before_it_stays_unreachable() -> None:
    # look-alike: the wait alone, and after a line that is no error, reads as before
    for lines in ((CACHE_TIMEOUT,), ("2023-11-15T02:23:20.000Z\tINFO\tStarting Controller", CACHE_TIMEOUT)):
        found = decisive_line(lines, KB.class_of)
        assert found is not None and found.line == CACHE_TIMEOUT
        assert KB.class_of(found.message) == "error_unreachable"


# -- the OCI hook binary that is not there --------------------------------------------------

#: NVIDIA/nvidia-docker#958: Docker naming the runtime's prestart hook it cannot exec.
HOOK_GONE = ('docker: Error response from daemon: OCI runtime create failed: exec: '
             '"nvidia-container-runtime-hook": executable file not found in $PATH: unknown.')
#: NVIDIA/nvidia-docker#1190: the runtime itself missing, not its hook.
RUNTIME_GONE = ('docker: Error response from daemon: OCI runtime create failed: unable to retrieve OCI '
                'runtime error exec: "nvidia-container-runtime": executable file not found in $PATH: : '
                'unknown.')


def _gpu_pod_failed(message: str) -> tuple[str, str] | None:
    event = {"kind": "event", "object": {"kind": "Pod", "name": "cuda-smoke", "namespace": "default"},
             "type": "Warning", "reason": "Failed", "message": message}
    return _pair("x-hook-gone", event, platform="docker",
                 cluster={"driver_mode": "host", "components": [], "device_plugin": "static",
                          "runtime_class": False})


def test_the_hook_binary_docker_cannot_exec_is_the_missing_hook() -> None:
    assert _gpu_pod_failed(HOOK_GONE) == ("container-toolkit", "oci_hook_binary_missing")


def test_a_missing_runtime_binary_is_not_the_missing_hook() -> None:
    # look-alike: the runtime binary, not its hook, and a workload's own command
    assert _gpu_pod_failed(RUNTIME_GONE) != ("container-toolkit", "oci_hook_binary_missing")
    smi = ('docker: Error response from daemon: oci runtime error: container_linux.go:247: starting '
           'container process caused "exec: \\"nvidia-smi\\": executable file not found in $PATH".')
    assert _gpu_pod_failed(smi) != ("container-toolkit", "oci_hook_binary_missing")
