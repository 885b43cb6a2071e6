"""A runtime configuration the toolkit wrote that the runtime itself refuses.

The toolkit rewrites containerd's config and restarts containerd. Where the file it wrote
declares a config version containerd cannot read (a quoted ``version = "2"``, a version no
release knows), containerd exits on start and its socket stops answering: the runtime is
down because of the writer (GPU Operator 1.6.2 release notes: toolkit 1.4.6 wrote the
version as a string and containerd failed, fixed in 1.4.7 by writing an integer). The
runtime's state follows from the toolkit's file, so the toolkit is the cause.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.checks.base import EXPLAINS, check, problem
from gpunode.checks.context import NodeContext
from gpunode.checks.host import runtime_down_message
from gpunode.model import Evidence, Finding
from gpunode.relazy import lazy_compile

#: The parser's refusal of a containerd config's version (gpunode.parse.containerd).
_VERSION_REFUSED = "unsupported containerd config version"
#: A client's failed dial of the runtime's socket (the kubelet, crictl, the toolkit).
_DIAL = lazy_compile(
    r"dial unix \S*(?:containerd|crio)\S*\.sock: connect: (?:connection refused|no such file)")
#: What the toolkit writes into the file: its runtime handler or binary.
_TOOLKIT_MARK = lazy_compile(r"nvidia-container-runtime|runtimes\.\"?nvidia\"?\]")


def runtime_may_be_unreachable(ctx: NodeContext) -> bool:
    """Whether ``runtime_unreachable`` may hold on the node: the kubelet reports the runtime
    down, or its journal was collected. The gate of the checks that judge only a runtime
    that cannot be reached (on nearly every node neither)."""
    return "journal-kubelet.txt" in ctx.obs.cmd or runtime_down_message(ctx) is not None


@check("container-toolkit", may_find=runtime_may_be_unreachable)
def refused_toolkit_config(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The runtime cannot be reached and the containerd config holding the toolkit's
    runtime declares a version containerd refuses: the toolkit's write is why. A
    refused config on a runtime that answers, or one without the toolkit's runtime,
    says nothing here."""
    refused = ctx.runtime_setup_error
    if refused is None or _VERSION_REFUSED not in refused[1]:
        return
    path, error = refused
    text = ctx.obs.files.get(path.split("/files/", 1)[-1], "")
    if not _TOOLKIT_MARK.search(text) or not runtime_unreachable(ctx):
        return
    ev = Evidence(path, f"{error}; the container runtime's socket does not answer")
    yield problem(component, "containerd_config_version_mismatch", ev, specificity=85,
                  ctx={EXPLAINS: "container-runtime"})


def runtime_unreachable(ctx: NodeContext) -> bool:
    """The kubelet reports the runtime down, or its journal shows a dial of the runtime's
    socket refused or finding no socket (NVIDIA/aicr#1688: 'dial unix
    /run/containerd/containerd.sock: connect: connection refused' once containerd exited on
    the toolkit's drop-in)."""
    if runtime_down_message(ctx) is not None:
        return True
    return any(_DIAL.search(line) for line in ctx.obs.cmd.get("journal-kubelet.txt", "").splitlines())
