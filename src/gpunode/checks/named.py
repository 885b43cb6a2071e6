"""The layer an error line names on one node: the catalog's words (``named_by``), then
what only the node's facts tell (the host path its platform installs the driver under).

A line printed by one component often names a lower one: a pod that cannot mount the
driver's install folder fails because the driver is not installed yet, not because of
the pod. The catalog names components by their words; a path belongs to a layer only
through the node's platform, so that reading is here, next to the catalog's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from functools import cache

from gpunode.catalog import Catalog
from gpunode.checks.context import NodeContext
from gpunode.checks.seccomp_spec import rule_refused
from gpunode.relazy import lazy_compile


def named_on_node(ctx: NodeContext, line: str) -> str | None:
    """The lowest layer ``line`` names on this node, or None."""
    hook = (low_level_runtime_absent(ctx, line) or _dra_prepare_owner(ctx.facts.catalog, line)
            or _resource_owner(ctx, line)
            or _plugin_spec_owner(ctx, line) or _spec_device_owner(ctx, line)
            or _sharing_spec_owner(ctx, line)
            or hook_layer(ctx.facts.catalog.named_in, line)
            or _cni_dir_rewritten(ctx, line) or default_errno_dropped(ctx, line))
    if hook is not None:
        return hook
    target = ctx.facts.catalog.named_in(line) or _driver_setting(ctx, line)
    if target == "driver" and _display_module_only(line) and _driver_serves(ctx):
        return None  # the step that asked for a display module, not the driver
    if target is not None:
        return target
    root = ctx.platform.driver_root.rstrip("/")
    if root and _driver_root_missing(root).search(line):
        return "driver"
    if _DEVICE_UNDER_ROOT.search(line):
        return "device-plugin" if _host_driver(ctx) else "driver"
    return None


#: GPU performance counters refused for privilege, in NVML's words ("Unable to get the NvLink
#: link utilization counter control for link 0: Insufficient Permissions") or the profilers'
#: (ERR_NVGPUCTRPERM): the driver restricts them to admin users when its module parameter says
#: so (RmProfilingAdminOnly, set by NVreg_RestrictProfilingToAdminUsers).
#: The NVIDIA runtime's words for a low-level OCI runtime it found at none of the candidates its
#: config lists (nvidia-container-toolkit, internal/oci: "error locating runtime: no runtime
#: binary found from candidate list: %v", wrapped by "error constructing low-level runtime").
_CANDIDATES_ABSENT = lazy_compile(r"\bno runtime binary found from candidate list: \[(?P<names>[^\]]*)\]")
#: The toolkit's default list (config.toml ``nvidia-container-runtime.runtimes``).
_DEFAULT_CANDIDATES = ("docker-runc", "runc", "crun")
_RUNTIME = "container-runtime"


def low_level_runtime_absent(ctx: NodeContext, line: str) -> str | None:
    """The container runtime, where ``line`` is the NVIDIA runtime finding none of its default
    low-level candidates on a Docker node. The words are the toolkit's, and elsewhere they are
    its own lookup: CRI-O installs runc and crun under /usr/libexec/crio, off the list's search
    path, and a list edited in the toolkit's config (balena-runc missing from it) names what the
    config asked for. Docker's packages put runc (docker-runc before Docker 18.09) on the
    host's path, where the default list finds it; none of them found there is the engine's own
    runc missing (an installation without the engine: a WSL distribution with only Docker's
    client, the daemon absent). None elsewhere, and for a list other than the default."""
    if "candidate list" not in line:
        return None
    found = _CANDIDATES_ABSENT.search(line)
    if found is None or tuple(found["names"].replace(",", " ").split()) != _DEFAULT_CANDIDATES:
        return None
    return _RUNTIME if ctx.runtime_kind == "docker" else None


_COUNTERS_REFUSED = lazy_compile(
    r"(?i:\bcounters?\b.{0,200}\bInsufficient Permissions\b|\bERR_NVGPUCTRPERM\b)")
#: The driver's parameter, as /proc/driver/nvidia/params shows it, restricting them.
_ADMIN_ONLY = lazy_compile(r"(?m:^RmProfilingAdminOnly: 1\s*$)")


def _driver_setting(ctx: NodeContext, line: str) -> str | None:
    """The driver, where ``line`` refuses the GPU's performance counters and the node's driver
    parameters in the bundle restrict them to admin users: a non-admin monitor refused the
    counters meets the driver's setting (gpuopenanalytics/pynvml#19; the fix is the module
    parameter or an admin monitor: cihlab/fics-cluster-guide#4, IBM/powerai#35)."""
    if not _COUNTERS_REFUSED.search(line):
        return None
    text = ctx.obs.files.get("proc/driver/nvidia/params")
    return "driver" if text is not None and _ADMIN_ONLY.search(text) is not None else None


#: The component whose runtime rewrites the spec of every container where it is the default.
_SPEC_REWRITER = "container-toolkit"


def default_errno_dropped(ctx: NodeContext, line: str) -> str | None:
    """The toolkit, where ``line`` is runc refusing a seccomp rule on a node whose runtime
    config makes NVIDIA's runtime the default (Docker's default-runtime, containerd's or
    CRI-O's default handler): every container, GPU or not, then goes through the spec rewrite
    that drops the rule's errno (checks.seccomp_spec; NVIDIA/nvidia-container-runtime#157:
    every container on the host failed), so a line no pod tells of (the runtime's journal)
    is read alike. None elsewhere."""
    if not rule_refused(line):
        return None
    setup = ctx.runtime_setup
    return _SPEC_REWRITER if setup is not None and setup.default_is_nvidia else None


#: The Container Device Interface's own words: what a DRA driver writes for its claims as the
#: container toolkit writes its specs for the NVIDIA runtime.
_CDI_WORDS = lazy_compile(r"\bCDI\b|cdi\.k8s\.io")


def _dra_prepare_owner(catalog: Catalog, line: str) -> str | None:
    """The layer a DRA driver's prepare step relayed by the kubelet ('Failed to prepare dynamic
    resources … NodePrepareResources failed for claim …: …') names: the DRA driver writes the
    claim's CDI spec itself (Kubernetes' DRA design), so CDI words there are its own work, not
    the container toolkit's (kubernetes/kubernetes#124090: the driver could not chmod the spec
    it wrote). A lower layer the line names besides CDI (the driver's NVML) still wins."""
    if catalog.named_in(line) != "container-toolkit":
        return None
    if "dra-kubelet-plugin" not in catalog.all_named_in(line):
        return None
    return catalog.named_in(_CDI_WORDS.sub(" ", line))


#: The kubelet's device manager speaking of one plugin's endpoint by the extended resource it
#: serves: '"listAndWatch ended unexpectedly for device plugin" err="rpc error: …"
#: resourceName="volcano.sh/vgpu-number"' (kubelet pkg/kubelet/cm/devicemanager).
_PLUGIN_RESOURCE = lazy_compile(r'\bdevice plugin\b.{0,400}?\bresourceName="?([\w.-]+/[\w.-]+)')


def _resource_owner(ctx: NodeContext, line: str) -> str | None:
    """The component that advertises the resource a kubelet line about a device plugin's
    endpoint names (volcano-sh/devices#59: the stream of Volcano's vGPU plugin ended), by its
    name or its socket's (``_socket_resource``), the GPU device plugin serving the node where
    several advertise it; None where the line names no device plugin's resource or no
    component advertises it."""
    found = _PLUGIN_RESOURCE.search(line)
    resource = found.group(1) if found is not None else _socket_resource(line)
    if resource is None:
        return None
    return resource_owner(ctx.facts.catalog, _running_plugins(ctx), resource)


#: The kubelet failing to reach a device plugin at the socket it registered, by the socket's
#: path ('"Can't create new endpoint with socket path" err="failed to dial device plugin:
#: context deadline exceeded" path=".../plugins_registry/mellanox.com_mlnx_sriov_rdma.sock"',
#: the older 'Can't create new endpoint with path /tmp/mock.sock err failed to dial device
#: plugin', client.go's 'Unable to connect to device plugin client with socket path', the older
#: plugin watcher's 'RegisterPlugin error -- dial failed at socket <path>, err: failed to dial
#: socket <path>, err: context deadline exceeded'; a plugin relaying it: 'failed to dial device
#: plugin with socketPath <path>'). gRPC's own "Reconnecting..." warnings are retries. A
#: socket named <domain>_<name>.sock is the endpoint of resource <domain>/<name>, as plugins name it
#: (the SR-IOV plugin's <prefix>_<resource>, ROCm's and kubevirt's "endpoint amd.com_gpu").
_PLUGIN_SOCKET = lazy_compile(
    r"(?:\bfailed to dial (?:device plugin|socket)|\bdial failed at socket"
    r"|[Uu]nable to connect to device plugin|[Cc]an.t create new endpoint)"
    r".{0,400}?/(?P<domain>[a-z0-9-]+(?:\.[a-z0-9-]+)+)_(?P<name>[\w.-]+?)\.sock\b")


def _socket_resource(line: str) -> str | None:
    """The extended resource a kubelet line about a device plugin's unreachable socket names
    by the socket's file name, or None where the line or the name says none."""
    found = _PLUGIN_SOCKET.search(line)
    return f"{found['domain']}/{found['name']}" if found is not None else None


def resource_owner(catalog: Catalog, running: Collection[str], resource: str) -> str | None:
    """The component advertising ``resource``: the one catalogued component that can, else
    the GPU device plugin serving the node (``running``) where it is one of several that can."""
    owners = catalog.advertisers(resource)
    if len(owners) <= 1:
        return owners[0] if owners else None
    serving = serving_plugin(catalog, running)
    return serving if serving in owners else None


def host_driver(ctx: NodeContext) -> bool:
    """``_host_driver``, for the node facts other checks carry."""
    return _host_driver(ctx)


def _running_plugins(ctx: NodeContext) -> list[str]:
    """The GPU device plugins (NVIDIA's and those that replace it) with a pod on this node."""
    return [c.id for c in ctx.facts.catalog.replacers("device-plugin") if ctx.stack_pods(c.id)]


def serving_plugin(catalog: Catalog, running: Collection[str]) -> str:
    """The GPU device plugin serving a node: one that replaces NVIDIA's (HAMi's) where it runs
    there (``running``), else NVIDIA's."""
    return next((c.id for c in catalog.replacers("device-plugin") if c.id in running), "device-plugin")


def _spec_device_owner(ctx: NodeContext, line: str) -> str | None:
    """``spec_device_owner`` with the components that have pods on this node."""
    if _SPEC_DEVICE.search(line) is None:
        return None
    return spec_device_owner(ctx.facts.catalog, _running_plugins(ctx), _host_driver(ctx), line)


def spec_device_owner(catalog: Catalog, running: Collection[str], on_host: bool, line: str) -> str | None:
    """The GPU device plugin serving the node where the runtime, applying a container's device
    specs while it generates the spec, finds a GPU device node missing (containerd's 'failed to
    apply OCI options: lstat /dev/nvidiactl: no such file or directory'), on a node whose driver
    is loaded on the host, so that the device node exists there: the path is one the plugin's
    allocation handed the kubelet (Project-HAMi/HAMi#776: HAMi's passDeviceSpecsEnabled). One
    that replaces NVIDIA's where it runs here, else NVIDIA's. None where the driver is not known
    to be on the host (``on_host``: the device node may truly be missing, the driver's fault)."""
    if _SPEC_DEVICE.search(line) is None or not on_host:
        return None
    return serving_plugin(catalog, running)


#: The CRI's words for a CNI plugin it could not find, with the folders it searched (libcni's
#: 'failed to find plugin "gke" in path [/opt/cni/bin]', Go's %v of the list: space-separated).
_CNI_NOT_FOUND = lazy_compile(r'failed to find plugin \\?"[\w.-]+\\?" in path \[([^\]]*)\]')
#: The component of ours that rewrites the container runtime's config on a GPU node.
_CONFIG_WRITER = "container-toolkit"


def _cni_dir_rewritten(ctx: NodeContext, line: str) -> str | None:
    """The toolkit, where a sandbox's CNI plugin was looked for only outside the folder the
    node's platform installs its CNI plugins in (GKE's /home/kubernetes/bin): the config the
    runtime reads lost the platform's CNI bin_dir, and on a node where the toolkit runs it is
    the toolkit that rewrites that config (NVIDIA/nvidia-container-toolkit#1222: containerd 2's
    CNI section written back with the default /opt/cni/bin). The platform's folder among those
    searched is a plugin really missing, and a node without the toolkit, or on a platform that
    keeps containerd's default, is the network's own business."""
    own = ctx.platform.cni_bin_dir
    if not own or "failed to find plugin" not in line:
        return None
    found = _CNI_NOT_FOUND.search(line)
    if found is None or own.rstrip("/") in (d.rstrip("/") for d in found.group(1).split()):
        return None
    return _CONFIG_WRITER if ctx.stack_pods(_CONFIG_WRITER) else None


#: A CDI device the runtime cannot resolve, of the kind NVIDIA's device plugin writes its own
#: spec for when it hands devices to the runtime through CDI (its cdi-cri strategy, kept by
#: HAMi's fork: 'unresolvable CDI devices k8s.device-plugin.nvidia.com/gpu=MIG-...'). The
#: toolkit's specs are of other kinds (nvidia.com/gpu, management.nvidia.com/gpu), so a device
#: of this kind missing is a spec the plugin did not write or rewrite (Project-HAMi/HAMi#1903).
_PLUGIN_CDI_KIND = lazy_compile(r"unresolvable CDI devices?:? .{0,200}?\bk8s\.device-plugin\.nvidia\.com/")
#: The toolkit's CLI refusing a device id it was handed ('nvidia-container-cli: device error:
#: unknown device id: GPU-a1ff...', newer 'device error: GPU-23a1...: unknown device'): in a
#: pod the ids come from the Allocate of the plugin that served its GPU request, so an id no
#: GPU of the node has is the plugin's (a UUID kept from hardware the node no longer has,
#: NVIDIA/k8s-device-plugin#98; a placeholder a sharing plugin hands out when no GPU fits,
#: 'no-gpu-has-2MiB-to-run', AliyunContainerService/gpushare-scheduler-extender#80; HAMi's
#: Project-HAMi/HAMi#411). A path instead of an id is the volume-mounts strategy's list the
#: toolkit was not set to read: the toolkit's setting, left to the words that name it.
_UNKNOWN_DEVICE_ID = lazy_compile(
    r"nvidia-container-cli(?:\.real)?: device error: "
    r"(?:unknown device id: (?!/)[^\s\\\"]+|(?!/)[^\s\\\"]+?: unknown device\b)")
_PLUGIN_DEVICE = (_PLUGIN_CDI_KIND, _UNKNOWN_DEVICE_ID)


def _plugin_device(line: str) -> bool:
    """The line reports a device the serving plugin's allocation named that the runtime's side
    cannot resolve (``_PLUGIN_CDI_KIND``, ``_UNKNOWN_DEVICE_ID``)."""
    return any(p.search(line) is not None for p in _PLUGIN_DEVICE)


def _plugin_spec_owner(ctx: NodeContext, line: str) -> str | None:
    """``plugin_spec_owner`` with the components that have pods on this node."""
    if not _plugin_device(line):  # most lines: skip reading the node's pods
        return None
    return plugin_spec_owner(ctx.facts.catalog, _running_plugins(ctx), line)


def _sharing_spec_owner(ctx: NodeContext, line: str) -> str | None:
    """``sharing_spec_owner`` with the components that have pods on this node."""
    if _CDI_PATH_MISSING.search(line) is None:  # most lines: skip reading the node's pods
        return None
    return sharing_spec_owner(ctx.facts.catalog, _running_plugins(ctx), line)


def plugin_spec_owner(catalog: Catalog, running: Collection[str], line: str) -> str | None:
    """The GPU device plugin serving the node where ``line`` reports a device its allocation
    named unresolvable (one of its own CDI spec, or an id the toolkit's CLI does not know):
    one that replaces NVIDIA's (HAMi's) where it runs there (``running``), else NVIDIA's.
    None for any other line."""
    if not _plugin_device(line):
        return None
    return serving_plugin(catalog, running)


#: A path a CDI spec records that the runtime could not find while applying it: a host device
#: node ('failed to stat CDI host device "/dev/nvidia-modeset": no such file or directory') or
#: the program of a hook at a stage only CDI specs use ('error running createContainer hook #0:
#: fork/exec /usr/bin/nvidia-ctk: no such file or directory'; the legacy runtime's hook runs at
#: prestart).
_CDI_PATH_MISSING = lazy_compile(
    r'failed to stat CDI host device "?/[^\s"]+"?: no such file or directory'
    r"|error running (?:createContainer|createRuntime|startContainer) hook #\d+: fork/exec /\S+: "
    r"no such file or directory")
#: The GPU device plugin that serves a node where no other does.
_NVIDIA_PLUGIN = "device-plugin"


def sharing_spec_owner(catalog: Catalog, running: Collection[str], line: str) -> str | None:
    """The sharing plugin that replaces NVIDIA's (HAMi's) where it serves the node and ``line``
    reports a path of a CDI spec missing on the host: in CDI mode it writes the spec for the
    devices it allocates itself, from its own driver root and hook path settings
    (https://project-hami.io/docs/installation/configure-cdi: nvidiaDriverRoot, nvidiaHookPath;
    NVIDIA/k8s-device-plugin#666 for the plugin it forks). None where NVIDIA's plugin serves:
    the same path may then be in the toolkit's spec as well as in the plugin's."""
    if _CDI_PATH_MISSING.search(line) is None:
        return None
    serving = serving_plugin(catalog, running)
    return serving if serving != _NVIDIA_PLUGIN else None


#: A refusal to load one of the driver's display modules (nvidia-modeset, nvidia-drm):
#: "failed to load module nvidia-modeset: exit status 1; output=modprobe: ERROR: could not
#: insert 'nvidia_modeset': No such device" (the validator's /dev/char symlink step,
#: NVIDIA/gpu-operator#671), and one naming the core module, which compute needs.
_DISPLAY_MODULE = lazy_compile(r"\b(?:load(?:ing)? module|insert) '?nvidia[-_](?:modeset|drm)\b")
_CORE_MODULE = lazy_compile(r"\b(?:load(?:ing)? module|insert) '?nvidia\b(?![-_])")


def _display_module_only(line: str) -> bool:
    """The line reports a display module refused and not the core module."""
    return _DISPLAY_MODULE.search(line) is not None and _CORE_MODULE.search(line) is None


def _driver_serves(ctx: NodeContext) -> bool:
    """The driver's core module serves the node's GPUs: nvidia-smi printed a driver version
    and GPUs, and lsmod (where collected) lists nvidia. Compute needs no display module, so
    a refusal of one is the step that asked for it, not the driver's failure."""
    smi = ctx.nvidia_smi
    modules = ctx.modules
    return (smi is not None and bool(smi.driver_version) and smi.attached_gpus > 0
            and (modules is None or "nvidia" in modules))


#: A GPU device node looked up under a driver root (``lstat /run/nvidia/driver/dev/nvidiactl:
#: no such file or directory``) while the runtime builds a container's spec: the device specs
#: the device plugin's allocation named.
_DEVICE_UNDER_ROOT = lazy_compile(
    r"\b(?:l?stat|open) /\S+?/dev/nvidia(?:\d+|ctl|-uvm(?:-tools)?|-modeset)\b.{0,20}"
    r": no such file or directory")


#: A GPU device node the runtime could not find while applying the container's device specs
#: (containerd's CRI: 'failed to generate container "<id>" spec: failed to apply OCI options:
#: lstat /dev/nvidiactl: no such file or directory').
_SPEC_DEVICE = lazy_compile(
    r"failed to apply OCI options: l?stat /dev/nvidia(?:\d+|ctl|-uvm(?:-tools)?|-modeset)\b"
    r": no such file or directory")


def _host_driver(ctx: NodeContext) -> bool:
    """The node's driver is installed on the host (no driver pod here, and the validator
    marked it ready there, or the loaded module's version file was read): a driver root in a
    device path is then not where this driver lives, so the spec naming it is stale, and the
    device plugin that allocated it is the layer to restart (NVIDIA/gpu-operator#377). With
    the driver's pod here, the root is the driver's own, not there yet."""
    if ctx.stack_pods("driver"):
        return False
    files = ctx.obs.files
    return "run/nvidia/validations/host-driver-ready" in files or "proc/driver/nvidia/version" in files


@cache
def _driver_root_missing(root: str) -> re.Pattern[str]:
    """The kubelet's refusal of a hostPath volume at or under the driver's install root
    (``hostPath type check failed: <path> is not a directory``): the folder is there only
    once the driver is installed, so its absence is the driver's, whichever pod mounts it."""
    return re.compile(rf"hostPath type check failed: {re.escape(root)}(?:/\S*)? is not a\b")


#: An OCI runtime's report of a hook that failed, in its own format: crun's
#: "error executing hook `<path>` (exit code: N)" (it keeps the hook's output to itself) and
#: runc's "error running hook #N: error running hook: exit status N, stdout: <out>, stderr:
#: <err>" (it relays what the hook wrote). ``own`` is what follows: the hook's own words.
_HOOK_FAILED = lazy_compile(
    r"error executing hook `(?P<crun>[^`]*)` \(exit code: -?\d+\)(?P<after>.*)"
    r"|error running (?:\w+ )?hook(?: #\d+)?: (?:error running hook: )?(?:exit status -?\d+|signal: \w+)"
    r"(?:, stdout: (?P<out>.*?), stderr: (?P<err>.*))?")
#: The container engine's own programs: a hook whose words start with one of their names
#: (``containerd: template: oci-hook:1: ...``, nerdctl's hook run by containerd) is the
#: runtime's own tooling, not NVIDIA's.
_RUNTIME_PROGRAM = lazy_compile(r"^(?:containerd|crio|cri-o|conmon|runc|crun|nerdctl|podman|dockerd?)\b:")
#: What the runtime and the CRI add around the hook's words (``: unknown``, quotes).
_WRAPPER_TAIL = lazy_compile(r"""(?:[\s"'\\n:]|\bunknown\b)+$""")


def hook_layer(named_in: Callable[[str], str | None], line: str) -> str | None:
    """The layer of a failed OCI hook, from the hook's own words rather than the runtime's
    report of it: the words name a layer (``nvidia-container-cli: initialization error: ...``
    relayed by runc) only when the hook wrote them. A hook that failed with no words of its
    own is reported by the runtime that ran it (crun only gives the exit code; runc's
    ``stderr:`` empty): nothing the hook said puts it below the runtime, so the runtime's
    layer (NVIDIA/gpu-operator#1598: crun of OpenShift 4.18.22 failing NVIDIA's hook, fixed
    in crun). Returns None where the line reports no failed hook, or where the hook's words
    leave the catalog's reading of the whole line to decide."""
    m = _HOOK_FAILED.search(line) if "hook" in line else None  # most lines name no hook: skip the regex
    if m is None or (m["crun"] is None and m["err"] is None):
        return None  # runc's report cut before the hook's words (a wrapped message): undecided
    own = m["after"] if m["crun"] is not None else " ".join(filter(None, (m["err"], m["out"])))
    own = _WRAPPER_TAIL.sub("", own or "").strip(" ,:")
    if not own:
        return "container-runtime"
    named = named_in(own)
    if named is not None:
        return named
    if _RUNTIME_PROGRAM.match(own):
        return "container-runtime"
    if not m["crun"]:
        return None
    # the hook spoke in words that name no layer: its program's layer (NVIDIA's hook is the
    # toolkit's; another hook, the runtime's own tooling)
    return named_in(m["crun"]) or "container-runtime"


#: An OCI runtime that names itself as the program that failed (containerd's and CRI-O's
#: relay of runc 1.1+ and crun: "OCI runtime create failed: runc create failed: unable to
#: start container process: ...", "crun: ..."), not a hook or a runtime wrapper it ran; runc
#: before 1.1 named its own source files instead ("container_linux.go:380: starting container
#: process caused: ...", "process_linux.go:545: container init caused: ..."); CRI-O and
#: libpod relay what the OCI runtime wrote while creating the container through conmon as
#: "container create failed: <message>" (internal/oci/runtime_oci.go). The CRI side of each
#: runtime names its own operation too: containerd's CRI plugin wraps its failures as
#: "failed to create containerd container: ...", "failed to create containerd task: ...",
#: "failed to get sandbox image ..." (the pause image it keeps and pulls itself); CRI-O
#: logs "Container creation error: ..." and answers the kubelet "cri-o configured with
#: <manager> cgroup manager, but ..."; the CRI relays the OCI runtime's exit as "OCI
#: runtime <op> failed: ..." (an exec into a container whose state the runtime lost). A
#: task whose creation only timed out ("context deadline exceeded") names no one: a hook or
#: the driver under it that hangs times it out as often as the runtime does. A hook
#: or NVIDIA's CLI inside such a line is judged first (``hook_layer``, the catalog).
_RUNTIME_OWN = lazy_compile(
    r"\b(?:runc|crun) (?:create|run|exec|start|delete|kill) failed: |\bcrun: \w"
    r"|\b(?:container|process)_linux\.go:\d+: (?:starting container process|"
    r"container init) caused\b|\bcontainer create failed: \S"
    r"|\bOCI runtime (?:create|start|exec|run|state|delete|kill) failed: "
    r"|\bfailed to create containerd (?:container|task): (?!context deadline exceeded)"
    r"|\bfailed to (?:get|pull) sandbox image\b"
    r"|\bContainer creation error: \S"
    r"|\b(?:cri-o|containerd) configured with \w+ cgroup manager\b")


#: A GPU container's start failing because the process it runs, one of the driver's programs
#: that NVIDIA's runtime (or its CDI spec) mounts into GPU containers, is not there: runc's
#: 'exec: "nvidia-smi": executable file not found in $PATH' or 'stat /usr/local/nvidia/bin/
#: nvidia-smi: no such file or directory', crun's 'executable file `nvidia-smi` not found'.
#: CUDA images ship none of them, so the runtime did not inject the driver: the toolkit's
#: setup (NVIDIA/nvkind#31, fixed in the toolkit's config; NVIDIA/k8s-device-plugin#346;
#: tkestack/gpu-manager#89, after the node's runtime was switched to plain runc).
_NVIDIA_TOOL = r"(?:\S*/)?nvidia-(?:smi|debugdump|persistenced|cuda-mps-control|cuda-mps-server)"
_NVIDIA_TOOL_ABSENT = lazy_compile(
    rf'\bexec: \\?"{_NVIDIA_TOOL}\\?": (?:executable file not found|stat \S+: no such file or directory)'
    rf"|\bexecutable file `{_NVIDIA_TOOL}` not found")


def nvidia_tool_absent(line: str) -> bool:
    """``line`` is a container's start failing for want of a program of the driver's that only
    NVIDIA's runtime puts there (``_NVIDIA_TOOL_ABSENT``): read before the runtime's own
    words around it, which only relay that the process could not be run."""
    return "nvidia-" in line and _NVIDIA_TOOL_ABSENT.search(line) is not None


#: QEMU refusing a device for want of the bus the device_add names, in QEMU's own errors
#: (include/qapi/qmp/qerror.h QERR_BUS_NOT_FOUND "Bus '%s' not found", QERR_BUS_NO_HOTPLUG
#: "Bus '%s' does not support hotplugging"), as a VM-isolated runtime (Kata Containers' shim
#: over QMP) relays them when it hot-plugs a passed-through GPU: the VM's PCI(e) topology is
#: the runtime's configuration (machine type, pcie_root_port, hotplug_vfio_on_root_bus:
#: kata-containers/runtime#2410, kata-containers/kata-containers#4211), not the device's.
_VMM_BUS = lazy_compile(r"\bBus '[\w.:-]{1,64}' (?:not found|does not support hotplugging)\b")


#: A sandbox VM runtime's own refusal to set up a passed-through device, in its own words, as
#: the runtime's journal or the kubelet's relays it: QEMU's VFIO listener failing to DMA-map a
#: guest memory region ("memory listener initialization failed: Region mem0:
#: vfio_container_dma_map ...", a file-backed NVDIMM guest image; Kata's NVIDIA GPU configs,
#: fixed by disable_image_nvdimm in kata-containers commit 2ebbf7b), the Kata agent refusing a
#: device plugin's PCIDEVICE_ value that is no PCI address ("PCI address mlx5_core.sf.10 should
#: have the format DDDD:BB:SS.F", fixed in the agent by commit 966e9b7), and runtime-rs finding
#: nothing to pass through in a device's IOMMU group ("IOMMU group 62 has no passthrough-capable
#: devices", kata-containers/kata-containers#13430, fixed by PR 13524), and Cloud Hypervisor's
#: VFIO DMA mapping refused with EINVAL ("failed to map memory for VFIO container, iova ..:
#: IommuDmaMap(Error(22))", a guest IOVA beyond the host IOMMU's address width: cloud-hypervisor
#: commit 27fda753, its iommu_address_width platform option). Each is the VM runtime's
#: configuration or code, not the device or the plugin that handed it over.
_SANDBOX_OWN = lazy_compile(
    r"\bmemory listener initialization failed: "
    r"|\bvfio_(?:container_)?dma_map\b.{0,200}?-22 \(Invalid argument\)"
    r"|\bfailed to map memory for VFIO container\b.{0,200}?\bIommuDmaMap\(Error\(22\)\)"
    r"|\bPCI address \S{1,80} should have the format\b"
    r"|\bIOMMU group \d+ has no passthrough-capable devices\b")


def sandbox_own_refusal(line: str) -> bool:
    """``line`` is a sandbox VM runtime's own refusal of a passed-through device
    (``_SANDBOX_OWN``): a refusal even where it carries no error word (the Kata agent's
    'PCI address ... should have the format ...')."""
    return _SANDBOX_OWN.search(line) is not None


def runtime_own_error(line: str) -> bool:
    """``line`` is runc's or crun's own failure to run a container, by its own name, or a
    sandbox VM's bus the runtime set up refusing the device (``_VMM_BUS``) or the VM runtime's
    own refusal of a passed-through device (``_SANDBOX_OWN``): read only where no
    word of the line names a layer above (a hook, NVIDIA's CLI, a CDI device, a VFIO device the
    plugin handed over), it is the runtime's (awslabs/amazon-eks-ami#2498: runc 1.3.2 writing a
    CFS quota the AL2 kernel refuses)."""
    return (_RUNTIME_OWN.search(line) is not None or _VMM_BUS.search(line) is not None
            or _SANDBOX_OWN.search(line) is not None)
