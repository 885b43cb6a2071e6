"""The VFIO manager's own program, vfio-manage, named in another component's error: the
kubelet's failed exec of the manager's preStop hook is the VFIO manager's failure (its
``named_by`` in components.toml), of the class of the line's own words.

Source: NVIDIA/gpu-operator#2711 (the state-vfio-manager DaemonSet's preStop hook listed
"vfio-manage unbind --all" as one executable; the kubelet's exec failed with "executable file
not found in $PATH"); the operator's vfio-manager ConfigMap ships vfio-manage.sh. Look-alikes:
the kubelet's routine line about the nvidia-vfio-manager pod, and a failed exec of another
program, name no VFIO manager."""

from __future__ import annotations

from case import synthetic_case
from scoreboard import top_pair

LABELS = {"kind": "node-labels", "labels": {"nvidia.com/gpu.workload.config": "vm-passthrough"}}
RUNNING = {"kind": "pod-state", "component": "vfio-manager", "state": "Running"}
HOOK = ('Mar 03 10:12:40 gpu-wk-01 kubelet[1201]: E0303 10:12:40.118201 1201 handlers.go:78] '
        '"Exec lifecycle hook for Container in Pod failed" '
        'err="rpc error: exec: \\"vfio-manage unbind --all\\": executable file not found in $PATH" '
        'containerName="nvidia-vfio-manager"\n')
ROUTINE = ('Mar 03 10:12:40 gpu-wk-01 kubelet[1201]: I0303 10:12:40.118201 1201 kubelet.go:2430] '
           '"SyncLoop (PLEG): event for pod" pod="gpu-operator/nvidia-vfio-manager-7xk2p"\n')
OTHER = ('Mar 03 10:12:40 gpu-wk-01 kubelet[1201]: E0303 10:12:40.118201 1201 handlers.go:78] '
         '"Exec lifecycle hook for Container in Pod failed" '
         'err="rpc error: exec: \\"drain-manage --all\\": executable file not found in $PATH" '
         'containerName="app"\n')


def _pair(case_id: str, journal: str) -> tuple[str, str] | None:
    ev = [LABELS, RUNNING, {"kind": "node-cmd", "name": "journal-kubelet.txt", "text": journal}]
    return top_pair(synthetic_case(case_id, ev))


def test_the_kubelet_failing_to_exec_vfio_manage_is_the_vfio_manager() -> None:
    assert _pair("x-vfio-manage-hook", HOOK) == ("vfio-manager", "error_not_found")


def test_a_routine_line_about_its_pod_and_another_program_are_not_the_vfio_manager() -> None:
    assert _pair("x-vfio-manage-routine", ROUTINE) is None
    assert (_pair("x-vfio-manage-other", OTHER) or ("", ""))[0] != "vfio-manager"
