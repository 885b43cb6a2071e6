"""The driver's module build stopped by the kernel's build tree or its compiler.

Headers: a failing driver container whose compile stopped on a header the running kernel's
tree should hold (``kernel_tree_header_missing``; the catalogue's kernel_headers_missing
signature of nvidia-installer's log holds the same pattern and its sources).

Compiler: the build on a compiler other than the one that built the running kernel.

An out-of-tree module is compiled with the flags the kernel's build chose for its own
compiler; NVIDIA's build checks the compiler first. Its conftest (kernel-open/conftest.sh,
``cc_version_check``) takes the kernel's compiler from LINUX_COMPILER (the string the kernel
prints in its banner, /proc/version: "Linux version <release> (<user>@<host>) (gcc version
5.3.1 ...)" before 5.8, "(gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld ...)" since), the
first x.y.z of it (else x.y), and fails where ``__GNUC__`` or ``__GNUC_MINOR__`` of ``$CC``
differ; the older installers' gcc-version-check.c required the same major and minor. A build
log that holds both the running kernel's banner and ``gcc --version``'s first line ("gcc
(Ubuntu 5.4.0-6ubuntu1~16.04.1) 5.4.0 20160609", "cc (GCC) 8.5.0 20210514 (Red Hat 8.5.0-4)")
whose major.minor differ, in a driver container that keeps failing, is that mismatch in the
two programs' own words (NVIDIA/gpu-operator#564, NVIDIA/gpu-operator#18: a kernel built by a
newer GCC than the driver image's). A clang-built kernel, a banner of another kernel than the
node's, or a build that ended well say nothing here.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.bundle.kube import Pod
from gpunode.checks.base import check, logs_here, problem, reads
from gpunode.checks.context import NodeContext
from gpunode.facts import LogFile
from gpunode.model import Evidence, Finding
from gpunode.relazy import lazy_compile

#: The kernel's banner (init/version.c linux_banner, /proc/version) with a GCC build: the
#: release and the compiler string, whose first x.y.z (else x.y) is the version.
_BANNER = lazy_compile(r"\bLinux version (?P<release>\S+) \(\S+\) \((?P<cc>[\w.+-]*gcc\b.{0,300})")
#: ``gcc --version``'s (or ``cc --version``'s) first line: the program's name, its package
#: in parentheses, its version.
_CC_VERSION = lazy_compile(
    r"^(?:[\w.+-]*-)?g?cc(?:-\d+)?(?:\.real|\.br_real)? \([^)]{1,120}\) (?P<version>\d+\.\d+(?:\.\d+)?)\b")
_TRIPLE = lazy_compile(r"\b(\d+)\.(\d+)\.\d+\b")
_PAIR = lazy_compile(r"\b(\d+)\.(\d+)\b")
#: The driver container's word that it built and loaded the driver (it then waits).
_DONE = "Done, now waiting for signal"
_CAUSE = "gcc_mismatch"


def _major_minor(text: str) -> tuple[int, int] | None:
    """conftest.sh's reading of a compiler string: the first x.y.z, else the first x.y."""
    found = _TRIPLE.search(text) or _PAIR.search(text)
    return (int(found[1]), int(found[2])) if found else None


def _failing(pod: Pod) -> bool:
    """A pod whose containers restarted or are not ready."""
    statuses = pod.status.container_statuses
    return pod.status.phase != "Running" or any(cs.restart_count or not cs.ready for cs in statuses)


def _mismatch(log: LogFile, kernel: str) -> tuple[str, str] | None:
    """The banner line and the compiler line of ``log`` whose versions differ, or None."""
    lines = log.lines
    if any(_DONE in line for line in lines):
        return None
    banner = next((m for line in lines if "Linux version " in line
                   and (m := _BANNER.search(line)) is not None), None)
    compiler = next((m for line in lines if "cc" in line
                     and (m := _CC_VERSION.match(line.strip())) is not None), None)
    if banner is None or compiler is None or (kernel and banner["release"] != kernel):
        return None
    built, current = _major_minor(banner["cc"]), _major_minor(compiler["version"])
    if built is None or current is None or built == current:
        return None
    return banner.string.strip()[:300], compiler.string.strip()[:200]


#: Both builds' checks read only the logs of the driver's failing pods on the node.
_DRIVER_LOGS = logs_here("driver")


@check("driver", may_find=_DRIVER_LOGS)
def kernel_compiler_differs(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A failing driver container whose build log shows the running kernel built by one
    GCC release and its own compiler of another (module docstring)."""
    node = ctx.node
    kernel = node.status.node_info.kernel_version if node is not None else ""
    for sp in ctx.stack_pods(component):
        if not _failing(sp.pod):
            continue
        for log in ctx.logs_of(sp.pod):
            found = _mismatch(log, kernel)
            if found is not None:
                banner, compiler = found
                ev = Evidence(log.path, f"kernel: {banner}; compiler: {compiler}")
                yield problem(component, _CAUSE, ev, specificity=ctx.kb.get(_CAUSE).specificity)
                return


_HEADERS, _INCOMPATIBLE = "kernel_headers_missing", "driver_kernel_incompatible"
#: The compiler stopping on a header the running kernel's build tree should hold (the
#: catalogue's kernel_headers_missing signature of nvidia-installer's log, where its sources
#: are cited): a file of that tree or kbuild's generated <module>.mod.c including a header
#: the tree lacks, a header every configured tree generates, kbuild's stop for an
#: unprepared tree. gcc's words and clang's.
TREE_HEADER_MISSING = (
    r"""(?:(?:^|[\s:])(?:\.{1,2}/)*include/\S{1,200}|/(?:usr/src/(?:linux-headers-|kernels/|linux-)"""
    r"""|lib/modules/)\S{1,300}|\S{1,300}\.mod\.c):\d+:\d+: fatal error: ['"]?[\w./+-]{1,200}['"]?"""
    r"""(?:: No such file or directory| file not found)|fatal error: ['"]?(?:\S{0,300}/)?"""
    r"""(?:generated/[\w./-]{1,100}|linux/(?:version|autoconf)\.h)['"]?"""
    r"""(?:: No such file or directory| file not found)"""
    r"""|\binclude/generated/autoconf\.h or include/config/auto\.conf are missing\b""")
_TREE_HEADER = lazy_compile(TREE_HEADER_MISSING)
_GATE = ("fatal error: ", "auto.conf are missing")


@check("driver", may_find=_DRIVER_LOGS)
def kernel_tree_header_missing(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A failing driver container whose module build stopped on a header of the running
    kernel's build tree: the headers are incomplete. The compiler's line says why the
    object did not compile, so it ranks above make's line for that object, which alone is
    read as the driver's sources not fitting the kernel (driver_kernel_incompatible)."""
    for sp in ctx.stack_pods(component):
        if not _failing(sp.pod):
            continue
        for log in ctx.logs_of(sp.pod):
            index = next((i for i, line in enumerate(log.lines)
                          if any(g in line for g in _GATE) and _TREE_HEADER.search(line)), None)
            if index is not None:
                ev = Evidence(f"{log.path}:{index + 1}", log.lines[index].strip()[:300])
                rank = max(ctx.kb.get(_HEADERS).specificity, ctx.kb.get(_INCOMPATIBLE).specificity + 1)
                yield problem(component, _HEADERS, ev, specificity=rank)
                return


_INSTALLER_LOG = "var/log/nvidia-installer.log"
#: DKMS's own stop before it builds anything, when the running kernel's build tree is absent
#: ("Your kernel headers for kernel <release> cannot be found at /lib/modules/<release>/build
#: or /lib/modules/<release>/source.", dkms's prepare_kernel; older releases print it after
#: "Error! echo"), as the host installer's log quotes it under "Failed to run `dkms build`".
_DKMS_NO_HEADERS = lazy_compile(r"\bYour kernel headers for kernel \S{1,200} cannot be found\b")


@check("driver", may_find=reads(f"files/{_INSTALLER_LOG}"))
def dkms_headers_missing(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The host installer's log where DKMS found no headers for the running kernel: the
    catalogue's kernel_headers_missing signature, ranked above the failed ``dkms build`` the
    same run quotes (driver_kernel_incompatible's signature), which the missing tree caused.
    A signature: it refines a driver already seen failing, so an old run's log on a node whose
    driver serves its GPUs says nothing."""
    split = ctx.text_lines("files", _INSTALLER_LOG)
    if split is None or "kernel headers" not in split[1]:
        return
    index = next((i for i, line in enumerate(split[0]) if _DKMS_NO_HEADERS.search(line)), None)
    if index is None:
        return
    ev = Evidence(f"{ctx.obs.path_of('files', _INSTALLER_LOG)}:{index + 1}", split[0][index].strip()[:300])
    rank = max(ctx.kb.get(_HEADERS).specificity, ctx.kb.get(_INCOMPATIBLE).specificity + 1)
    yield problem(component, _HEADERS, ev, specificity=rank, signature="true")
