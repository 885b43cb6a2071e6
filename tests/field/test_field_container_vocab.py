"""The container stack's own error words, read to the layer they name wherever a GPU pod's event,
its waiting reason, a docker run's stderr or the runtime's journal shows them.

- nvidia-container-cli refusing a privilege step (libnvidia-container src/cli/configure.c prints
  'permission error: %s'; nvc_init's 'privilege change failed', its read of
  /proc/sys/kernel/overflowuid and cgroup v2's bpf_prog_query are the same refusal later) is the
  toolkit's, in the permission class: NVIDIA/libnvidia-container#154 (LXC on Proxmox),
  NVIDIA/nvidia-container-toolkit#678, #102 (unRAID). A refused eBPF program *load*
  (NVIDIA/nvidia-container-toolkit#1482) is the toolkit release's cgroup error.
- The engine's nvidia runtime binary missing ('fork/exec /usr/bin/nvidia-container-runtime',
  NVIDIA/nvidia-docker#1121; 'exec: "nvidia-container-runtime": executable file not found',
  NVIDIA/nvidia-docker#1269) is the toolkit's; CRI-O's runtime validation of the same ("invalid
  runtime_path for runtime '%s': %w", cri-o pkg/config) in its journal is
  ``crio_runtime_path_missing``; the hook's own binary (NVIDIA/nvidia-docker#958, and the shim's
  'fork/exec .../nvidia-container-runtime-hook') is ``oci_hook_binary_missing``, as is
  nvidia-container-cli, which nerdctl's --gpus and gVisor's nvproxy look up on their PATH.
- The kubelet's own lookup of a missing class ('runtimeclass.node.k8s.io "nvidia" not found',
  pkg/kubelet/runtimeclass). CRI-O's 'failed to find runtime handler nvidia' and dockershim's
  'RuntimeHandler "nvidia" not supported' alone are not read: there a hook or the default runtime,
  not a handler, injects the GPUs (NVIDIA/gpu-operator#1298, sgl-project/sglang#5515).
- The CLI's detection step relaying NVML's GPU_IS_LOST in its own lower case: the GPU, not the
  driver.
"""

from __future__ import annotations

from typing import Any

import pytest
from case import synthetic_case
from scoreboard import top_pair

_RELAY = ("failed to create shim task: OCI runtime create failed: runc create failed: unable to start "
          "container process: error during container init: error running hook #0: error running hook: "
          "exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n")

#: NVIDIA/libnvidia-container#154 (Debian in an LXC container on Proxmox).
LXC_154 = ("docker: Error response from daemon: OCI runtime create failed: container_linux.go:380: starting "
           "container process caused: process_linux.go:545: container init caused: Running hook #0:: error "
           "running hook: exit status 1, stdout: , stderr: nvidia-container-cli: mount error: failed to add "
           "device rules: unable to find any existing device filters attached to the cgroup: "
           "bpf_prog_query(BPF_CGROUP_DEVICE) failed: operation not permitted: unknown.")
#: NVIDIA/nvidia-container-toolkit#678.
TOOLKIT_678 = ("docker: Error response from daemon: failed to create task for container: " + _RELAY
               + "nvidia-container-cli: mount error: failed to add device rules: unable to find any existing "
               "device filters attached to the cgroup: bpf_prog_query(BPF_CGROUP_DEVICE) failed: operation "
               "not permitted: unknown.")
#: NVIDIA/nvidia-container-toolkit#102 (unRAID).
TOOLKIT_102 = ("docker: Error response from daemon: " + _RELAY.replace("#0", "#1")
               + "nvidia-container-cli: initialization error: open failed: /proc/sys/kernel/overflowuid: "
               "permission denied: unknown.")
#: NVIDIA/nvidia-container-toolkit#1482: the kernel refusing the program the CLI built.
TOOLKIT_1482 = ("docker: Error response from daemon: " + _RELAY
                + "nvidia-container-cli: mount error: failed to add device rules: unable to generate new "
                "device filter program from existing programs: unable to create new device filters program: "
                "load program: invalid argument: 0: (69) r2 = *(u16 *)(r1 +0)")
#: NVIDIA/nvidia-docker#1121.
DOCKER_1121 = ("docker: Error response from daemon: OCI runtime create failed: unable to retrieve OCI "
               "runtime error (open /run/containerd/io.containerd.runtime.v1.linux/moby/1038f5ace29c/"
               "log.json: no such file or directory): fork/exec /usr/bin/nvidia-container-runtime: no such "
               "file or directory: unknown.")
#: NVIDIA/nvidia-docker#1269.
DOCKER_1269 = ("ERROR: for plex  Cannot start service plex: OCI runtime create failed: unable to "
               "retrieve OCI runtime error (open /run/containerd/io.containerd.runtime.v1.linux/moby/"
               "7a5db13e7762/log.json: no such file or directory): exec: \"nvidia-container-runtime\": "
               "executable file not found in $PATH: unknown")
#: NVIDIA/nvidia-docker#958: the hook's binary, not the runtime's.
DOCKER_958 = ("docker: Error response from daemon: OCI runtime create failed: exec: "
              "\"nvidia-container-runtime-hook\": executable file not found in $PATH: unknown.")


def _failed(message: str, reason: str = "Failed") -> list[dict[str, Any]]:
    return [{"kind": "workload", "name": "train-0", "namespace": "default", "container": "main",
             "resources": {"limits": {"nvidia.com/gpu": "1"}}, "state": "RunContainerError"},
            {"kind": "event", "object": {"kind": "Pod", "name": "train-0", "namespace": "default"},
             "type": "Warning", "reason": reason, "message": message + "\n"}]


def _journal(text: str) -> list[dict[str, Any]]:
    return [{"kind": "node-cmd", "name": "journal-runtime.txt", "text": text + "\n"}]


@pytest.mark.parametrize(("line", "pair"), [
    (LXC_154, ("container-toolkit", "error_permission_denied")),
    (TOOLKIT_678, ("container-toolkit", "error_permission_denied")),
    (TOOLKIT_102, ("container-toolkit", "error_permission_denied")),
    ("nvidia-container-cli: permission error: capability change failed: operation not permitted: unknown",
     ("container-toolkit", "error_permission_denied")),
    (TOOLKIT_1482, ("container-toolkit", "container_cli_cgroup_error")),
    (DOCKER_1121, ("container-toolkit", "error_file_state")),
    (DOCKER_1269, ("container-toolkit", "error_not_found")),
    (DOCKER_958, ("container-toolkit", "oci_hook_binary_missing")),
    ("OCI runtime create failed: runc create failed: unable to start container process: error during "
     "container init: error running hook #0: fork/exec /usr/bin/nvidia-container-runtime-hook: no such file "
     "or directory: unknown", ("container-toolkit", "oci_hook_binary_missing")),
    (_RELAY + "nvidia-container-cli: detection error: nvml error: gpu is lost: unknown",
     ("gpu-hardware", "gpu_fallen_off_bus")),
    # the CLI every GPU hook path runs, not on the engine's PATH: nerdctl's --gpus
    # (containerd/nerdctl#2716) and gVisor's nvproxy (NVIDIA/nvidia-container-toolkit#1880)
    ('FATA[0000] exec: "nvidia-container-cli": executable file not found in $PATH',
     ("container-toolkit", "oci_hook_binary_missing")),
    ('failed to locate nvidia-container-cli in PATH: exec: "nvidia-container-cli": executable file not '
     "found in $PATH", ("container-toolkit", "oci_hook_binary_missing")),
    # look-alike: the CLI found and run, a library it loads missing
    (_RELAY + "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot "
     "open shared object file: no such file or directory: unknown",
     ("container-toolkit", "container_cli_no_driver_libs")),
])
def test_a_failed_event_reads_the_layer_its_words_name(line: str, pair: tuple[str, str]) -> None:
    assert top_pair(synthetic_case("x-container-words", _failed(line), healthy=False)) == pair


@pytest.mark.parametrize(("line", "pair"), [
    ('Failed to create pod sandbox: runtimeclass.node.k8s.io "nvidia" not found',
     ("container-toolkit", "nvidia_runtimeclass_missing")),
])
def test_a_sandbox_refused_for_the_nvidia_class(line: str, pair: tuple[str, str]) -> None:
    case = synthetic_case("x-container-handler", _failed(line, "FailedCreatePodSandBox"), healthy=False)
    assert top_pair(case) == pair


def test_cri_o_refusing_the_nvidia_runtime_path() -> None:
    line = ('level=fatal msg="validating runtime config: runtime validation: invalid runtime_path for '
            'runtime \'nvidia\': stat /usr/local/nvidia/toolkit/nvidia-container-runtime: no such file or '
            'directory"')
    case = synthetic_case("x-crio-runtime-path", _journal(line), healthy=False)
    assert top_pair(case) == ("container-toolkit", "crio_runtime_path_missing")


def test_a_healthy_runtime_journal_stays_silent() -> None:
    text = ('level=info msg="Found valid runtime \\"nvidia\\" for runtime_path '
            '\\"/usr/local/nvidia/toolkit/nvidia-container-runtime\\""\n'
            'level=info msg="Using runtime handler nvidia version 1.17.0"\n'
            'level=info msg="loading plugin \\"io.containerd.grpc.v1.cri\\"..." type=io.containerd.grpc.v1')
    assert top_pair(synthetic_case("x-runtime-journal-ok", _journal(text))) is None
