"""A host journal's line naming another layer is that layer's catalogued cause where the
line matches one of its signatures, also when the words the signature needs fall in the
middle the report clips: a runtime's journal line relays a hook's whole error chain
(StartContainer, the OCI runtime, the hook's exit, then nvidia-container-cli's own error),
well beyond what a title shows. Lines in the forms containerd and the kubelet write them."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import top_pair


def _case(name: str, text: str) -> Case:
    raw: dict[str, Any] = {"id": "x-journal-catalogued", "source": "https://example.org/x", "title": "t",
                           "platform": "generic", "expect": {"healthy": True},
                           "evidence": [{"kind": "node-cmd", "name": name, "text": text}]}
    return msgspec.convert(raw, Case)


_CHAIN = ('failed to create containerd task: OCI runtime create failed: container_linux.go:370: starting '
          'container process caused: process_linux.go:459: container init caused: Running hook #0:: error '
          'running hook: exit status 1, stdout: , stderr: ')


def _containerd(hook_error: str) -> str:
    return ('containerd[4021]: time="2021-03-02T10:11:12.000000000Z" level=error msg="StartContainer for '
            '\\"5b0c2a\\" failed" error="' + _CHAIN + hook_error + '"\n')


def test_a_hook_s_cgroup_error_deep_in_containerd_s_line_is_the_toolkit_s_catalogued_cause() -> None:
    # the systemd driver's slice of a burstable pod (its UID's dashes as underscores), cut at
    # the first colon of containerd's 'slice:prefix:name' and joined under containerd's own
    # cgroup: the hook's error alone is longer than the half of the line a report keeps
    line = _containerd("nvidia-container-cli: mount error: open failed: /sys/fs/cgroup/devices/system.slice/"
                       "containerd.service/kubepods-burstable-pod0a1b2c3d_4e5f_6a7b_8c9d_0e1f2a3b4c5d.slice/"
                       "devices.allow: no such file or directory: unknown")
    assert top_pair(_case("journal-runtime.txt", line)) == ("container-toolkit", "container_cli_cgroup_error")


def test_the_cgroup_v2_form_in_the_same_line_is_the_same_cause() -> None:
    # the cause's other signature (no devices controller on a cgroup v2 host), short enough
    # to be quoted whole
    line = _containerd("nvidia-container-cli: container error: cgroup subsystem devices not found: unknown")
    assert top_pair(_case("journal-runtime.txt", line)) == ("container-toolkit", "container_cli_cgroup_error")


def test_another_mount_error_of_the_hook_stays_its_class() -> None:
    # look-alike: the hook could not create a file it mounts (not the devices cgroup)
    line = _containerd("nvidia-container-cli: mount error: file creation failed: "
                       "/run/containerd/io.containerd.runtime.v2.task/k8s.io/5b0c2a/rootfs/usr/bin/"
                       "nvidia-smi: "
                       "no such file or directory: unknown")
    found = top_pair(_case("journal-runtime.txt", line))
    assert found is not None and found[0] == "container-toolkit"
    assert found[1] != "container_cli_cgroup_error"
