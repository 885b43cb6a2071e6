"""The container toolkit's GPU injection read from the layer an error names: the NVIDIA runtime
that cannot find its own prestart hook binary (oci_hook_binary_missing), and glibc's loader
refusing a library that Apptainer/Singularity's ``--nv`` bound from the host into
``/.singularity.d/libs`` (the injection put a host library into an older image:
container-toolkit, error_version_mismatch). Look-alikes: the same glibc form for a program of
the image itself, or for Apptainer's own fakeroot helper in that directory, is no GPU
injection. Each line from a public report (its address beside it)."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import diagnose_case, top_root_cause

from gpunode.explain import explain_lines
from gpunode.kb import load_kb

#: NVIDIA/nvidia-docker#1714 (title, after installing nvidia-docker2 over an older one) in the
#: runtime's own form, internal/modifier/stable.go of NVIDIA/nvidia-container-toolkit: the hook is
#: looked up on the runtime's PATH before the spec is handed to runc.
HOOK_1714 = ("failed to create shim task: OCI runtime create failed: could not apply required modification "
             "to OCI specification: error modifying OCI spec: failed to locate NVIDIA Container Runtime "
             "Hook: pattern nvidia-container-runtime-hook not found: unknown")
#: pBFSLab/DeepPrep#235: Singularity with the GPU on an Ubuntu 24.04 host, an older image.
DEEPPREP_235 = ("/opt/workbench/bin_linux64/../exe_linux64/wb_command: /lib/x86_64-linux-gnu/libc.so.6: "
                "version `GLIBC_2.38' not found (required by /.singularity.d/libs/libGLdispatch.so.0)")
#: PennLINC/qsiprep#536: the maintainers' reading, --nv maps the host's libGL into the container.
QSIPREP_536 = ("eddy_cuda: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.34' not found "
               "(required by /.singularity.d/libs/libGLX.so.0)")
#: apptainer/apptainer#2103: fakeroot's helper in the same directory, a build under --fakeroot.
FAKED_2103 = ("/.singularity.d/libs/faked: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.34' not found "
              "(required by /.singularity.d/libs/faked)")
#: facebookresearch/CompilerGym#791: a program's own binary built for a newer glibc.
OWN_BINARY_791 = ("./compiler_gym-llvm-service: /lib64/libc.so.6: version `GLIBC_2.25' not found "
                  "(required by ./compiler_gym-llvm-service)")


def _case(evidence: list[dict[str, Any]]) -> Case:
    raw = {"id": "x-injection", "source": "https://example.org/x", "title": "t", "platform": "ubuntu",
           "cluster": {"driver_mode": "host"}, "evidence": evidence, "expect": {"healthy": True}}
    return msgspec.convert(raw, Case)


def _logged(line: str) -> Case:
    return _case([{"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
                   "text": f"starting\n{line}\n"}])


def _top(case: Case) -> tuple[str, str] | None:
    top = top_root_cause(diagnose_case(case), case.node)
    return (top.component, top.cause) if top else None


def test_the_runtime_that_cannot_locate_its_hook_binary_is_the_missing_hook() -> None:
    case = _case([
        {"kind": "workload", "name": "job-0", "namespace": "default", "state": "RunContainerError",
         "message": HOOK_1714},
        {"kind": "event", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
         "type": "Warning", "reason": "Failed", "message": f"Error: {HOOK_1714}"}])
    assert _top(case) == ("container-toolkit", "oci_hook_binary_missing")


def test_explain_names_the_missing_hook_from_the_runtime_s_line() -> None:
    explanation = explain_lines([HOOK_1714], load_kb())
    assert explanation.matches and explanation.matches[0].cause.code == "oci_hook_binary_missing"


def test_glibc_refusing_a_library_bound_by_nv_is_the_injection() -> None:
    for line in (DEEPPREP_235, QSIPREP_536):
        assert _top(_logged(line)) == ("container-toolkit", "error_version_mismatch"), line


def test_glibc_refusing_the_image_s_own_programs_is_no_injection() -> None:
    # healthy look-alikes: Apptainer's fakeroot helper, a program's own binary
    for line in (FAKED_2103, OWN_BINARY_791):
        top = _top(_logged(line))
        assert top is None or top[0] != "container-toolkit", line


#: The GPU Operator's own record (controllers/state_manager.go, getWorkloadConfig's error logged by
#: labelGPUNodes) for a node labelled with a workload it does not know; the values it knows are
#: container, vm-passthrough and vm-vgpu (DaoCloud's GPU-for-VMs guide,
#: https://raw.githubusercontent.com/DaoCloud/DaoCloud-docs/main/docs/zh/docs/virtnest/gpu/vm-gpu.md,
#: and the operator's gpuStateLabels), read only while sandbox workloads are on.
def _rejected(value: str) -> str:
    return ('{"level":"info","ts":1762424337.9,"logger":"controllers.ClusterPolicy","msg":"WARNING: failed '
            'to get GPU workload config for node; using default","NodeName":"gpu-wk-01",'
            '"SandboxEnabled":true,'
            f'"Error":"invalid GPU workload config: {value}","defaultGPUWorkloadConfig":"container"}}')


def _labelled(value: str, log: str | None) -> Case:
    label = {"nvidia.com/gpu.workload.config": value}
    evidence: list[dict[str, Any]] = [{"kind": "node-labels", "labels": label}]
    if log is not None:
        evidence.append({"kind": "log", "component": "gpu-operator", "text": log + "\n"})
    raw = {"id": "x-workload-config", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "evidence": evidence, "expect": {"healthy": True}}
    return msgspec.convert(raw, Case)


def _cluster_top(case: Case) -> tuple[str, str] | None:
    roots = diagnose_case(case).cluster.root_causes
    return (roots[0].component, roots[0].cause) if roots else None


def test_a_workload_label_the_operator_rejects_is_its_configuration() -> None:
    for value in ("kata", "vm"):
        assert _cluster_top(_labelled(value, _rejected(value))) == ("gpu-operator", "error_config_invalid")


def test_a_workload_label_the_operator_does_not_read_stays_healthy() -> None:
    # sandbox workloads off (the ClusterPolicy has none, the operator logs no rejection): the
    # operator ignores the label; a known value is no configuration error either
    assert _cluster_top(_labelled("kata", None)) is None
    assert _cluster_top(_labelled("container", None)) is None


#: containerd's CRI config validation (kubernetes/kubernetes#100992 after the bump to containerd
#: 1.5; NVIDIA/k8s-device-plugin#1145 with a toolkit drop-in), with and without the 'invalid plugin
#: config:' a relaying line may drop.
CRI_100992 = ('time="2021-04-10T20:32:25.933005839Z" level=warning msg="failed to load plugin '
              'io.containerd.grpc.v1.cri" error="invalid plugin config: no corresponding runtime configured '
              'in `runtimes` for `default_runtime_name`"')
CRI_1145_BARE = ('failed to load plugin io.containerd.grpc.v1.cri: no corresponding runtime configured in '
                 '`containerd.runtimes` for `containerd` `default_runtime_name = "runc"`')
#: containerd's routine warning on a host whose root is not btrfs: no configuration error.
BTRFS = ('level=info msg="skip loading plugin \\"io.containerd.snapshotter.v1.btrfs\\"..." error="path '
         '/var/lib/containerd/io.containerd.snapshotter.v1.btrfs (ext4) must be a btrfs filesystem to be '
         'used with the btrfs snapshotter: skip plugin" type=io.containerd.snapshotter.v1')


def test_containerd_s_default_runtime_without_its_table_is_its_configuration() -> None:
    kb = load_kb()
    for line in (CRI_100992, CRI_1145_BARE):
        assert kb.line_class(line).code == "error_config_invalid", line
    assert kb.line_class(BTRFS).code != "error_config_invalid"


def test_a_containerd_journal_refusing_its_cri_config_is_the_runtime_s_configuration() -> None:
    not_ready = {"kind": "node-condition", "type": "Ready", "status": "False", "reason": "KubeletNotReady"}
    journal = {"kind": "node-cmd", "name": "journal-runtime.txt", "text": CRI_1145_BARE + "\n"}
    case = _case([journal, not_ready])
    assert _top(case) == ("container-runtime", "error_config_invalid")
