"""A driver library in a GPU container whose own dependency the dynamic linker cannot find.

The driver's user-space libraries link each other by the full driver version
(libEGL_nvidia.so.0 needs libnvidia-eglcore.so.550.163.01 and libnvidia-glsi.so.550.163.01;
libGLX_nvidia needs libnvidia-glcore.so.<version>), while a program links the driver's
interfaces by their ABI soname (libcuda.so.1, libnvidia-ml.so.1, libnvidia-encode.so.1). So
ldd's answer for an unresolved dependency (ldd(1): "name => not found") naming a driver
library at a driver version says that a driver library is in the container and one it needs
from the same driver is not. The driver installs them together on the host, and the NVIDIA
runtime (its hook's library list, or the CDI spec the toolkit wrote) is what puts them into
the container: the toolkit's library discovery left the dependency out. Seen on Debian, whose
packages split the driver's libraries between ``/usr/lib/<triplet>`` and ``.../nvidia/current``
(gazebosim/gz-sim#1272: libnvidia-glsi/eglcore/glcore missing under the mounted
libEGL_nvidia; NVIDIA/nvidia-container-toolkit#1908: ``nvidia-ctk cdi generate`` omitting
libnvidia-eglcore/glcore/glsi/tls there) and with an injected EGL library whose helper was
not (NVIDIA/nvidia-container-toolkit#264, libnvidia-egl-gbm present on the host, absent in
the container).

A program's own dependency at an ABI soname (libnvidia-encode.so.1 where the container did not
ask for the video capability) is not read, nor a driver library at a release other than the
node's own driver: the image's copy, not the runtime's.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from gpunode.checks.base import any_logged_workload, check
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.checks.versions import HOST_VERSIONS
from gpunode.decisive import MAX_LINE, Decisive
from gpunode.model import Finding, Status
from gpunode.relazy import lazy_compile

#: ldd's line for an unresolved dependency that is a driver library at a driver version
#: (a release of three digits, then one or two numbers: 550.163.01, 580.95.05, 418.87).
_DEPENDENCY_NOT_FOUND = lazy_compile(
    r"^\s*lib[\w-]*nvidia[\w-]*\.so\.(?P<version>\d{3}\.\d+(?:\.\d+)?) => not found\b")
#: The leading release numbers of a driver version as the node's readers give it.
_RELEASE = lazy_compile(r"^\d+(?:\.\d+)+")


def missing_driver_dependency(lines: Sequence[str], host: str | None) -> Decisive | None:
    """The last ldd line of ``lines`` that finds no driver library at a driver version, where
    that version is the node's own driver (``host``) or the node's is not known; None else."""
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        if "=> not found" not in line:
            continue
        said = _DEPENDENCY_NOT_FOUND.search(line)
        if said is None or not _same_release(said["version"], host):
            continue
        return Decisive(index + 1, line.strip()[:MAX_LINE], 1)
    return None


def _same_release(version: str, host: str | None) -> bool:
    """Whether a library's driver version is the node's driver release (its leading numbers,
    as readers give it: "550.163.01", the driver container's "570.133.20-ubuntu22.04"), or
    the node's release is not known."""
    head = _RELEASE.match(host or "")
    if head is None:
        return host is None
    parts = version.split(".")
    return head.group().split(".")[:len(parts)] == parts


@check("container-toolkit", may_find=any_logged_workload)
def driver_dependency_not_injected(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A GPU workload's ldd finding no driver library its mounted driver library needs: the
    toolkit left a driver file out of the container (one finding per node, the first job)."""
    for pod, log in ctx.workload_logs():
        if not any("=> not found" in line for line in log.lines):
            continue  # the node's driver is read only for a log that has ldd's answer
        found = missing_driver_dependency(log.lines, HOST_VERSIONS["driver"](ctx))
        if found is None:
            continue
        meta = pod.metadata
        yield line_finding(ctx.kb, component, Status.FAILED, found, f"{log.path}:{found.line_no}",
                           verb=f"left a driver library out of GPU workload {meta.namespace}/{meta.name}",
                           line_class="error_not_found", standalone="true", namespace=meta.namespace,
                           pod=meta.name, container=log.container)
        return
