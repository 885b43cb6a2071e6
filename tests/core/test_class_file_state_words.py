"""Two general forms of a file in the wrong state that no class read: the kubelet's hostPath
type check ('hostPath type check failed: <path> is not a file', and the same for a socket
file, a character or block device, as for a directory already), and the dynamic loader's
words for a library that is no loadable ELF file ('invalid ELF header', 'file too short').
Both are error_file_state; a sentence that only says a value is not a file path, and a
library that is simply absent (still file_state, by its errno), are checked beside them."""

from __future__ import annotations

import pytest

from gpunode.kb import load_kb

KB = load_kb()


@pytest.mark.parametrize(
    ("line", "cls"),
    [
        # NVIDIA/gpu-operator#1501: the driver's subscription hostPath on an air-gapped RHEL node
        ('MountVolume.SetUp failed for volume "subscription-config-1" : hostPath type check failed: '
         "/etc/yum.repos.d/redhat.repo is not a file", "error_file_state"),
        # the kubelet's other hostPath types
        ('MountVolume.SetUp failed for volume "device-plugin" : hostPath type check failed: '
         "/var/lib/kubelet/device-plugins/kubelet.sock is not a socket file", "error_file_state"),
        ('MountVolume.SetUp failed for volume "dev-char" : hostPath type check failed: '
         "/dev/nvidia-caps is not a character device", "error_file_state"),
        # siderolabs/extensions#380: a glibc the ZFS extension put first on the loader's path
        ("error running hook: exit status 127, stdout: , stderr: /usr/local/bin/nvidia-container-cli: "
         "error while loading shared libraries: /usr/local/glibc/lib/libc.so: invalid ELF header: unknown",
         "error_file_state"),
        ("nvidia-smi: error while loading shared libraries: libnvidia-ml.so.1: file too short",
         "error_file_state"),
        # an absent library keeps its class by its errno
        ("nvidia-smi: error while loading shared libraries: libnvidia-ml.so.1: cannot open shared object "
         "file: No such file or directory", "error_file_state"),
    ],
)
def test_line_falls_in_its_class(line: str, cls: str) -> None:
    assert KB.class_of(line) == cls


@pytest.mark.parametrize(
    "line",
    [
        "the value is not a file path but a URL",
        "hostPath /etc/yum.repos.d/redhat.repo is a file",
        "ELF header read: 64-bit, x86-64",
    ],
)
def test_look_alike_is_no_file_state(line: str) -> None:
    assert KB.class_of(line) is None
