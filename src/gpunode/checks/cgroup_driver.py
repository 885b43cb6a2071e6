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

from collections.abc import Iterator, Mapping

from gpunode.checks.base import LINE, MESSAGE, SOURCE, check, problem, reads
from gpunode.checks.context import NodeContext
from gpunode.model import Evidence, Finding
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
