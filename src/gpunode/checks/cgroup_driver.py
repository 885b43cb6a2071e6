"""The kubelet and the container runtime manage pod cgroups with different drivers.

The kubelet's ``cgroupDriver`` (``systemd`` or ``cgroupfs``) must match the one the OCI
runtime under the CRI uses (containerd's runc ``SystemdCgroup``, Docker's
``native.cgroupdriver``): where they differ, the kubelet and runc place a pod's processes
in two hierarchies, and system pods (CNI, CSI, kube-proxy) restart and flap, sandboxes are
recreated, often without a clear error (the dockershim kubelet refused to start with
'misconfiguration: kubelet cgroup driver: "systemd" is different from docker cgroup
driver: "cgroupfs"'). Both settings must be read explicitly: a missing kubelet config or
one without ``cgroupDriver`` is unknown, never a mismatch. A kubelet of 1.31 or later on
containerd 2 takes the runtime's driver over its own setting (KubeletCgroupDriverFromCRI),
so no mismatch can arise there.

Who is at fault: the NVIDIA runtime handler set as the default, whose driver differs from
the kubelet's while no other runc handler of the same config shares its driver, was written
by the container toolkit without the setting the node's own runc had (a fresh config
``nvidia-ctk runtime configure`` created, or options it did not carry over): the toolkit.
Otherwise the runtime's own config is what differs: the container runtime.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from typing import cast

from gpunode.bundle.kube import Event
from gpunode.checks.base import LINE, MESSAGE, SOURCE, check, in_fleet, problem, reads
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.decisive import Decisive
from gpunode.facts import ClusterFacts
from gpunode.model import Evidence, Finding, Status
from gpunode.parse.cgroup_driver import (
    KUBELET_CONFIG,
    RuntimeCgroup,
    containerd_cgroup,
    docker_cgroup,
    kubelet_cgroup_driver,
)
from gpunode.parse.docker import DOCKER_DAEMON_JSON
from gpunode.parse.runtime_config import ContainerdConfig
from gpunode.runtimes import is_nvidia_runtime

#: The kubelet version from which it asks a containerd 2 runtime for its driver.
_FROM_CRI = (1, 31)


#: The gate of both checks: without the kubelet's config its driver is unknown, and nothing differs.
_KUBELET_CONFIG_READ = reads(f"files/{KUBELET_CONFIG.lstrip('/')}")


@check("container-toolkit", may_find=_KUBELET_CONFIG_READ)
def toolkit_cgroup_driver(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The toolkit's default NVIDIA handler runs with another cgroup driver than the kubelet's."""
    yield from _judge(ctx, component)


@check("container-runtime", may_find=_KUBELET_CONFIG_READ)
def runtime_cgroup_driver(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The runtime's own config runs pods with another cgroup driver than the kubelet's."""
    yield from _judge(ctx, component)


#: The node memo's key for the mismatch both checks read (its files are parsed once a node).
_MEMO = "cgroup_driver_mismatch"


def _judge(ctx: NodeContext, component: str) -> Iterator[Finding]:
    if _MEMO not in ctx.memo:
        ctx.memo[_MEMO] = mismatch(ctx)
    found: tuple[str, str, RuntimeCgroup] | None = ctx.memo[_MEMO]  # type: ignore[assignment]
    if found is None or found[0] != component:
        return
    _, kubelet, runtime = found
    kubelet_ev = Evidence(f"nodes/{ctx.name}/files{KUBELET_CONFIG}", f"kubelet cgroupDriver: {kubelet}")
    runtime_ev = Evidence(f"nodes/{ctx.name}/files{runtime.source}",
                          f"runtime handler {runtime.handler} uses {runtime.driver}: {runtime.setting}; "
                          f"the kubelet uses {kubelet}")
    # the decisive line is the runtime's setting, quoted beside the kubelet's
    quoted = {LINE: runtime.setting, SOURCE: runtime_ev.source,
              MESSAGE: f"runtime handler {runtime.handler} uses {runtime.driver} ({runtime.setting}) "
                       f"while the kubelet uses {kubelet}"}
    yield problem(component, "error_config_invalid", runtime_ev, kubelet_ev, specificity=60, ctx=quoted)


def mismatch(ctx: NodeContext) -> tuple[str, str, RuntimeCgroup] | None:
    """(component at fault, kubelet's driver, runtime's) where both are read and differ."""
    kubelet = kubelet_cgroup_driver(ctx.obs.files.get(KUBELET_CONFIG.lstrip("/"), ""))
    if kubelet is None:
        return None
    if ctx.runtime_kind == "docker":
        rel = DOCKER_DAEMON_JSON.lstrip("/")
        docker = docker_cgroup(ctx.obs.files[rel], DOCKER_DAEMON_JSON) if rel in ctx.obs.files else None
        return ("container-runtime", kubelet, docker) if docker and docker.driver != kubelet else None
    return _containerd_mismatch(ctx, kubelet)


def _containerd_mismatch(ctx: NodeContext, kubelet: str) -> tuple[str, str, RuntimeCgroup] | None:
    if ctx.runtime_kind not in (None, "containerd") or _driver_from_cri(ctx):
        return None
    config = ctx.containerd
    if config is None:
        return None
    files = {"/" + p: t for p, t in ctx.obs.files.items()}
    found = containerd_fault(files, config, kubelet, (ctx.containerd_major or 1) >= 2)
    return (found[0], kubelet, found[1]) if found else None


def containerd_fault(files: Mapping[str, str], config: ContainerdConfig, kubelet: str,
                     containerd2: bool = False) -> tuple[str, RuntimeCgroup] | None:
    """(component at fault, the default handler's driver) where it differs from ``kubelet``'s:
    shared with ``gpunode explain`` over the same files."""
    default = config.default_runtime or "runc"
    runtime = containerd_cgroup(files, config, default, containerd2)
    if runtime is None or runtime.driver == kubelet:
        return None
    handler = config.runtimes.get(default)
    if handler is None or not is_nvidia_runtime(handler):
        return "container-runtime", runtime
    others = [containerd_cgroup(files, config, name, containerd2) for name, h in config.runtimes.items()
              if not is_nvidia_runtime(h)]
    copied = any(o is not None and o.driver == runtime.driver for o in others)
    return ("container-runtime" if copied else "container-toolkit"), runtime


def _driver_from_cri(ctx: NodeContext) -> bool:
    """A kubelet of 1.31+ on containerd 2 uses the driver the runtime reports."""
    node = ctx.node
    version = node.status.node_info.kubelet_version if node else ""
    parts = version.lstrip("v").split(".")
    try:
        kubelet = (int(parts[0]), int(parts[1]))
    except (ValueError, IndexError):
        return False
    return kubelet >= _FROM_CRI and (ctx.containerd_major or 1) >= 2


#: The kubelet's event for a pod whose sandbox it found changed (gone, exited, or in a new
#: network namespace: kuberuntime_manager.go's podSandboxChanged), before it kills the pod's
#: containers and creates the sandbox again: "Pod sandbox changed, it will be killed and
#: re-created." A node's reboot changes each pod's sandbox once; the same pod's sandbox lost
#: again is the runtime losing it: runc placing the pod in another cgroup hierarchy than the
#: kubelet's (kubernetes/kubernetes#110177, containerd without SystemdCgroup = true: system pods
#: restart "due to SandboxChanged" every few minutes; justinas/nixos-ha-kubernetes#5), or a
#: runtime whose restart drops the sandboxes (RKE2's containerd v1.6.12-k3s1, fixed in
#: v1.6.14-k3s1: rancher/rke2#3723, where the GPU Operator's toolkit restarts containerd).
_SANDBOX_CHANGED = "SandboxChanged"
#: The facts' shared key of the SandboxChanged events counted more than once, by node.
_SHARED = "cgroup_driver.sandboxes_changed_again"


def _changed_again(facts: ClusterFacts) -> dict[str, list[Event]]:
    """The kubelet's SandboxChanged events of pods whose sandbox it found changed more than
    once, by the node that recorded them (``source.host``): found once for the fleet."""
    found = facts.shared.get(_SHARED)
    if found is None:
        out: dict[str, list[Event]] = defaultdict(list)
        for (kind, _, _), events in facts.events_by_object.items():
            if kind != "Pod":
                continue
            for ev in events:
                if ev.reason == _SANDBOX_CHANGED and (ev.count or 1) >= 2 and ev.source.host:
                    out[ev.source.host].append(ev)
        found = facts.shared[_SHARED] = dict(out)
    return cast("dict[str, list[Event]]", found)


@check("container-runtime", may_find=in_fleet(_changed_again))
def sandboxes_changed_again(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A pod of this node whose sandbox the kubelet found changed more than once
    (``_SANDBOX_CHANGED``): the runtime keeps losing the pod's sandbox, degraded with the
    kubelet's words. Silent where the pod's sandbox could not be created (its
    FailedCreatePodSandBox event: the CNI or the runtime's handler says why, and is judged
    by its own checks) and where the node's cgroup drivers differ (the checks above name it)."""
    changed = _changed_again(ctx.facts).get(ctx.name)
    if not changed:
        return
    refused = {(ev.involved_object.namespace, ev.involved_object.name)
               for ev in ctx.facts.sandbox_refusals_by_host.get(ctx.name, ())}
    changed = [ev for ev in changed
               if (ev.involved_object.namespace, ev.involved_object.name) not in refused]
    if not changed:
        return
    if _MEMO not in ctx.memo:
        ctx.memo[_MEMO] = mismatch(ctx)
    if ctx.memo[_MEMO] is not None:
        return
    ev = max(changed, key=lambda e: e.count or 1)
    obj = ev.involved_object
    where = f"event pod {obj.namespace}/{obj.name} reason={ev.reason} count={ev.count or 1}"
    found = Decisive(1, ev.message.strip(), 1)
    yield line_finding(ctx.kb, component, Status.DEGRADED, found, where,
                       verb="recreates pod sandboxes", standalone="true")
