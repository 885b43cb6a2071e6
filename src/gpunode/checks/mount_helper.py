"""The kubelet's own mount of a pod's volume refused for want of the file system's mount helper.

For an in-tree volume (nfs, cifs, glusterfs) the kubelet runs the host's mount(8)
(k8s.io/mount-utils: "mount failed: exit status 32 / Mounting command: ... / Output: ..."),
and mount(8) hands a network source to its /sbin/mount.<type> helper (nfs-common, nfs-utils,
cifs-utils). Without the helper it calls mount(2) itself, the kernel answers EINVAL, and
util-linux says so in the words it keeps for a source that is no block device: libmount's
"bad option; for several filesystems (e.g. nfs, cifs) you might need a /sbin/mount.<type>
helper program." (libmount/src/context_mount.c, mnt_context_get_mount_excode; the older
mount(8) ended its "wrong fs type, bad option, bad superblock" block with "(for several
filesystems (e.g. nfs, cifs) you might need a /sbin/mount.<type> helper program)"). Seen on
kubelets whose host or container lacks the package: kubernetes-retired/kubeadm-dind-cluster#242,
luxas/kubernetes-on-arm#113, nacos-group/nacos-k8s#30, kubernetes/website#19774 (the docs' note
that nodes need the helper), coreos/coreos-kubernetes#372 (strace: mount(2) -> EINVAL, exit 32).
The host under the kubelet lacks the helper package, whatever the file system: error_not_found.
A CSI volume's mount is the node plugin's, in its own container (an "rpc error" relayed, a
kubernetes.io~csi path): not read here.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.checks.base import LINE, MESSAGE, SOURCE, check, problem
from gpunode.checks.context import NodeContext
from gpunode.decisive import MAX_LINE
from gpunode.model import Evidence, Finding
from gpunode.relazy import lazy_compile

#: util-linux's hint for a mount(2) of a non-block source that failed with EINVAL: the
#: helper for its type is not installed (both libmount's sentence and the older mount(8)'s
#: parenthesis, whose line break may fall before "need").
_HELPER_HINT = lazy_compile(r"\bneed a /sbin/mount\.<type> helper program\b")
#: A mount that is a CSI node plugin's, not the kubelet's own.
_CSI_MOUNT = lazy_compile(r"\brpc error: |kubernetes\.io~csi/")
_JOURNAL = "journal-kubelet.txt"
#: How many lines of the kubelet's journal before the hint its mount failure may start on.
_BACK = 12


def lacks_mount_helper(text: str) -> bool:
    """A mount failure of the kubelet's own whose output says the type's helper is missing."""
    return _HELPER_HINT.search(text) is not None and _CSI_MOUNT.search(text) is None


def _from_events(ctx: NodeContext) -> tuple[str, str] | None:
    for pod in ctx.facts.troubled_workloads_by_node.get(ctx.name, ()):
        for event in ctx.events_for_pod(pod):
            if lacks_mount_helper(event.message):
                meta = pod.metadata
                return f"pod {meta.namespace}/{meta.name} event {event.reason}", event.message
    return None


def _from_journal(ctx: NodeContext) -> tuple[str, str] | None:
    split = ctx.text_lines("cmd", _JOURNAL)
    if split is None or "/sbin/mount." not in split[1]:
        return None
    lines = split[0]
    for index in range(len(lines) - 1, -1, -1):
        if _HELPER_HINT.search(lines[index]):
            block = "\n".join(lines[max(0, index - _BACK):index + 1])
            if _CSI_MOUNT.search(block) is None:
                return f"{ctx.obs.path_of('cmd', _JOURNAL)}:{index + 1}", lines[index]
    return None


def _may_lack_helper(ctx: NodeContext) -> bool:
    """Whether either source is there: a troubled GPU workload of the node (its events), the
    kubelet's journal (most nodes have neither)."""
    return _JOURNAL in ctx.obs.cmd or bool(ctx.facts.troubled_workloads_by_node.get(ctx.name))


@check("kubelet", may_find=_may_lack_helper)
def mount_helper_missing(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A pod volume the kubelet could not mount because the host lacks the file system's
    mount helper (module docstring): every pod with such a volume fails here the same way."""
    found = _from_events(ctx) or _from_journal(ctx)
    if found is None:
        return
    where, text = found
    line = " ".join(text.split())[:MAX_LINE]
    yield problem(component, "error_not_found",
                  Evidence(where, f"the kubelet could not mount a volume: {line}"),
                  specificity=50, ctx={SOURCE: where, LINE: line, MESSAGE: line})
