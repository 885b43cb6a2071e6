"""A GPU container's seccomp rule refused because the spec reached runc without its errno.

runc loads the seccomp profile of the OCI spec through libseccomp, which refuses a rule whose
action is the profile's default action ("error adding seccomp filter rule for syscall clone3:
permission denied"; before runc 1.0 "error adding seccomp rule for syscall socket: ...").
Docker 20.10.10 and CRI-O's profiles give such rules their own errno (``errnoRet``, ENOSYS for
clone3); a program between the engine and runc that decodes and re-encodes the spec with an
older runtime-spec drops the field, and the rule becomes the default action. In a GPU
container that program is NVIDIA's runtime (nvidia-container-runtime 3.5 and older, Jetson's
of JetPack 4.6): the same container starts with runc alone and with the rebuilt runtime
(NVIDIA/nvidia-container-runtime#157, NVIDIA/nvidia-container-toolkit#507 and #9,
containerd/containerd#6203: fixed by NVIDIA's updated packages). Without NVIDIA's runtime in
the path the same line is runc's own, too old for the profile (containerd/nerdctl#414, fixed
by a newer runc): a workload whose RuntimeClass names another handler stays the runtime's.
The GPU operands (device plugin, GFD, exporter) run through NVIDIA's runtime too, so the same
refusal while their container is created is read alike; the toolkit's and the driver's own
pods, which run with runc alone, keep theirs.

Kept apart from the checks that register themselves, so importing it registers nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gpunode.bundle.kube import Pod
from gpunode.catalog import Catalog
from gpunode.relazy import lazy_compile

#: runc's refusal to add one rule of the spec's seccomp profile (both wordings of runc's
#: seccomp patchbpf/libseccomp layer), whatever the syscall.
_RULE_REFUSED = lazy_compile(
    r"\berror adding seccomp (?:filter )?rule for syscall \w+: (?:permission denied|operation not permitted)")


def nvidia_runtime_path(pod: Pod | None) -> bool:
    """The GPU workload ``pod`` runs through NVIDIA's runtime as far as its spec says: it
    names no RuntimeClass (the node's default, which on a GPU node the toolkit sets) or one
    of NVIDIA's; another handler (kata, runsc) leaves the toolkit's runtime out."""
    handler = pod.spec.runtime_class_name if pod is not None else None
    return not handler or handler.startswith("nvidia")


def spec_errno_dropped(line: str, pod: Pod | None) -> bool:
    """``line`` is runc refusing a seccomp rule of a GPU workload started through NVIDIA's
    runtime: the spec the runtime rewrote lost the rule's errno (the module docstring)."""
    return rule_refused(line) and nvidia_runtime_path(pod)


#: The component whose runtime rewrites a GPU container's spec.
_TOOLKIT = "container-toolkit"


def operand_errno_dropped(catalog: Catalog, component: str, pods: Sequence[Pod],
                          named: Callable[[str], str | None]) -> Callable[[str], str | None]:
    """``named`` for the lines of a GPU operand ``component`` (one that needs NVIDIA's runtime:
    the device plugin, GFD, the exporter), reading a seccomp rule runc refused as the toolkit's
    where its pods run through NVIDIA's runtime (``nvidia_runtime_path``); the toolkit's own
    pods and the driver's, which run with runc alone, keep ``named``."""
    if _TOOLKIT not in catalog.dependencies(component) or not all(nvidia_runtime_path(p) for p in pods):
        return named

    def reading(line: str) -> str | None:
        return _TOOLKIT if spec_errno_dropped(line, None) else named(line)
    return reading



def rule_refused(line: str) -> bool:
    """``line`` is runc refusing a rule of a container's seccomp profile, whoever's container
    it is: read with the node's runtime config where no pod tells (``checks.named``)."""
    return "seccomp" in line and _RULE_REFUSED.search(line) is not None
