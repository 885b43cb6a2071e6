"""A device plugin too old to read the config that shares the node's GPUs.

NVIDIA's device plugin reads a config file since v0.12.0 (the release that brought GPU sharing
by time-slicing; the GPU Operator renders it with one from 1.11, ``devicePlugin.config``), and
every start of such a build reads it before it serves anything: its log goes from "Starting FS
watcher." through "Loading configuration." and the "Running with config:" dump to its
registration with the kubelet ("Registered device plugin for 'nvidia.com/gpu' with Kubelet").
An older build starts and registers without a word of a config (its "Retreiving plugins." and
"Falling back to mig.strategy" lines instead). Where the node selects a config that shares
``nvidia.com/gpu`` (the ``nvidia.com/device-plugin.config`` label or the default key of the
plugin's ConfigMap) and the plugin's last start reads none, the config is ignored and the node
offers its whole GPUs only: the plugin is older than the config it is given
(NVIDIA/k8s-device-plugin#321: time-slicing set on a GPU Operator older than 1.11; the
maintainers' answer was to upgrade the operator). The finding is the plugin's, the component
whose build is too old; where a ClusterPolicy renders it, the title says that the operator's
release chose that build (a node's plugin log is not read by the operator's cluster checks).

A log that holds no whole start (cut by a tail, or the plugin still starting) says nothing,
nor does a config that shares nothing, nor a node whose config cannot be told.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from gpunode.checks.base import check
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.decisive import MAX_LINE, Decisive
from gpunode.model import Finding, Status
from gpunode.relazy import lazy_compile

_PLUGIN = "device-plugin"
#: The first line of every start of the plugin (its main's file watcher), in any release.
_START = lazy_compile(r"\bStarting FS watcher\b")
#: Its registration with the kubelet for a resource: the end of a whole start.
_REGISTERED = lazy_compile(r"\bRegistered device plugin for '[\w./-]+' with Kubelet\b")
#: What a build that reads a config file says of it at each start.
_CONFIG_READ = lazy_compile(r"\bLoading configuration\b|\bRunning with config\b")


def start_without_config(lines: Sequence[str]) -> Decisive | None:
    """The registration line of the plugin's last whole start in ``lines`` where nothing of
    that start reads a config; None where the log holds no whole start or its start read one."""
    starts = [i for i, line in enumerate(lines) if _START.search(line)]
    if not starts:
        return None
    begin = starts[-1]
    end = next((i for i in range(begin + 1, len(lines)) if _REGISTERED.search(lines[i])), None)
    if end is None or any(_CONFIG_READ.search(line) for line in lines[begin:end + 1]):
        return None
    return Decisive(end + 1, lines[end].strip()[:MAX_LINE], 1)


@check(_PLUGIN, needs=("cluster/configmaps",))
def sharing_config_unread(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The node's plugin config shares ``nvidia.com/gpu`` and the plugin's last start read
    no config: a plugin that predates configs (module docstring)."""
    sharing = ctx.plugin_sharing
    if sharing is None or sharing.replicas <= 1:
        return
    for pod, log in ctx.current_logs(component):
        found = start_without_config(log.lines)
        if found is None:
            continue
        meta = pod.metadata
        built = " (the build the GPU Operator's release renders)" if ctx.facts.cluster_policies else ""
        verb = (f"is a build that reads no config{built}, on a node whose config sets "
                f"{sharing.strategy} x{sharing.replicas}")
        yield line_finding(ctx.kb, component, Status.FAILED, found, f"{log.path}:{found.line_no}",
                           verb=verb, line_class="error_version_mismatch", standalone="true",
                           namespace=meta.namespace, pod=meta.name, container=log.container)
        return
