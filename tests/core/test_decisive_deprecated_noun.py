"""'deprecated' as a notice is noise; as the adjective before a noun inside an error chain it
names the thing the error is about, and the line stays the error it is.

The kubelet's plugin watcher, exiting on the inotify limit while it walks its deprecated
plugin directory: kubernetes/kubernetes#74669 and rook/rook#2568 quote the same fatal line;
kubernetes/kubernetes#70494 quotes the version before the directory was called deprecated,
whose class must be the same. pflag's notice for a deprecated flag ('Flag --x has been
deprecated, ...'), which every kubelet start on old flags logs, stays noise."""

from __future__ import annotations

import pytest

from gpunode.decisive import decisive_line, severity
from gpunode.kb import load_kb

_ROOK = ('kubelet.go:1401] failed to start Plugin Watcher. err: failed to traverse deprecated plugin '
         'socket path "/var/lib/kubelet/plugins", err: failed to watch '
         '/var/lib/kubelet/plugins/ceph.rook.io/rook-ceph-system/mounts/'
         'pvc-ae6778f9-1e2d-11e9-8db6-0050568460f6/scanfiles.154947724132445/reports, '
         'err: no space left on device')
_K8S_74669 = ('failed to start Plugin Watcher. err: failed to traverse deprecated plugin socket path '
              '"/var/lib/kubelet/plugins", err: failed to watch /var/lib/kubelet/plugins/ceph.rook.io/'
              'rook-ceph-system/mounts/pvc-XXX/dirYY/dirZZ/, err: no space left on device')
_K8S_70494 = ('F1219 09:40:21.316608    7563 kubelet.go:1376] failed to start Plugin Watcher. '
              'err: failed to traverse plugin socket path, err: failed to watch '
              '/var/lib/kubelet/plugins/kubernetes.io/aws-ebs/'
              'mounts/aws/eu-west-1a/vol-0c4593cba89d43513/nodes/0/indices/Z9M9TmglRHqsKkUOxAy_Xw/6/_state, '
              'err: no space left on device')


@pytest.mark.parametrize("line", [_ROOK, _K8S_74669, _K8S_70494])
def test_an_error_about_a_deprecated_thing_is_an_error(line: str) -> None:
    kb = load_kb()
    found = decisive_line([line], kb.class_of)
    assert found is not None
    assert kb.class_of(found.message) == "error_resource_exhausted"


@pytest.mark.parametrize("line", [
    "Flag --cgroup-driver has been deprecated, This parameter should be set via the config file "
    "specified by the Kubelet's --config flag. See "
    "https://kubernetes.io/docs/tasks/administer-cluster/kubelet-config-file/ for more information.",
    "the --foo flag is deprecated and will be removed: it failed too often",
    "DEPRECATED: error reporting through this endpoint",
])
def test_a_deprecation_notice_stays_noise(line: str) -> None:
    assert severity(line) == 0
