"""The upper layers' public line audit (tests/field/public_lines_upper.py): every line, placed
where its report shows it, is diagnosed as the scoreboard does and pasted into ``gpunode
explain``. What the engine gets right is asserted; what it still misses is a strict expected
failure with the reason, so that a fix is noticed."""

from __future__ import annotations

import pytest
from case import synthetic_case
from public_lines_upper import LINES, PublicLine
from scoreboard import explained, top_pair

#: Lines whose top root cause is still not the one expected, and why.
_PAIR_MISSES = {
    "rdma-shared-init-no-lsmod": "builder: the RDMA shared device plugin's pod has no init container to "
                                 "place the line in",
    "perftest-create-qp": "perftest's 'Unable to create QP' names no layer; the thread's answer (IPC_LOCK, "
                          "the locked-memory limit) is not in the line",
    "nccl-create-qp": "'Call to ibv_create_qp failed' carries no errno: the GPUDirect RDMA path is named, "
                      "the exhausted locked memory the thread points to is not",
    "volcano-plugin-list-watch-eof": "builder: a workload refused at admission gets the default message "
                                     "naming nvidia.com/gpu, so NVIDIA's plugin is blamed",
    "plugin-kubelet-sock-missing": "a missing kubelet.sock is the kubelet's (k3s without device plugins) or "
                                   "the plugin's hostPath: the kubelet's root directory is not read",
    "plugin-registration-unimplemented": "a kubelet that does not serve deviceplugin.Registration (too old "
                                         "or gated off) is not read from the plugin's line",
}
#: Lines whose class ``gpunode explain`` gives differs from the one expected, and why.
_CLASS_MISSES = {
    "perftest-create-qp": "perftest's words fall in no class",
    "nccl-create-qp": "no errno: the line falls in no class",
    "plugin-registration-unimplemented": "gRPC's Unimplemented is read as no class, not a version mismatch",
}


def _params(misses: dict[str, str]) -> list[object]:
    return [pytest.param(p, id=p.key, marks=pytest.mark.xfail(strict=True, reason=misses[p.key]))
            if p.key in misses else pytest.param(p, id=p.key) for p in LINES]


@pytest.mark.parametrize("line", _params(_PAIR_MISSES))
def test_the_line_where_it_appeared_names_its_component_and_cause(line: PublicLine) -> None:
    case = synthetic_case(line.key, [dict(e) for e in line.evidence], platform=line.platform,
                          healthy=False, cluster=line.cluster or None)
    assert top_pair(case) == (line.component, line.cause), line.source


@pytest.mark.parametrize("line", _params(_CLASS_MISSES))
def test_explain_gives_the_line_its_class(line: PublicLine) -> None:
    found = explained(line.line).decisive_class
    if line.cause.startswith("error_"):
        assert found == line.cause, line.source
    else:  # a catalogued cause: the line still carries a class
        assert found is not None, line.source
