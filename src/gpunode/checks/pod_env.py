"""A GPU workload's failure that its own request to NVIDIA's runtime explains.

NVIDIA's runtime gives a container what its ``NVIDIA_VISIBLE_DEVICES`` and
``NVIDIA_DRIVER_CAPABILITIES`` ask for (gpunode.podenv, the container toolkit's environment
variables: https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html).
Where the pod spec sets them literally, a workload's finding against the stack is the pod's
own configuration when

* the driver library its line names missing (libcuda, libnvidia-encode, ...), or CUDA's
  answer without libcuda (PyTorch's "Found no NVIDIA driver", "CUDA driver version is
  insufficient" where no library was loaded), belongs to a capability the container's list
  leaves out (not ``all``): the runtime mounted what was asked (mudler/LocalAI#11973: a
  compose file asking for ``gpu, utility`` only, no libcuda);
* the container asks for no GPU (``void`` or empty: nothing at all; ``none``: the driver's
  files but no device) and its words say it has no driver library or no GPU;
* the device id the toolkit's CLI refuses as unknown is one the pod spec lists itself, not
  one the device plugin allotted (NVIDIA/enroot#207: a job keeping host indexes 0,1,4,5);
* the refused id is a MIG device in the name form drivers before R470 used,
  ``MIG-GPU-<GPU UUID>/<GI>/<CI>``, on a node whose driver is 470 or newer: those drivers name
  MIG devices ``MIG-<UUID>`` only and refuse the old form, and no plugin reading that driver
  hands it out, so the request was written in the old form by whoever configured it (LXD's
  ``mig.gi``/``mig.ci`` keys, replaced by ``mig.uuid``: canonical/lxd#9518; the toolkit
  maintainer's answer in NVIDIA/nvidia-container-toolkit#203). A node whose driver version was
  not collected keeps the finding.

Such a finding is dropped: the stack did what it was asked. A variable not set in the spec,
or set through ``valueFrom``, is not known (the image may set it), and nothing changes. Where
CDI injects by default the runtime's spec may mount every library whatever is asked, so the
capability reading is not made there.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import Final

from gpunode.bundle.kube import Pod
from gpunode.checks.base import MESSAGE
from gpunode.checks.context import NodeContext
from gpunode.checks.versions import driver_branch
from gpunode.model import Finding
from gpunode.podenv import NvidiaEnv, library_capability, nvidia_env
from gpunode.relazy import lazy_compile

#: Causes of a container that got no driver library (the toolkit's, CUDA's answer without one,
#: plain runc where NVIDIA's runtime is not the default).
_NO_LIBRARY_CAUSES: Final = frozenset({"container_cli_no_driver_libs", "cuda_driver_too_old",
                                       "nvidia_not_default_runtime"})
#: CUDA's words where libcuda could not be loaded: PyTorch's "Found no NVIDIA driver on your
#: system", the runtime API's cudaErrorInsufficientDriver.
_NO_LIBCUDA = lazy_compile(r"Found no NVIDIA driver|CUDA driver version is insufficient")
#: The words that say the driver answered (a version read, a device counted): libcuda was there.
_DRIVER_READ = lazy_compile(r"found version \d|driver version (?:is )?\d", re.IGNORECASE)
#: The toolkit CLI's refusal of a device id: 'device error: 4: unknown device', older
#: 'device error: unknown device id: GPU-...'.
_UNKNOWN_ID = lazy_compile(r"device error: (?:unknown device id: (?P<old>[^\s\"\\]+)"
                           r"|(?P<id>[^\s\"\\:]+): unknown device\b)")
#: A MIG device in the pre-R470 name form, 'MIG-GPU-<GPU UUID>/<GI>/<CI>'.
_LEGACY_MIG = lazy_compile(r"^MIG-GPU-[0-9A-Fa-f-]+/\d+/\d+$")
#: The first driver branch that names MIG devices by their own UUID and refuses the old form.
_MIG_UUID_BRANCH: Final = 470
#: The job's words for a container with no GPU or no driver library.
_NO_GPU = lazy_compile(r"no CUDA-capable device|No CUDA GPUs are available|No devices were found"
                       r"|Found no NVIDIA driver|cannot open shared object file|NVIDIA-SMI has failed"
                       r"|nvidia-smi: (?:command )?not found", re.IGNORECASE)


def not_asked_for(ctx: NodeContext, findings: Iterable[Finding],
                  cdi_by_default: Callable[[NodeContext], bool]) -> Iterator[Finding]:
    """``findings`` without those a GPU workload's own NVIDIA variables explain;
    ``cdi_by_default``: whether CDI may inject into a pod without asking the runtime
    (checks.workload_logs' reading, passed in: this module sits beside it)."""
    pods: dict[tuple[str, str], Pod] | None = None
    for finding in findings:
        where = (finding.context.get("namespace"), finding.context.get("pod"))
        if where[0] is None or where[1] is None:
            yield finding
            continue
        if _legacy_mig_refused(finding.context.get(MESSAGE, ""), partial(driver_branch, ctx)):
            continue
        if pods is None:
            pods = {(p.metadata.namespace, p.metadata.name): p
                    for p in ctx.facts.workloads_by_node.get(ctx.name, ())}
        pod = pods.get((where[0], where[1]))
        env = _container_env(pod, finding.context.get("container")) if pod is not None else None
        if env is None or not own_request(env, finding, partial(cdi_by_default, ctx)):
            yield finding


def _legacy_mig_refused(line: str, driver_major: Callable[[], int | None]) -> bool:
    """The toolkit's CLI refuses a MIG device named in the pre-R470 form on a node whose driver
    (``driver_major``, None where not collected) is 470 or newer."""
    refused = _UNKNOWN_ID.search(line)
    if refused is None or not _LEGACY_MIG.match(refused.group("old") or refused.group("id") or ""):
        return False
    major = driver_major()
    return major is not None and major >= _MIG_UUID_BRANCH


def _container_env(pod: Pod, container: str | None) -> NvidiaEnv | None:
    """The env of the named container, else of the pod's only container."""
    ctrs = pod.spec.containers
    named = [c for c in ctrs if c.name == container] if container else list(ctrs)
    return nvidia_env(named[0]) if len(named) == 1 else None


def own_request(env: NvidiaEnv, finding: Finding, cdi_by_default: Callable[[], bool]) -> bool:
    """Whether the container's own NVIDIA variables explain the finding's line."""
    line = finding.context.get(MESSAGE, "")
    refused = _UNKNOWN_ID.search(line)
    if refused is not None:
        return (refused.group("old") or refused.group("id")) in env.devices()
    library = library_capability(line)
    without_libcuda = finding.cause in _NO_LIBRARY_CAUSES and _no_libcuda(line)
    if env.asks_nothing() and (library is not None or without_libcuda or _NO_GPU.search(line) is not None):
        return True
    if env.asks_no_gpu() and library is None and _NO_GPU.search(line) is not None:
        return True
    wanted = library or ("compute" if without_libcuda else None)
    return wanted is not None and env.lacks(wanted) and not cdi_by_default()


def _no_libcuda(line: str) -> bool:
    return _NO_LIBCUDA.search(line) is not None and _DRIVER_READ.search(line) is None

