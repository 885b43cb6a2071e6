"""Whose failure the container CLI's "driver error: failed to process request" is.

nvidia-container-cli asks the driver about the GPUs through a helper process it starts
inside the driver root it is configured with (libnvidia-container's driver service: chroot
into the root, load libnvidia-ml and libcuda from it, answer over RPC). "initialization error:
driver (rpc) error: failed to process request" says that helper died before answering: the
root was not there to enter (NVIDIA/nvidia-docker#1246, the driver container's
/run/nvidia/driver), a driver library could not be loaded from it (OE4T/meta-tegra#1456:
"could not start driver service: load library failed: libcuda.so.1"), or another library
in it shadowed the driver's (NVIDIA/nvidia-container-toolkit#236). The words name the
driver. Where the CLI enters a root other than the host's own (the toolkit's config.toml
names one, or, without it, a driver container runs on the node: the GPU Operator's toolkit
then enters /run/nvidia/driver) and the node's own snapshot shows the driver answering NVML
for every GPU with persistence mode on, the driver served everyone but the CLI: the fault is
the CLI's view of the driver, the root it was pointed at. With the host's own root the same
words are the host driver's install (its libraries, a library shadowing them), and without
persistence mode the driver's slow first initialisation also ends the helper
(NVIDIA/nvidia-container-toolkit#556, a maintainer's answer): the driver keeps them, as it
does where no snapshot settles it. On WSL2's kernel the driver is the Windows host's, which
the helper reaches through /dev/dxg and the libraries the host places in the VM; the helper
failing there is the host giving the VM no driver to answer (a Windows build or a driver
without GPU support for WSL: docker/for-win#10379, #10587, #11208, microsoft/WSL#7627), the
driver not loaded as the node sees it.
"""

from __future__ import annotations

import msgspec

from gpunode.checks.context import NodeContext
from gpunode.checks.crashes import crashed_program
from gpunode.errors import ParseError
from gpunode.model import Finding
from gpunode.parse._toml import load_toml
from gpunode.relazy import lazy_compile

#: The CLI's report that its driver service ended before answering (the "rpc" word since
#: libnvidia-container 1.9).
_SERVICE_FAILED = lazy_compile(r"\binitialization error: driver (?:rpc )?error: failed to process request\b")
#: The toolkit's config file, wherever it is installed (the host's /etc, the operator's
#: /usr/local/nvidia/toolkit/.config).
_TOOLKIT_CONFIG = lazy_compile(r"(?:^|/)nvidia-container-runtime/config\.toml$")
_TOOLKIT = "container-toolkit"
#: The toolkit's cause for a CLI that cannot find the driver's libraries under its root.
_NO_LIBS = "container_cli_no_driver_libs"
#: The class of a stack program's crash (checks.kernel reads the kernel's record of it).
_CRASHED = "error_unclassified"
#: WSL2's kernels name themselves "-microsoft-standard" ("4.19.104-microsoft-standard",
#: "5.15.153.1-microsoft-standard-WSL2").
_WSL_KERNEL = lazy_compile(r"-microsoft-standard\b")
#: The driver's cause for a host that gives the node no driver to answer.
_NOT_LOADED = "driver_not_loaded"


def driver_answers(ctx: NodeContext) -> bool:
    """The node's nvidia-smi -q snapshot lists its GPUs, each in persistence mode: the driver
    is loaded, NVML answers, and its initialisation cannot time a client out."""
    report = ctx.nvidia_smi
    if report is None or not report.gpus:
        return False
    return all((gpu.persistence_mode or "").lower() == "enabled" for gpu in report.gpus)


def configured_root(ctx: NodeContext) -> str | None:
    """The driver root the toolkit's config.toml gives the CLI (``[nvidia-container-cli]
    root``; "/" where the file leaves it out), None where no readable config was collected."""
    for path, text in sorted(ctx.obs.files.items()):
        if _TOOLKIT_CONFIG.search(path) is None:
            continue
        try:
            cli = load_toml("/" + path, text).get("nvidia-container-cli")
        except ParseError:
            continue
        root = cli.get("root") if isinstance(cli, dict) else None
        return root if isinstance(root, str) and root else "/"
    return None


def enters_driver_root(ctx: NodeContext) -> bool:
    """The CLI enters a driver root other than the host's: its config names one, or, where no
    config was collected, a driver container runs here (the operator's toolkit then uses it)."""
    root = configured_root(ctx)
    if root is not None:
        return root.rstrip("/") != ""
    return bool(ctx.stack_pods("driver"))


def _read_from_words(ctx: NodeContext, finding: Finding) -> bool:
    """The finding is the driver's (the words say "driver error"), or the toolkit's with only
    its line's class (the rpc form names the CLI, not the driver): no catalogued cause yet."""
    if finding.component == "driver":
        return True
    return finding.component == _TOOLKIT and ctx.kb.get(finding.cause).component == "*"


def cli_view_of_driver(ctx: NodeContext, finding: Finding, line: str) -> Finding:
    """``finding`` (read from a GPU workload's hook error) moved to the toolkit's cause where
    its line is the CLI's failed driver service and the driver answers everyone else."""
    if not _read_from_words(ctx, finding) or _SERVICE_FAILED.search(line) is None:
        return finding
    if _TOOLKIT in _crashed_components(ctx):
        return _helper_crashed(ctx, finding)
    if finding.component == "driver" and wsl_kernel(ctx):
        return _as_cause(ctx, finding, _NOT_LOADED)
    if not driver_answers(ctx) or not enters_driver_root(ctx):
        return finding
    return _as_cause(ctx, finding, _NO_LIBS)


def wsl_kernel(ctx: NodeContext) -> bool:
    """The node runs WSL2's kernel ("5.10.16.3-microsoft-standard-WSL2"): its GPU driver is
    the Windows host's, reached through /dev/dxg and the libraries the host places under
    /usr/lib/wsl/lib; no NVIDIA module of its own loads."""
    node = ctx.node
    return node is not None and _WSL_KERNEL.search(node.status.node_info.kernel_version or "") is not None


def _as_cause(ctx: NodeContext, finding: Finding, code: str) -> Finding:
    """``finding`` carrying the catalogued cause ``code``."""
    known = ctx.kb.get(code)
    return msgspec.structs.replace(finding, component=known.component, cause=known.code,
                                   status=known.severity, specificity=known.specificity)


def _helper_crashed(ctx: NodeContext, finding: Finding) -> Finding:
    """``finding`` moved to the toolkit, with its line's class: the kernel recorded the CLI's
    own process killed by a fault (its driver helper runs the CLI's binary, "nvc:[driver]",
    OE4T/tegra-demo-distro#177), so the service died of the CLI's crash, not of the driver."""
    known = ctx.kb.get(_CRASHED)
    return msgspec.structs.replace(finding, component=_TOOLKIT, cause=known.code,
                                   status=known.severity, specificity=known.specificity)


def _crashed_components(ctx: NodeContext) -> set[str]:
    """The stack components whose programs the node's kernel log reports killed by a fault."""
    split = ctx.text_lines("cmd", "dmesg.txt") if ctx.obs.cmd.get("dmesg.txt") else None
    named = (crashed_program(line) for line in (split[0] if split else ()))
    return {owner for text in named if text and (owner := ctx.facts.catalog.named_in(text))}
