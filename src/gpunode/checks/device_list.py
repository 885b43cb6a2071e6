"""The device plugin's way of naming a container's GPUs against what the toolkit accepts.

The NVIDIA device plugin tells the runtime which GPUs a container got by its device list
strategy: ``envvar`` (the default) sets NVIDIA_VISIBLE_DEVICES, ``volume-mounts`` mounts
one file per device under /var/run/nvidia-container-devices, the ``cdi-*`` strategies name
CDI devices. The toolkit's config.toml decides which of these it reads:
``accept-nvidia-visible-devices-envvar-when-unprivileged = false`` makes it ignore the
variable in every unprivileged container, so a plugin that passes the list only by envvar
gives unprivileged GPU pods neither devices nor driver libraries, with no error anywhere
(NVIDIA/nvidia-container-toolkit#1089; the pairing the setting is meant for is the plugin's
volume-mounts strategy, NVIDIA/gpu-operator#372, NVIDIA/k8s-device-plugin#440). The plugin
prints the strategy it runs with at start ("Running with config:"); where it did not, or no
toolkit config was collected, nothing is said.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from gpunode.checks.base import LINE, MESSAGE, SOURCE, FilesMatching, check, problem
from gpunode.checks.context import NodeContext
from gpunode.errors import ParseError
from gpunode.model import Evidence, Finding
from gpunode.parse._toml import load_toml
from gpunode.relazy import lazy_compile

#: The toolkit's setting that refuses NVIDIA_VISIBLE_DEVICES from unprivileged containers.
ENVVAR_UNPRIVILEGED = "accept-nvidia-visible-devices-envvar-when-unprivileged"
#: The toolkit's config file, wherever it is installed (the host's /etc, the operator's
#: /usr/local/nvidia/toolkit/.config).
_TOOLKIT_CONFIG = lazy_compile(r"(?:^|/)nvidia-container-runtime/config\.toml$")
#: The plugin's start-up dump of its effective config, and the strategy key in it (a list
#: since v0.13, a string before).
_RUNNING_WITH = "Running with config:"
_STRATEGY = lazy_compile(r'"deviceListStrategy"\s*:\s*(\[[^\]]*\]|"[^"]*")')
_NAME = lazy_compile(r'"([\w-]+)"')
#: A new klog record: the config dump ends before it.
_RECORD = lazy_compile(r"^[IWEF]\d{4} ")
#: Lines of the dump read at most (its whole JSON is some 40 lines).
_DUMP_LINES = 120
_PLUGIN = "device-plugin"


def refuses_envvar(text: str, path: str) -> bool:
    """The toolkit config sets the unprivileged envvar refusal (False when it does not parse)."""
    if ENVVAR_UNPRIVILEGED not in text:
        return False
    try:
        return load_toml(path, text).get(ENVVAR_UNPRIVILEGED) is False
    except ParseError:
        return False


def strategies(lines: Sequence[str]) -> tuple[int, tuple[str, ...]] | None:
    """The device list strategies of the plugin's last config dump, with the dump's line
    index; None where the log holds no dump or the dump names none."""
    start = next((i for i in range(len(lines) - 1, -1, -1) if _RUNNING_WITH in lines[i]), None)
    if start is None:
        return None
    block = [lines[start]]
    for line in lines[start + 1:start + _DUMP_LINES]:
        if _RECORD.match(line):
            break
        block.append(line)
    found = _STRATEGY.search("\n".join(block))
    if found is None:
        return None
    return start, tuple(_NAME.findall(found.group(1)))


@check(_PLUGIN, may_find=FilesMatching(_TOOLKIT_CONFIG.pattern))
def envvar_refused_by_toolkit(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The plugin hands out GPUs only by NVIDIA_VISIBLE_DEVICES while the node's toolkit
    ignores that variable in unprivileged containers: every unprivileged GPU pod starts
    without its GPUs. The plugin's strategy is what must change (volume-mounts or CDI)."""
    refusing = [p for p, text in sorted(ctx.obs.files.items())
                if _TOOLKIT_CONFIG.search(p) and refuses_envvar(text, "/" + p)]
    if not refusing:
        return
    for _, log in ctx.current_logs(component):
        read = strategies(log.lines)
        if read is None or not read[1] or set(read[1]) != {"envvar"}:
            continue
        index, names = read
        shown = f"deviceListStrategy {', '.join(names)}"
        where = f"{log.path}:{index + 1}"
        refused = f"{ENVVAR_UNPRIVILEGED} = false"
        # the decisive line is the setting the plugin's strategy runs into, quoted with it
        quoted = {LINE: refused, SOURCE: ctx.obs.path_of("files", refusing[0]),
                  MESSAGE: f"{shown} while the toolkit sets {refused}"}
        yield problem(
            component, "error_config_invalid",
            Evidence(where, shown),
            Evidence(ctx.obs.path_of("files", refusing[0]), refused),
            specificity=ctx.kb.get("error_config_invalid").specificity, ctx=quoted,
            namespace=log.namespace, pod=log.pod, container=log.container, standalone="true")
        return
