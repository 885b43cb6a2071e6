"""The host layer's own words: the container runtime's failures to run a container, in its
journal, the kubelet's and a pod's sandbox or create events, are the runtime's; a line that
names a facility of the kernel missing or refused names the kernel, whichever program met it.
Real shapes: containerd's CRI wrapping ('failed to get sandbox image ...: 403 Forbidden',
hcloud-talos/terraform-hcloud-talos#150), the CRI's relay of runc ('OCI runtime exec failed:
exec failed: cannot exec a container that has stopped: unknown', moby/moby#37009), CRI-O's
'Container creation error: ...', k3s's 'failed to find memory cgroup (v2)' (k3d-io/k3d#853).
Their look-alikes: a CNI's sandbox error (kmesh-net/kmesh#528), a hook's words in the same
journal record, a program's own 'too many open files'."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

from gpunode.catalog import load_catalog
from gpunode.checks.named import runtime_own_error


def _sandbox_event(message: str) -> list[dict[str, Any]]:
    return [
        {"kind": "workload", "name": "gpu-pod", "namespace": "default", "state": "ContainerCreating"},
        {"kind": "event", "object": {"kind": "Pod", "name": "gpu-pod", "namespace": "default"},
         "type": "Warning", "reason": "FailedCreatePodSandBox", "message": message},
    ]


def _journal(name: str, text: str) -> list[dict[str, Any]]:
    return [{"kind": "node-cmd", "name": name, "text": text}]


def test_the_runtime_pulling_its_own_sandbox_image_refused_is_the_runtime() -> None:
    message = ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to start '
               'sandbox "701dcc04": '
               'failed to get sandbox image "registry.k8s.io/pause:3.10": failed to pull image '
               '"registry.k8s.io/pause:3.10": failed to resolve reference "registry.k8s.io/pause:3.10": '
               "unexpected status from HEAD request to "
               "https://registry.k8s.io/v2/pause/manifests/3.10: 403 Forbidden")
    case = synthetic_case("pause-403", _sandbox_event(message), healthy=False)
    assert top_pair(case) == ("container-runtime", "error_permission_denied")


def test_a_cni_failing_the_sandbox_is_not_the_runtime() -> None:
    message = ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup '
               'network for sandbox '
               '"bcb925fd": plugin type="kmesh-cni" failed (add): netplugin failed: "Error: '
               'failed to get pod: '
               'Unauthorized"')
    assert not runtime_own_error(message)
    pair = top_pair(synthetic_case("cni-sandbox", _sandbox_event(message), healthy=False))
    assert pair is None or pair[0] != "container-runtime"


def test_an_exec_the_runtime_failed_in_the_kubelets_journal_is_the_runtime() -> None:
    text = ("Aug 20 10:01:02 ip-10-0-0-1 kubelet[2301]: E0820 10:01:02.123456    2301 remote_runtime.go:496] "
            '"ExecSync cmd from runtime service failed" err="rpc error: code = Unknown desc = '
            'failed to exec in '
            "container: failed to start exec: OCI runtime exec failed: exec failed: cannot "
            "exec a container that "
            'has stopped: unknown"\n')
    case = synthetic_case("exec-stopped", _journal("journal-kubelet.txt", text), healthy=False)
    assert top_pair(case) == ("container-runtime", "error_unclassified")


def test_crio_refused_writing_a_cgroup_file_is_the_runtime() -> None:
    text = ('Oct 24 06:37:22 node crio[1675]: time="2024-10-24 06:37:22.288118821Z" '
            'level=error msg="Container '
            "creation error: writing file `cpu.max`: Operation not permitted\\n\" id=9f18 "
            "name=/runtime.v1.RuntimeService/CreateContainer\n")
    case = synthetic_case("crio-eperm", _journal("journal-runtime.txt", text), healthy=False)
    assert top_pair(case) == ("container-runtime", "error_permission_denied")


def test_a_hooks_words_in_the_same_journal_record_are_the_hooks() -> None:
    text = ("Sep 08 08:58:07 node k3s[8174]:         nvidia-container-cli: initialization error: nvml error: "
            "driver not loaded: unknown\n"
            "Sep 08 08:58:07 node k3s[8174]:         rpc error: code = Unknown desc = failed "
            "to create containerd "
            "task: failed to create shim task: OCI runtime create failed: runc create failed: "
            "unable to start "
            "container process: error during container >\n")
    pair = top_pair(synthetic_case("hook-wrapped", _journal("journal-kubelet.txt", text), healthy=False))
    assert pair is None or pair[0] != "container-runtime"


def test_runtime_lines_that_report_no_failure_stay_healthy() -> None:
    text = ('Oct 24 06:37:24 node crio[1675]: time="2024-10-24 06:37:24.27Z" level=info '
            'msg="Created container '
            '9f18: default/gpu-pod/cuda" id=d8c2 name=/runtime.v1.RuntimeService/CreateContainer\n'
            'Oct 24 06:37:25 node containerd[812]: time="2024-10-24T06:37:25Z" level=info '
            'msg="StartContainer for '
            '\\"9f18\\" returns successfully"\n')
    assert top_pair(synthetic_case("runtime-fine", _journal("journal-runtime.txt", text))) is None


def test_a_kernel_facility_missing_or_refused_names_the_kernel() -> None:
    named = load_catalog().named_in
    assert named('time="2021-11-12T06:53:31Z" level=fatal msg="failed to find memory cgroup '
                 '(v2)"') == "kernel"
    assert named('you may need to add "cgroup_memory=1 cgroup_enable=memory" to your linux '
                 'cmdline') == "kernel"
    assert named("Error: ENOSPC: System limit for number of file watchers reached, watch '/app'") == "kernel"
    assert named("/usr/bin/crio: error while loading shared libraries: cannot make segment writable for "
                 "relocation: Permission denied") == "kernel"


def test_a_programs_own_limits_do_not_name_the_kernel() -> None:
    named = load_catalog().named_in
    assert named("failed to run Kubelet: inotify_init: too many open files") != "kernel"
    assert named("failed to create fsnotify watcher: too many open files") != "kernel"
    assert named("memory cgroup out of memory: Killed process 4242 (python)") != "kernel"
