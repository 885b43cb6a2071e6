"""A program that states its own setting and a value handed to it that contradicts it
("configured with X, but received Y") holds a configuration another component's disagrees
with: a configuration error, as the kubelet's own "misconfiguration: kubelet cgroup driver ...
is different from docker cgroup driver" line already reads. Each line is a public one."""

from __future__ import annotations

import pytest

from gpunode.kb import load_kb

KB = load_kb()


@pytest.mark.parametrize(
    "line",
    [
        # nestybox/sysbox#893: CRI-O's cgroup manager against the kubelet's cgroup driver
        "Failed to create pod sandbox: rpc error: code = Unknown desc = cri-o configured with cgroupfs "
        "cgroup manager, but received systemd slice as parent: /kubepods.slice/"
        "kubepods-besteffort.slice/kubepods-besteffort-pod368236bb_a128_48e2_a105_0b2c1c7a24e5.slice",
        # cri-o/cri-o#1284 (and cri-o/cri-o#896): the same disagreement the other way round
        "RunPodSandbox from runtime service failed: rpc error: code = Unknown desc = cri-o configured "
        "with systemd cgroup manager, but did not receive slice as parent: "
        "/kubepods/burstable/podbc646bf4-01c0-11e8-9ec7-0a580a2c0a3a",
        # estesp/bucketbench#55: a CRI client handing CRI-O a plain cgroup parent
        "Driver validation: error creating test container: rpc error: code = Unknown desc = cri-o "
        "configured with systemd cgroup manager, but did not receive slice as parent: default",
    ],
)
def test_contradicted_setting_is_a_configuration_error(line: str) -> None:
    assert KB.class_of(line) == "error_config_invalid"


@pytest.mark.parametrize(
    ("line", "cls"),
    [
        # a setting stated with an unreachable peer after it: the innermost error decides
        ("proxy configured with http://10.0.0.1:3128, but dial tcp 10.0.0.1:3128: connect: "
         "connection refused", "error_unreachable"),
        # a setting stated alone is no error
        ("nvidia-container-runtime configured with mode legacy", None),
    ],
)
def test_look_alike_keeps_its_class(line: str, cls: str | None) -> None:
    assert KB.class_of(line) == cls
