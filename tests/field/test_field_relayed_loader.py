"""kmod's refusal relayed by the program that ran it: a CSI node plugin quoting modprobe's
stderr after its own words ('modprobe failed (... running modprobe args: [rbd]): "modprobe:
ERROR: could not insert 'rbd': Exec format error\\n"'). The loader's errno is the kernel's
answer for the module (ENOEXEC: a module built for another kernel or machine), so the line is
a module load, whatever strerror text ends it; an exec of a program that is no executable
for the machine stays a file in the wrong state.

Sources: kmod tools/modprobe.c ("could not insert '%s': %s"), ceph/ceph-csi#2878 (the node
plugin logging modprobe's stderr with %q), ceph/ceph-csi#2918 ('rbd-nbd: nbd modprobe failed
(an error (exit status 1) occurred while running modprobe args: [nbd]): "modprobe: FATAL:
Module nbd not found in directory /lib/modules/3.10.0-1160.25.1.el7.x86_64\\n"')."""

from __future__ import annotations

from typing import Any

import pytest
from case import synthetic_case
from scoreboard import top_pair

from gpunode.kb import load_kb

_WRAP = 'modprobe failed (an error (exit status 1) occurred while running modprobe args: [{m}]): "{e}\\n"'

RELAYED = {
    "enoexec": _WRAP.format(m="rbd", e="modprobe: ERROR: could not insert 'rbd': Exec format error"),
    # https://github.com/ceph/ceph-csi/issues/2918
    "not-found": "rbd-nbd: nbd " + _WRAP.format(
        m="nbd", e="modprobe: FATAL: Module nbd not found in directory /lib/modules/3.10.0-1160.el7.x86_64"),
    "enodev": _WRAP.format(m="ceph", e="modprobe: ERROR: could not insert 'ceph': No such device"),
}

NOT_LOADER = {
    "exec": 'failed to run "/usr/bin/rbd": fork/exec /usr/bin/rbd: exec format error',
    "open": "failed to open /etc/ceph/keyring: no such file or directory",
}


@pytest.mark.parametrize("name", sorted(RELAYED))
def test_a_relayed_loader_refusal_is_a_module_load(name: str) -> None:
    assert load_kb().class_of(RELAYED[name]) == "error_module_load"


@pytest.mark.parametrize("name", sorted(NOT_LOADER))
def test_other_words_stay_in_their_class(name: str) -> None:
    assert load_kb().class_of(NOT_LOADER[name]) == "error_file_state"


def test_a_csi_node_plugin_that_cannot_load_its_module() -> None:
    line = "E0112 01:51:42.259532 42440 rbd_util.go:303] " + RELAYED["enoexec"]
    evidence: list[dict[str, Any]] = [
        {"kind": "log", "component": "csi-node", "container": "nfs", "previous": True, "text": line + "\n"},
        {"kind": "pod-state", "component": "csi-node", "container": "nfs", "state": "CrashLoopBackOff"},
    ]
    found = top_pair(synthetic_case("relayed-loader", evidence, healthy=False))
    assert found == ("csi-node", "error_module_load")
