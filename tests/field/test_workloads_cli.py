"""GPU workloads are evidence, through the command line (its ``main`` in this process,
tests/inprocess.py: exit codes and output are all these cases read): a cluster whose GPU
workload fails never exits 0 from ``diagnose``, even when no stack root cause is found, and
the report names the workload and its own error line; one whose GPU pods only wait to be
scheduled (a full cluster) stays healthy. Bundles are built from the field corpus."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import msgspec
import pytest
from builder import build_case
from case import CASES_DIR, load_case

from inprocess import run_cli

#: The kubelet's refusal of a container whose securityContext says runAsNonRoot while its
#: image runs as root (pkg/kubelet/kuberuntime/security_context_others.go), as its event shows it.
_RUN_AS_NON_ROOT = (
    'Error: container has runAsNonRoot and image will run as root '
    '(pod: "cuda-vectoradd_default(7c1e5f0a-3b9d-4c62-9a51-2f0e8d4b6a17)", container: cuda-vectoradd)'
)


def _diagnose(bundle: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("diagnose", "--from", str(bundle), *args,
                   env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"})


def _bundle(case_id: str, tmp_path: Path) -> Path:
    case = load_case(CASES_DIR / f"{case_id}.yaml")
    return build_case(case, tmp_path / case.id)


@pytest.mark.slow
def test_a_failing_gpu_workload_without_a_stack_cause_exits_1_and_is_named(tmp_path: Path) -> None:
    """The kubelet refuses to start a GPU pod's container for its own security context
    (runAsNonRoot with an image that runs as root), words that name no stack layer: no
    stack component is found at fault, yet the workload failed."""
    case = load_case(CASES_DIR / "gpu-operator-docs-v26-3-1-hostusers-cdi-hook.yaml")
    (event,) = case.evidence
    refused = msgspec.structs.replace(event, message=_RUN_AS_NON_ROOT)
    bundle = build_case(msgspec.structs.replace(case, evidence=[refused]), tmp_path / case.id)
    table = _diagnose(bundle)
    assert table.returncode == 1, table.stderr
    assert "No stack root cause found on 2 GPU nodes, but 1 GPU workload failing on 1 node" in table.stdout
    assert "✗ gpu-wk-01 · default/cuda-vectoradd" in table.stdout
    assert "container has runAsNonRoot and image will run as root" in table.stdout
    report = _diagnose(bundle, "-o", "json")
    assert report.returncode == 1
    data = json.loads(report.stdout)
    assert not data["cluster"]["root_causes"] and not any(n["root_causes"] for n in data["nodes"])
    (hit,) = data["gpu_workloads"]
    assert (hit["node"], hit["namespace"], hit["name"], hit["failing"]) == (
        "gpu-wk-01",
        "default",
        "cuda-vectoradd",
        True,
    )
    assert "runAsNonRoot" in hit["message"] and "reason=Failed" in hit["source"]
    assert hit["component"] is None and hit["root_cause"] is None
    markdown = _diagnose(bundle, "-o", "markdown")
    assert markdown.returncode == 1 and "| gpu-wk-01 | default/cuda-vectoradd |" in markdown.stdout


def test_a_gpu_workload_the_kubelet_refused_leads_to_the_kubelet(tmp_path: Path) -> None:
    """The kubelet's device manager refused a GPU pod (its stale record of allocated GPUs):
    the refusal is the kubelet's own, the node's root cause."""
    bundle = _bundle("kubernetes-130145-devicemanager-stale-allocated-gpus", tmp_path)
    report = _diagnose(bundle, "-o", "json")
    assert report.returncode == 1
    (hit,) = json.loads(report.stdout)["gpu_workloads"]
    assert "Available: 0" in hit["message"] and "UnexpectedAdmissionError" in hit["source"]
    assert (hit["name"], hit["component"], hit["root_cause"]) == ("gpu-job-worker-0", "kubelet", "kubelet")


def test_a_workload_leads_down_to_the_stack_root_cause(tmp_path: Path) -> None:
    """The device plugin's admission error on an A10G whose GSP firmware stopped answering:
    the workload names the device plugin, which is blocked by the driver's root cause."""
    bundle = _bundle("amazon-eks-ami-1523-gsp-g5-unknown-error", tmp_path)
    report = _diagnose(bundle, "-o", "json")
    assert report.returncode == 1
    (hit,) = json.loads(report.stdout)["gpu_workloads"]
    assert (hit["name"], hit["component"], hit["root_cause"]) == ("reranker-a10", "device-plugin", "driver")


def test_gpu_workloads_that_only_wait_to_be_scheduled_stay_healthy(tmp_path: Path) -> None:
    """A notebook asking for more GPUs than a node has stays Pending: the stack is healthy."""
    bundle = _bundle("kubeflow-4954-eight-gpus-across-two-four-gpu-nodes", tmp_path)
    done = _diagnose(bundle, "-o", "json")
    assert done.returncode == 0, done.stdout[-2000:]
    assert not any(w["failing"] for w in json.loads(done.stdout)["gpu_workloads"])
