"""A device plugin's device list that the kubelet could not take, in the kubelet's words.

A registered device plugin sends its devices on the ListAndWatch stream; when the stream
ends with an error, the kubelet logs it ('listAndWatch ended unexpectedly for device plugin
<resource> with error rpc error: ...', since 1.20 the structured '"ListAndWatch ended
unexpectedly for device plugin" err="rpc error: ..." resource="<resource>"') and marks the
resource's devices unhealthy, so the plugin runs, Ready, and the node advertises none of
them. The gRPC code says whose the end is: Unavailable and Canceled are the plugin going away
(a restart, a new registration replacing the old stream), routine; any other code is the
kubelet refusing what the plugin sent (ResourceExhausted: a device list over the kubelet's
4 MiB receive limit, one fake device per MiB of GPU memory), which the same plugin sends
again after every restart. The last such line for a resource, with no registration of that
resource after it, is the failure of the plugin that serves the resource on the node: the
one catalogued component that advertises it, or among several (nvidia.com/gpu) the one
whose pod runs here; a resource no catalogued component advertises is served by the node's
only running device plugin, where exactly one runs (an uncatalogued plugin read by its
role).
"""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.checks.base import ALL_POD_COMPONENTS, check
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import HOST_JOURNALS, as_catalogued, line_finding
from gpunode.decisive import MAX_LINE, Decisive
from gpunode.model import Finding, Status
from gpunode.relazy import lazy_compile

_JOURNAL = HOST_JOURNALS["kubelet"]
#: The kubelet's line for a plugin's stream that ended with an error, in either form.
_ENDED = lazy_compile(r"(?i:listAndWatch ended unexpectedly for device plugin)\b"
                      r"(?: (?P<named>[a-z0-9.-]+/[\w.-]+))?.*?\brpc error: code = (?P<code>\w+)"
                      r"(?:.*?\bresource=\\?\"(?P<field>[a-z0-9.-]+/[\w.-]+)\\?\")?")
#: The kubelet's line for a plugin registering (again): a stream after it is a new one.
_REGISTERED = lazy_compile(r"(?i:registration request from device plugin with resource(?: name)?)\b\W*"
                           r"(?:resourceName=)?\\?\"?(?P<resource>[a-z0-9.-]+/[\w.-]+)")
#: The codes of a plugin going away (its restart, a stream replaced), not a refusal.
_ROUTINE = frozenset({"Unavailable", "Canceled"})
_GATE = "ended unexpectedly for device plugin"


def _may_end(ctx: NodeContext) -> bool:
    """Whether the kubelet's journal holds any ended stream (nearly no node's does)."""
    split = ctx.text_lines("cmd", _JOURNAL)
    return split is not None and _GATE in split[1].lower()


def refused_streams(lines: list[str]) -> dict[str, int]:
    """Per resource, the index of the kubelet's last line ending its plugin's stream with a
    refusal (``_ROUTINE`` codes are not), where no registration of the resource follows it."""
    last: dict[str, int] = {}
    for index, line in enumerate(lines):
        if (registered := _REGISTERED.search(line)) is not None:
            last.pop(registered["resource"], None)
            continue
        ended = _ENDED.search(line)
        resource = (ended["named"] or ended["field"]) if ended is not None else None
        if ended is None or resource is None:
            continue
        if ended["code"] in _ROUTINE:
            last.pop(resource, None)
        else:
            last[resource] = index
    return last


def _serves(ctx: NodeContext, component: str, resource: str) -> bool:
    """Whether ``component`` is the plugin serving ``resource`` on this node (module docstring)."""
    catalog = ctx.facts.catalog
    owners = catalog.advertisers(resource)
    if owners:
        return component in owners and (len(owners) == 1 or bool(ctx.stack_pods(component)))
    running = [c.id for c in catalog.node_components() if c.advertises and ctx.stack_pods(c.id)]
    return running == [component]


@check(ALL_POD_COMPONENTS, may_find=_may_end)
def stream_refused(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The kubelet refused the device list of the plugin serving a resource (module docstring)."""
    split = ctx.text_lines("cmd", _JOURNAL)
    if split is None:
        return
    lines = split[0]
    for resource, index in refused_streams(lines).items():
        if not _serves(ctx, component, resource):
            continue
        found = Decisive(index + 1, lines[index].strip()[:MAX_LINE], 2)
        where = f"{ctx.obs.path_of('cmd', _JOURNAL)}:{index + 1}"
        yield as_catalogued(ctx.kb, line_finding(
            ctx.kb, component, Status.FAILED, found, where, verb="fails with the kubelet",
            standalone="true", resource=resource))
        return
