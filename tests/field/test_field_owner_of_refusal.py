"""Which component owns a failure that many operands show: the controller whose one setting
renders them all, and the lowest failing dependency of components that only wait.

- One taint that two or more of an operator's operand DaemonSets do not tolerate is the
  operator's (its policy's one toleration list: ClusterPolicy ``daemonsets.tolerations``),
  operands_untolerated_taint, not the first operand's taint_not_tolerated (GPU Operator
  troubleshooting, "No GPU driver or operand pods running"; NVIDIA/gpu-operator#26,
  "Our GPU nodes are tainted with dedicated=gpu:NoSchedule", every operand kept off). One
  operand refused while the others tolerate the taint stays that operand's
  (NVIDIA/gpu-operator#156: only the validation pod lacked the toleration).
- Admission refusing the pods an operator's operand DaemonSet creates (FailedCreate, 'pods
  "..." is forbidden: violates PodSecurity') is the operator's namespace setting (Network
  Operator docs, "Deployment with Pod Security Admission"), in the line's class.
- Operands that only wait in Init beside a driver pod that restarts are the driver's (GPU
  Operator troubleshooting, "GPU Operator pods are stuck in Init"); an operand failing for
  a reason of its own beside it stays its own (test_field_recovered_dependency.py).
"""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair


def _tainted(key: str, value: str) -> dict[str, Any]:
    return {"kind": "node-taints", "taints": [{"key": key, "value": value, "effect": "NoSchedule"}]}


def test_a_taint_no_operand_tolerates_is_the_operators() -> None:
    case = synthetic_case("x-ow-taint-all", [_tainted("dedicated", "gpu")], platform="ubuntu", healthy=False)
    assert top_pair(case) == ("gpu-operator", "operands_untolerated_taint")


def test_one_operand_refusing_the_gpu_taint_stays_its_own() -> None:
    evidence = [_tainted("nvidia.com/gpu", "true"),
                {"kind": "daemonset-tolerations", "component": "dcgm-exporter",
                 "tolerations": [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists",
                                  "effect": "NoSchedule"}]},
                {"kind": "pod-missing", "component": "dcgm-exporter"}]
    case = synthetic_case("x-ow-taint-one", evidence, platform="ubuntu", healthy=False)
    assert top_pair(case) == ("dcgm-exporter", "taint_not_tolerated")


def test_the_taint_the_operands_tolerate_stays_healthy() -> None:
    case = synthetic_case("x-ow-taint-gpu", [_tainted("nvidia.com/gpu", "present")], platform="ubuntu")
    assert top_pair(case) is None


#: Network Operator docs, Advanced Configurations, "Network Operator Deployment with Pod
#: Security Admission" (baseline enforced on its namespace).
FORBIDDEN = ('Error creating: pods "mofed-ubuntu22.04-ds-rwmgs" is forbidden: violates PodSecurity '
             '"baseline:latest": host namespaces (hostNetwork=true), hostPath volumes (volumes '
             '"run-mlnx-ofed", "etc-network", "host-etc", "host-usr", "host-udev"), privileged (container '
             '"mofed-container" must not set securityContext.privileged=true)')


def _mofed_event(message: str) -> list[dict[str, Any]]:
    return [{"kind": "event", "component": "ofed", "object": {"kind": "DaemonSet"}, "type": "Warning",
             "reason": "FailedCreate", "message": message}, {"kind": "pod-missing", "component": "ofed"}]


def test_admission_refusing_an_operands_pods_is_the_operators() -> None:
    case = synthetic_case("x-ow-psa", _mofed_event(FORBIDDEN), platform="ubuntu", healthy=False)
    assert top_pair(case) == ("network-operator", "error_permission_denied")


def test_another_failedcreate_stays_the_operands() -> None:
    quota = ('Error creating: pods "mofed-ubuntu22.04-ds-rwmgs" exceeded quota: compute-resources, '
             'requested: cpu=2, used: cpu=8, limited: cpu=8')
    case = synthetic_case("x-ow-quota", _mofed_event(quota), platform="ubuntu", healthy=False)
    top = top_pair(case)
    assert top is not None and top[0] != "network-operator"


def _waiting_beside(driver: dict[str, Any]) -> list[dict[str, Any]]:
    waiting = [{"kind": "pod-state", "component": c, "state": "Init:0/1"}
               for c in ("gfd", "container-toolkit", "dcgm-exporter", "device-plugin")]
    own = {"kind": "pod-state", "component": "driver", "container": "nvidia-driver-ctr", **driver}
    return [own, *waiting]


def test_operands_waiting_in_init_are_the_restarting_drivers() -> None:
    driver = {"state": "Running", "restarts": 3, "last_reason": "Error"}
    case = synthetic_case("x-ow-init-wait", _waiting_beside(driver), platform="ubuntu", healthy=False)
    assert top_pair(case) == ("driver", "restarting")
