"""A line's message is its own words: where runc relays an OCI hook's output into its error
chain ("error running hook: exit status 1, stdout: , stderr: time=... level=... msg=...") and
the kubelet, Docker or nerdctl relays the chain, a ``msg`` key after ``stderr: `` is the hook's
line, not this line's. Read as the message, the hook's first line (an info line as often as
not) hid the error after it. Each line is a public one."""

from __future__ import annotations

from gpunode.decisive import message_of
from gpunode.kb import load_kb

KB = load_kb()

#: NVIDIA/nvidia-container-toolkit#795: the CSV-mode hook's info line, then its error.
HOOK_INFO_THEN_ERROR = (
    'Error: failed to create task for container: failed to create shim task: OCI runtime create failed: '
    'runc create failed: unable to start container process: error during container init: error running '
    'hook #1: error running hook: exit status 1, stdout: , stderr: time="2024-11-21T16:37:37-03:00" '
    'level=info msg="Symlinking /mnt/storage/docker/overlay2/9289f0d6/merged/etc/vulkan/icd.d/'
    'nvidia_icd.json to /usr/lib/aarch64-linux-gnu/tegra/nvidia_icd.json" '
    'time="2024-11-21T16:37:37-03:00" level=error '
    'msg="failed to create link [/usr/lib/aarch64-linux-gnu/tegra/nvidia_icd.json '
    '/etc/vulkan/icd.d/nvidia_icd.json]: failed to create symlink: failed to remove existing file: remove '
    '/mnt/storage/docker/overlay2/9289f0d6/merged/etc/vulkan/icd.d/nvidia_icd.json')

#: containerd/nerdctl#1318 (containernetworking/cni#909): nerdctl relaying runc relaying the
#: CNI hook's fatal line.
CNI_HOOK_IPTABLES = (
    'FATA[0000] failed to create shim: OCI runtime create failed: runc create failed: unable to start '
    'container process: error during container init: error running hook #0: error running hook: exit '
    'status 1, stdout: , stderr: time="2022-08-16T06:37:17Z" level=fatal msg="failed to call cni.Setup: '
    'plugin type=\\"bridge\\" failed (add): running [/usr/sbin/iptables -t nat -A POSTROUTING -s 10.4.0.72 '
    '-j CNI-641983adac3364af5cf2b254 --wait]: exit status 4: iptables v1.8.7 (nf_tables):  RULE_APPEND '
    'failed (Invalid argument): rule in chain POSTROUTING"')

#: rancher-sandbox/rancher-desktop#1600: the same relay, the CNI's IPAM refusing an address.
CNI_HOOK_IPAM = (
    'FATA[0000] failed to create shim: OCI runtime create failed: container_linux.go:380: starting '
    'container process caused: process_linux.go:545: container init caused: Running hook #0:: error '
    'running hook: exit status 1, stdout: , stderr: time="2022-04-25T01:44:24Z" level=fatal msg="failed '
    'to call cni.Setup: plugin type=\\"bridge\\" failed (add): failed to allocate for range 0: 10.4.0.9 '
    'has been allocated to default-1bf6325d, duplicate allocation is not allowed"')

#: containerd/nerdctl#1948: nerdctl's own logrus line, whose msg key comes before the relay.
OWN_MSG_FIRST = (
    'time="2023-01-28T20:53:18Z" level=fatal msg="failed to create shim: OCI runtime create failed: runc '
    'create failed: unable to start container process: error during container init: error running hook '
    '#0: error running hook: exit status 1, stdout: , stderr: time=\\"2023-01-28T20:53:18Z\\" level=fatal '
    'msg=\\"failed to call cni.Setup: plugin type=\\\\\\"tuning\\\\\\" failed (add): open '
    '/etc/cni/tuning/allowlist.conf: permission denied\\""')


def test_hook_info_line_does_not_hide_its_error() -> None:
    message = message_of(HOOK_INFO_THEN_ERROR)
    assert message.startswith("Error: failed to create task")
    assert KB.class_of(message) == "error_file_state"


def test_relayed_fatal_line_keeps_its_class() -> None:
    assert message_of(CNI_HOOK_IPTABLES).startswith("FATA[0000] failed to create shim")
    assert KB.class_of(message_of(CNI_HOOK_IPTABLES)) == "error_config_invalid"
    assert KB.class_of(message_of(CNI_HOOK_IPAM)) is None


def test_own_msg_key_before_the_relay_is_the_message() -> None:
    message = message_of(OWN_MSG_FIRST)
    assert message.startswith("failed to create shim: OCI runtime create failed")
    assert KB.class_of(message) == "error_permission_denied"


def test_plain_logrus_line_keeps_its_msg() -> None:
    line = ('time="2024-01-01T00:00:00Z" level=error msg="error running hook: exit status 1, stdout: , '
            'stderr: boom"')
    assert message_of(line) == "error running hook: exit status 1, stdout: , stderr: boom"
