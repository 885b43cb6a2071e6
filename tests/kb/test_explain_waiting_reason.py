"""A container's waiting reason as kubectl prints it is quoted by ``explain``, in the cause it names.

The kubelet's waiting reasons carry no error word: ImagePullBackOff and ErrImagePull (a pull it
gave up on: image_pull_failed), CrashLoopBackOff (crash_loop), CreateContainerConfigError,
CreateContainerError and RunContainerError (container_create_failed); an init container's with
"Init:". A paste of only the STATUS column, or of ``kubectl get pods`` rows, was answered with
silence. Read where kubectl prints the reason, the whole line or the STATUS column after NAME
and READY: https://github.com/NVIDIA/gpu-operator/issues/487 ("nvidia-dcgm-exporter-cv6rg 0/1
CrashLoopBackOff 495 (32s ago) 42h"), https://github.com/NVIDIA/gpu-operator/issues/401 (with
``-A``'s NAMESPACE first), https://github.com/xilongj/k8s_2021/blob/HEAD/support/error.md
("coredns-7f8897b78c-gvfh7 0/1 ImagePullBackOff 0 2m28s", and ``get all``'s "pod/" name),
https://github.com/NVIDIA/gpu-operator/issues/258 (Init:CrashLoopBackOff),
https://github.com/NVIDIA/gpu-operator/issues/388 (ErrImagePull),
https://github.com/eclipse-che/che/issues/21765 (CreateContainerError). A row Running or
Completed (https://github.com/NVIDIA/gpu-operator/issues/161) and a reason named inside a
sentence are no such statement. The reading changes no severity."""

from __future__ import annotations

import pytest

from gpunode.decisive import severity
from gpunode.explain import explain_lines
from gpunode.kb import load_kb

_STATED = [
    ("nvidia-dcgm-exporter-cv6rg                            0/1     CrashLoopBackOff   495 (32s ago)   42h",
     "crash_loop"),
    ("gpu-operator   gpu-operator-node-feature-discovery-worker-x7jj5              0/1     CrashLoopBackOff"
     "   6 (2m16s ago)   14m", "crash_loop"),
    ("coredns-7f8897b78c-gvfh7   0/1     ImagePullBackOff   0          2m28s", "image_pull_failed"),
    ("pod/coredns-7f8897b78c-gvfh7   0/1     ImagePullBackOff   0          59s", "image_pull_failed"),
    ("Init:CrashLoopBackOff", "crash_loop"),
    ("ErrImagePull", "image_pull_failed"),
    ("CreateContainerError", "container_create_failed"),
]

_QUIET = [
    "gpu-operator-resources   nvidia-device-plugin-validation                               0/1"
    "     Completed   0          44h",
    "prometheus               prometheus-kube-prometheus-operator-8cfb4bbd6-xhhjd           1/1"
    "     Running     1          44h",
    "the image-puller pod is stuck with the CreateContainerError status",
]


@pytest.mark.parametrize(("line", "cause"), _STATED)
def test_a_waiting_reason_is_the_decisive_line_in_the_cause_it_names(line: str, cause: str) -> None:
    found = explain_lines(["NAME   READY   STATUS   RESTARTS   AGE", line], load_kb())
    assert found.decisive is not None and found.decisive.text == line
    assert found.decisive_class == cause


@pytest.mark.parametrize(("line", "cause"), _STATED)
def test_a_waiting_reason_changes_no_severity(line: str, cause: str) -> None:
    assert severity(line) == 0


@pytest.mark.parametrize("line", _QUIET)
def test_a_healthy_row_or_a_reason_in_a_sentence_stays_quiet(line: str) -> None:
    found = explain_lines(["NAME   READY   STATUS   RESTARTS   AGE", line], load_kb())
    assert found.decisive is None and found.decisive_class is None
