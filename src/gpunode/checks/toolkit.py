"""Layer 2 checks: the container toolkit's runtime configuration, RDMA plugin."""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from pathlib import PurePosixPath
from typing import cast

import msgspec

from gpunode.checks.base import (
    EXPLAINS,
    LINE,
    MESSAGE,
    SOURCE,
    VERB,
    FilesMatching,
    check,
    in_fleet,
    logs_here,
    not_deployed,
    ok,
    pods_here,
    problem,
    reads,
    unknown,
)
from gpunode.checks.cli_step import CLI_LOG, failing_cli_line, pasted_cause
from gpunode.checks.context import NodeContext
from gpunode.checks.crio_hooks import HookFile, judge_hooks
from gpunode.checks.decisive import as_catalogued, line_finding
from gpunode.checks.host import policy_cdi_enabled, runtime_config_may_fail, runtime_down_message
from gpunode.checks.operator import vm_reason, vm_workload
from gpunode.checks.runtime_config import DROPIN, dropin_version_above_root, unread_nvidia_dropins
from gpunode.checks.toolkit_written import runtime_may_be_unreachable, runtime_unreachable
from gpunode.decisive import MAX_LINE, Decisive, severity
from gpunode.errors import ParseError
from gpunode.facts import ClusterFacts
from gpunode.model import Evidence, Finding, Status
from gpunode.parse._toml import load_toml
from gpunode.parse.containerd import CONTAINERD_CONFIG_PATHS, runtimes_defined
from gpunode.parse.k3s_template import is_template, renders_host_runtimes
from gpunode.parse.oci_hooks import OCI_HOOK_DIRS, parse_oci_hook
from gpunode.relazy import lazy_compile
from gpunode.runtimes import NVIDIA_BINARY, RuntimeSetup, nvidia_runtimes


@check("container-toolkit")
def runtime_patched(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The node's runtime config must carry an NVIDIA runtime, whatever its name, unless
    the platform does without one (GKE) and no toolkit pod of ours runs there.

    An unreadable config is evidence (``unknown`` with the parse error), not silence.
    A handler that running pods use proves what the runtime loaded, so a config that
    lacks it is not the one in use and is not judged.
    """
    setup = ctx.runtime_setup
    if setup is None:
        error = ctx.runtime_setup_error
        if error is not None:
            yield unknown(component, f"runtime config could not be read: {error[1]}", Evidence(*error))
        return
    path = f"nodes/{ctx.name}/files{setup.path}"
    handlers = ", ".join(sorted(setup.runtimes)) or "none"
    unseen = _handlers_in_use_not_configured(ctx, setup)
    if unseen:
        ev = Evidence(path, f"runtimes: {handlers}; running pods use handler {', '.join(unseen)}")
        yield unknown(component, f"{setup.path} is not the config {setup.runtime} runs with", ev)
        return
    nvidia = setup.nvidia
    unused = None if nvidia else _runtime_not_used(ctx, component)
    if unused is not None:
        yield not_deployed(component, f"{unused} (runtimes: {handlers})")
        return
    if not nvidia:
        yield _without_nvidia(ctx, setup, component, Evidence(path, f"runtimes: {handlers}"))
        return
    yield from _runtime_classes_served(ctx, setup, component)
    default = setup.default_runtime or "runc"
    shown = ", ".join(map(setup.describe, nvidia))
    version = f"v{setup.version}, " if setup.version else ""
    ev = Evidence(path, f"NVIDIA runtime {shown}; default {default}")
    yield ok(component, f"{setup.runtime} patched ({version}default runtime {default})", ev)


def _runtime_not_used(ctx: NodeContext, component: str) -> str | None:
    """Why this node needs no NVIDIA runtime: its GPUs go to VMs through vfio-pci, or the
    platform does without one (GKE's own device plugin mounts the driver and devices: runc
    alone is its setup) and no toolkit pod of ours runs there."""
    node = ctx.node
    labels = node.metadata.labels if node is not None else {}
    vm = vm_workload(labels, ctx.cluster_policy_spec, bool(ctx.facts.cluster_policies))
    if vm is not None:
        return vm_reason(vm)
    if component in ctx.platform.not_used and not ctx.stack_pods(component):
        return f"{ctx.platform.title} does not use the NVIDIA runtime"
    return None


def _crio_hook_setup(ctx: NodeContext, setup: RuntimeSetup, component: str) -> Finding:
    """A CRI-O node without an NVIDIA handler, judged by its OCI hooks: the hook files
    among the node files, the binaries' presence from the probe where it ran. Without
    hook files and without a probe that read the hook directories nothing is known."""
    hooks = _hook_files(ctx, setup)
    probe = ctx.probe
    if not hooks and (probe is None or not probe.host.oci_hook_dirs):
        return unknown(component, f"no NVIDIA runtime in {setup.path}; OCI hooks not collected")
    verdict = judge_hooks(hooks, setup.hooks_dirs or OCI_HOOK_DIRS)
    where = f"nodes/{ctx.name}/files{verdict.file or setup.path}"
    ev = Evidence(where, verdict.detail)
    if verdict.cause is None:
        return ok(component, f"cri-o with the NVIDIA OCI hook ({verdict.detail})", ev)
    return problem(component, verdict.cause, ev, specificity=ctx.kb.get(verdict.cause).specificity)


def _hook_files(ctx: NodeContext, setup: RuntimeSetup) -> list[HookFile]:
    """Hook files under the default and configured hook directories, parsed here (a
    malformed one is a finding, not a runtime config parse error)."""
    present = {f.file: f.binary_present for f in ctx.probe.host.oci_hooks} if ctx.probe else {}
    dirs = {d.rstrip("/") for d in (*OCI_HOOK_DIRS, *setup.hooks_dirs)}
    found: list[HookFile] = []
    for rel, text in sorted(ctx.obs.files.items()):
        path = "/" + rel
        if not path.endswith(".json") or path.rpartition("/")[0] not in dirs:
            continue
        try:
            found.append(HookFile(path, parse_oci_hook(path, text), binary_present=present.get(path)))
        except ParseError as exc:
            found.append(HookFile(path, None, error=str(exc)))
    return found


def _without_nvidia(ctx: NodeContext, setup: RuntimeSetup, component: str, runtimes: Evidence) -> Finding:
    """A runtime config with no NVIDIA runtime: CRI-O judged by its hooks, a config whose
    runtimes cannot all be known unknown, else containerd_not_patched."""
    if setup.runtime == "cri-o":  # CRI-O may inject GPUs through the OCI hook instead
        return _crio_hook_setup(ctx, setup, component)
    unread = _tables_only_containerd2_reads(ctx)
    if unread:
        ev = Evidence(runtimes.source, f"{runtimes.excerpt}; more runtimes under {unread}")
        why = f"{setup.path}: runtimes under tables only some containerd versions read"
        return unknown(component, why, ev)
    if _renders_host_runtimes(ctx, setup):
        ev = Evidence(runtimes.source, f"{runtimes.excerpt}; the rest are those k3s finds on the host")
        return unknown(component, f"{setup.path}: a template whose NVIDIA runtimes k3s adds when it "
                                  "renders config.toml, which was not read", ev)
    ev = Evidence(runtimes.source, f"{runtimes.excerpt}; none runs {NVIDIA_BINARY}")
    return problem(component, "containerd_not_patched", ev, specificity=30)


def _renders_host_runtimes(ctx: NodeContext, setup: RuntimeSetup) -> bool:
    """The config read is a k3s/RKE2 template that gets the runtimes k3s finds on the host
    (NVIDIA's among them) when rendered: only the rendered config.toml says which."""
    if not is_template(setup.path):
        return False
    text = ctx.obs.files.get(setup.path.lstrip("/"))
    return text is not None and renders_host_runtimes(text)


def _tables_only_containerd2_reads(ctx: NodeContext) -> str:
    """Runtime tables a version 2 file spells the 2.x way (AKS writes such files): containerd
    2.x reads them, 1.x does not, so without the node's containerd version nobody can tell."""
    config = ctx.containerd
    if config is None or ctx.containerd_major is not None:
        return ""
    return "; ".join(config.ignored_cri_tables)


def _handlers_in_use_not_configured(ctx: NodeContext, setup: RuntimeSetup) -> list[str]:
    """Handlers of RuntimeClasses that Running pods on this node use but the config lacks."""
    if setup.runtime == "docker":
        return []
    handlers = _class_handlers(ctx)
    if not handlers:
        return []
    used = {
        handlers[sp.pod.spec.runtime_class_name]
        for pods in ctx.facts.pods_by_node.get(ctx.name, {}).values()
        for sp in pods
        if sp.pod.status.phase == "Running" and sp.pod.spec.runtime_class_name in handlers
    }
    return sorted(h for h in used if h not in setup.runtimes)


def _class_handlers(ctx: NodeContext) -> dict[str, str]:
    """The cluster's RuntimeClasses by name, to their handlers (those with one): once per facts."""
    known = ctx.facts.shared.get(_CLASS_HANDLERS)
    if known is None:
        runtime_classes = ctx.facts.runtime_classes
        known = ctx.facts.shared[_CLASS_HANDLERS] = {
            rc.metadata.name: rc.handler for rc in runtime_classes if rc.handler}
    return known  # type: ignore[return-value]  # (no cast() call: asked for every node)


#: ``_class_handlers``' key in ``ClusterFacts.shared``.
_CLASS_HANDLERS = object()


def _runtime_classes_served(ctx: NodeContext, setup: RuntimeSetup, component: str) -> Iterator[Finding]:
    """A RuntimeClass that stack pods here ask for must name a configured handler."""
    if setup.runtime == "docker" or not setup.complete:
        return
    handlers = _class_handlers(ctx)
    if not handlers:
        return
    wanted = {
        sp.pod.spec.runtime_class_name
        for pods in ctx.facts.pods_by_node.get(ctx.name, {}).values()
        for sp in pods
        if sp.pod.spec.runtime_class_name in handlers
    }
    configured = ", ".join(sorted(setup.runtimes))
    for name in sorted(w for w in wanted if w and handlers[w] not in setup.runtimes):
        ev = Evidence(
            f"nodes/{ctx.name}/files{setup.path}",
            f"RuntimeClass {name} has handler {handlers[name]}; configured: {configured}",
        )
        yield problem(component, "runtime_handler_missing", ev, specificity=40)


@check("container-toolkit", may_find=runtime_may_be_unreachable)
def containerd_dropin_version(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """containerd 2.3 refuses to start when an imported drop-in declares a higher config
    version than the top-level file ("drop-in config version 4 higher than root config
    version 2"); a toolkit that takes the version from ``containerd config dump`` writes
    such a drop-in. Judged only while the runtime cannot be reached (other
    containerd releases load the same files), and then it is why the runtime is down."""
    config = ctx.containerd
    if config is None or not runtime_unreachable(ctx):
        return
    clash = dropin_version_above_root(config)
    if clash is not None:
        ev = Evidence(f"nodes/{ctx.name}/files{clash.path}", clash.detail)
        cause = "containerd_config_version_mismatch"
        yield problem(component, cause, ev, specificity=85, ctx={EXPLAINS: "container-runtime"})


@check("container-toolkit", needs=("cluster/pods",), may_find=runtime_may_be_unreachable)
def runtime_down_after_restarts(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The toolkit's container rewrites the runtime's configuration and restarts the runtime
    each time it starts. Where the kubelet reports the runtime down and the toolkit's
    container here last ended in an error after restarting (its status as the kubelet last
    reported it: a runtime that was down throughout could not have restarted it), the
    runtime went down with the toolkit's edits, and the toolkit's failure explains the
    runtime's state (NVIDIA/gpu-operator#2646: 149 restarts, exit 255, node NotReady).
    On containerd 2.x, whose config versions (3, 4) a toolkit may read in one version and
    write in another, that is the config version mismatch; elsewhere its crash loop. A
    toolkit that never restarted, or one that ends cleanly, says nothing here."""
    if runtime_down_message(ctx) is None:
        return
    for sp in ctx.stack_pods(component):
        for cs in sp.pod.status.container_statuses:
            last = cs.last_state.terminated
            if cs.restart_count == 0 or last is None or last.exit_code == 0:
                continue
            meta = sp.pod.metadata
            where = f"pod {meta.namespace}/{meta.name} status.containerStatuses[{cs.name}]"
            seen = (f"restarts={cs.restart_count}; last terminated {last.reason or 'Error'} "
                    f"(exit {last.exit_code}) while the kubelet reports the container runtime down")
            versions = (ctx.containerd_major or 0) >= _CONFIG_VERSIONS_CONTAINERD
            cause = "containerd_config_version_mismatch" if versions else "crash_loop"
            yield problem(component, cause, Evidence(where, seen), specificity=40,
                          ctx={EXPLAINS: "container-runtime"}, namespace=meta.namespace,
                          pod=meta.name, container=cs.name)
            return


#: The first containerd major release whose config (version 3, later 4) a toolkit reading
#: ``containerd config dump`` may take for another version than the file on disk.
_CONFIG_VERSIONS_CONTAINERD = 2


@check("container-toolkit", may_find=runtime_config_may_fail)
def dropin_read_by_containerd(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A drop-in counts only if the config containerd reads imports it. The toolkit writes
    ``/etc/containerd/conf.d/99-nvidia.toml``; GKE's containerd reads its own config.toml,
    which imports nothing, and K3s/RKE2 read theirs, so there the NVIDIA runtime it defines
    is never loaded and every pod asking for it fails sandbox creation."""
    config, setup = ctx.containerd, ctx.runtime_setup
    if config is None or setup is None or setup.runtime != "containerd":
        return
    dropins = {"/" + path: text for path, text in ctx.obs.files.items() if _is_dropin(path)}
    for unread in unread_nvidia_dropins(config, dropins):
        ev = Evidence(f"nodes/{ctx.name}/files{unread.path}", unread.detail(config, ctx.platform.title))
        yield problem(component, "containerd_config_wrong_path", ev, specificity=80)
        return


#: nvidia-ctk's own report of the file it wrote ("Wrote updated config to <path>",
#: nvidia-ctk runtime configure; NVIDIA/nvidia-container-toolkit#1404 quotes it).
_WROTE_CONFIG = lazy_compile(r"\bWrote updated config to (?P<path>/\S+?\.toml)\b")


@check("container-toolkit", may_find=reads("cmd/journal-runtime.txt"))
def toolkit_dropin_not_imported(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """nvidia-ctk on the host says where it wrote its containerd drop-in ("Wrote updated config
    to /etc/containerd/config.d/99-nvidia.toml"); a drop-in folder that the config containerd
    reads neither is nor imports is never loaded, so the runtime settings just written do not
    exist for containerd. Toolkit 1.18.0 defaulted to ``/etc/containerd/config.d/`` while
    containerd's drop-ins (and the GPU Operator's RUNTIME_DROP_IN_CONFIG) live in ``conf.d/``
    (NVIDIA/nvidia-container-toolkit#1404, fixed by #1407). Judged on the toolkit's last such
    line, only where the node's containerd config is known: a path it reads or an import glob
    covers, a root config, or a node whose config was not collected, says nothing."""
    journal = ctx.obs.cmd.get("journal-runtime.txt")
    if not journal or "Wrote updated config to" not in journal:  # (most nodes: no line to read)
        return
    config = ctx.containerd
    if config is None or ctx.runtime_kind != "containerd":
        return
    split = ctx.text_lines("cmd", "journal-runtime.txt")
    if split is None:
        return
    found = None
    for number, line in enumerate(split[0], 1):
        if (m := _WROTE_CONFIG.search(line)) is not None:
            found = (number, m["path"])
    if found is None:
        return
    number, path = found
    if not _DROPIN_DIR.search(path) or path in config.sources:
        return
    if any(PurePosixPath(path).match(glob) or path == glob for glob in config.imports):
        return
    where = f"nodes/{ctx.name}/cmd/journal-runtime.txt:{number}"
    imported = ", ".join(config.imports) or "nothing"
    ev = Evidence(where, f"nvidia-ctk wrote its drop-in to {path}; containerd's config imports {imported}")
    yield problem(component, "containerd_config_wrong_path", ev, specificity=80, ctx={SOURCE: where})


#: containerd's CRI plugin by the ids ``disabled_plugins`` may name (the short id, config v2's
#: and v3's): with it off, the kubelet has no container runtime to run pods through.
_CRI_PLUGINS = frozenset({"cri", "io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime",
                          "io.containerd.cri.v1.images"})
#: A folder of containerd drop-ins (conf.d, k0s's containerd.d).
_DROPIN_DIR = lazy_compile(r"/containerd(?:/[^/]+)?\.d/[^/]+\.toml$")


@check("container-toolkit", may_find=runtime_config_may_fail)
def cri_plugin_disabled(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A containerd config the node reads that disables the CRI plugin leaves the kubelet no
    runtime. Docker's own containerd ships ``disabled_plugins = ["cri"]``; a toolkit that takes
    the config from ``containerd config dump`` of another containerd on the host (Docker's, the
    host's stock one under k0s or MicroK8s) writes that into the node's config or its NVIDIA
    drop-in. Judged on containerd nodes where the toolkit runs (it writes these files), in the
    files containerd reads, a distribution's own config (its template included) and drop-ins
    that define an NVIDIA runtime (the toolkit's own)."""
    if ctx.runtime_kind != "containerd" or not ctx.stack_pods(component):
        return
    files = {"/" + path: text for path, text in ctx.obs.files.items() if path.endswith((".toml", ".tmpl"))}
    config = ctx.containerd
    read = set(config.sources) if config is not None else set()
    # a distribution's own config (k3s, RKE2, MicroK8s, k0s) exists only where it runs
    read |= {p for p in CONTAINERD_CONFIG_PATHS if p in files and not p.startswith("/etc/containerd/")}
    for path in sorted(files):
        if path not in read and not (_DROPIN_DIR.search(path) and _defines_nvidia(path, files[path])):
            continue
        disabled = _cri_disabled(path, files[path])
        if disabled:
            shown = ", ".join(f'"{name}"' for name in disabled)
            ev = Evidence(f"nodes/{ctx.name}/files{path}",
                          f"disabled_plugins = [{shown}]: containerd's CRI plugin is off, so the kubelet "
                          "cannot run pods through this config")
            line = f"disabled_plugins = [{shown}]"
            yield problem(component, "error_config_invalid", ev, specificity=82,
                          ctx={LINE: line, MESSAGE: f"{path}: {line}", SOURCE: ev.source,
                               VERB: "writes a containerd config that turns CRI off"})
            return


def _cri_disabled(path: str, text: str) -> list[str]:
    """The CRI plugin ids a containerd config file disables (none when it does not parse:
    the runtime config checks say that). A file that never names the key is not parsed:
    most nodes' configs do not, and parsing each was a second of CPU at 5,000 nodes."""
    if "disabled_plugins" not in text:
        return []
    try:
        doc = load_toml(path, text)
    except ParseError:
        return []
    names = doc.get("disabled_plugins")
    return [n for n in names if isinstance(n, str) and n in _CRI_PLUGINS] if isinstance(names, list) else []


def _defines_nvidia(path: str, text: str) -> bool:
    try:
        return bool(nvidia_runtimes(runtimes_defined(path, text)))
    except ParseError:
        return False


#: containerd's CRI plugin by the keys a config v1 or v2 file sets it under. containerd before
#: 2.0 merges an imported file plugin by plugin: a drop-in that sets any key of this section
#: (a registry mirror) replaces the whole section of config.toml, its runtimes included
#: (containerd/containerd#5837); 2.0 merges key by key (containerd/containerd#9982).
_CRI_SECTIONS = ("io.containerd.grpc.v1.cri", "cri")
#: The kubelet's sandbox event for a pod whose NVIDIA runtime handler containerd has not loaded.
_NO_NVIDIA_HANDLER = lazy_compile(r'no runtime for \\?"?nvidia[\w-]*\\?"? is configured')
_SANDBOX_FAILED = "FailedCreatePodSandBox"


def _refusals_in_fleet(facts: ClusterFacts) -> bool:
    """Whether any pod's event in the facts is a sandbox refused for want of an NVIDIA handler
    (``_handler_refused`` reads those of the node's pods): read once per facts."""
    known = facts.shared.get(_REFUSALS)
    if known is None:
        known = facts.shared[_REFUSALS] = any(
            ev.reason == _SANDBOX_FAILED and _NO_NVIDIA_HANDLER.search(ev.message) is not None
            for (kind, _, _), events in facts.events_by_object.items() if kind == "Pod" for ev in events)
    return bool(known)


_REFUSALS = "toolkit-handler-refusals"


@check("container-toolkit", may_find=in_fleet(_refusals_in_fleet))
def cri_section_replaced(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """Pods refused for a missing NVIDIA runtime handler on a containerd before 2.0 that
    imports a drop-in setting its CRI plugin section without the NVIDIA runtime: that
    section replaces config.toml's, so the runtime the toolkit wrote there is never loaded,
    however long the toolkit runs. Judged only with the refusal seen on the node (the
    drop-in alone may sit beside a config that needs no NVIDIA handler) and where containerd
    reads the drop-in (config.toml's imports, when collected)."""
    major = ctx.containerd_major
    if major is None or major >= 2 or not _handler_refused(ctx):
        return
    config = ctx.containerd
    read = set(config.sources) if config is not None else None
    for path, text in sorted(ctx.obs.files.items()):
        shown = "/" + path
        if not _DROPIN_DIR.search(shown) or (read is not None and shown not in read):
            continue
        if not _sets_cri(shown, text) or _defines_nvidia(shown, text):
            continue
        ev = Evidence(f"nodes/{ctx.name}/files{shown}",
                      f"containerd {major}.x imports {shown}, which sets its CRI plugin section without "
                      "the nvidia runtime: before containerd 2.0 that section replaces config.toml's, "
                      "runtimes included")
        yield problem(component, "runtime_handler_missing", ev, specificity=75,
                      ctx={SOURCE: ev.source, EXPLAINS: "container-runtime"})
        return


def _handler_refused(ctx: NodeContext) -> bool:
    """A pod on the node whose sandbox containerd refused for want of an NVIDIA handler."""
    pods = [sp.pod for sps in ctx.facts.pods_by_node.get(ctx.name, {}).values() for sp in sps]
    pods += list(ctx.facts.troubled_workloads_by_node.get(ctx.name, ()))
    return any(ev.reason == _SANDBOX_FAILED and _NO_NVIDIA_HANDLER.search(ev.message)
               for pod in pods for ev in ctx.events_for_pod(pod))


def _sets_cri(path: str, text: str) -> bool:
    """The file sets a key of containerd's CRI plugin section (config v1 or v2)."""
    if "cri" not in text:
        return False
    try:
        plugins = load_toml(path, text).get("plugins")
    except ParseError:
        return False
    return isinstance(plugins, dict) and any(isinstance(plugins.get(k), dict) for k in _CRI_SECTIONS)


#: What the validator writes once a container got the GPUs through the runtime.
_TOOLKIT_READY = "run/nvidia/validations/toolkit-ready"


@check("container-toolkit", may_find=reads(f"files/{_TOOLKIT_READY}"))
def toolkit_validated(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The validator writes toolkit-ready once a container got the GPUs through the runtime."""
    rel = _TOOLKIT_READY
    if rel in ctx.obs.files:
        yield ok(component, "validated (toolkit-ready)", Evidence(ctx.obs.path_of("files", rel), "present"))


@check("rdma-device-plugin", needs=("node",), may_find=pods_here("rdma-device-plugin"))
def rdma_resources(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A running RDMA plugin must advertise its rdma/* resources with a non-zero count."""
    if ctx.node is None or not ctx.stack_pods(component):
        return
    allocatable = ctx.node.status.allocatable
    resources = {k: v for k, v in allocatable.items() if k.startswith("rdma/")}
    where = f"node/{ctx.name} status.allocatable"
    if not resources:
        yield problem(component, "rdma_resources_missing", Evidence(where, "no rdma/* resource"))
    elif all(v == "0" for v in resources.values()):
        shown = ", ".join(f"{k}={v}" for k, v in sorted(resources.items()))
        yield problem(component, "rdma_resources_zero", Evidence(where, shown))
    else:
        shown = ", ".join(f"{k}={v}" for k, v in sorted(resources.items()))
        yield ok(component, shown, Evidence(where, shown))


@check("container-toolkit", may_find=runtime_config_may_fail)
def default_runtime_without_cdi(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """Without CDI and without runtimeClassName, operands only get GPUs if nvidia is the default.
    On Docker that holds whatever the cluster policy says: the kubelet's Docker shim starts
    every container with the daemon's default runtime and passes no CDI devices, so a
    daemon.json that registers nvidia without "default-runtime": "nvidia" leaves the plugin
    without NVML (NVIDIA/k8s-device-plugin#13; the plugin README's prerequisites,
    https://pkg.go.dev/github.com/NVIDIA/k8s-device-plugin@v0.4.0)."""
    setup = ctx.runtime_setup
    if setup is None or not setup.nvidia or setup.default_is_nvidia:
        return
    if setup.runtime != "docker" and policy_cdi_enabled(ctx) is not False:
        return
    plain = [
        sp.pod.metadata.name
        for comp in ("device-plugin", "gfd", "dcgm-exporter")
        for sp in ctx.stack_pods(comp)
        if not sp.pod.spec.runtime_class_name
    ]
    if plain:
        ev = Evidence(
            f"nodes/{ctx.name}/files{setup.path}",
            f"default runtime {setup.default_runtime or 'runc'}; pods without runtimeClassName: "
            + ", ".join(plain[:3]),
        )
        yield problem(component, "nvidia_not_default_runtime", ev, status=Status.DEGRADED, specificity=20)


@lru_cache(maxsize=1024)
def _is_dropin(path: str) -> bool:
    """A node file (``etc/containerd/conf.d/99-nvidia.toml``) in a containerd drop-in
    folder; asked for each file of each node, which mostly share a few paths."""
    return DROPIN.search("/" + path) is not None


#: The toolkit's env that names the containerd config it writes (the GPU Operator's
#: ``toolkit.env``; ``RUNTIME_CONFIG`` is the newer, runtime-neutral name).
_CONFIG_ENV = ("CONTAINERD_CONFIG", "RUNTIME_CONFIG")


def _is_template(path: str) -> bool:
    """A distribution's containerd config template (``config.toml.tmpl``, ``config-v3.toml.tmpl``,
    MicroK8s' ``containerd-template.toml``): what the distribution renders its config from."""
    name = path.rpartition("/")[2]
    return name.endswith(".tmpl") or "template" in name


def _toolkit_env(ctx: NodeContext) -> dict[str, str]:
    """The toolkit's env as the ClusterPolicy sets it (``spec.toolkit.env``)."""
    toolkit = ctx.cluster_policy_spec.get("toolkit")
    env = toolkit.get("env") if isinstance(toolkit, dict) else None
    if not isinstance(env, list):
        return {}
    return {str(e["name"]): str(e.get("value", "")) for e in env if isinstance(e, dict) and "name" in e}


#: The containerd configs a distribution makes its own from: k3s's and RKE2's templates (the
#: agent renders config.toml from the one it finds), k0s's drop-ins (merged into the config it
#: writes).
_DISTRIBUTION_CONFIG = lazy_compile(
    r"^var/lib/rancher/[\w-]+/agent/etc/containerd/config(?:-v3)?\.toml\.tmpl$|"
    r"^etc/k0s/containerd\.d/[^/]+\.toml$")


@check("container-toolkit", may_find=FilesMatching(_DISTRIBUTION_CONFIG.pattern))
def toolkit_stub_template(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A containerd config the distribution builds its own from (a k3s/RKE2 template, a k0s
    drop-in) that only imports the toolkit's drop-in folder: neither k3s's base (``{{ template
    "base" . }}``) nor a CRI plugin table of its own. The toolkit, told to configure a file that
    did not exist, creates it with its ``imports`` line and the version alone (nvidia-ctk
    creates a missing config with its own runtime only, NVIDIA/nvidia-docker#1788); k3s and
    RKE2 render config.toml from any template they find, so containerd starts with none of the
    distribution's settings and never serves the kubelet (rancher/rke2#10293), and k0s merges
    the import it does not follow (k0sproject/k0s#6547: 'unknown service
    runtime.v1.RuntimeService'). The runtime and the kubelet that waits for it fail because
    of the toolkit's file."""
    for path, text in sorted(ctx.obs.files.items()):
        if not _DISTRIBUTION_CONFIG.match(path) or renders_host_runtimes(text):
            continue
        imports = _stub_imports(path, text)
        if not imports:
            continue
        lines = text.splitlines()
        number = next((n for n, line in enumerate(lines, 1) if line.lstrip().startswith("imports")), 1)
        found = Decisive(number, lines[number - 1].strip()[:MAX_LINE], 2)
        where = f"nodes/{ctx.name}/files/{path}:{number}"
        finding = line_finding(ctx.kb, component, Status.FAILED, found, where,
                               verb="leaves a containerd config that replaces the distribution's",
                               line_class="error_config_invalid", standalone="true")
        explains = {EXPLAINS: "container-runtime,kubelet"}
        yield msgspec.structs.replace(finding, context={**finding.context, **explains})
        return


def _stub_imports(path: str, text: str) -> list[str]:
    """The toolkit drop-ins a template imports when it holds nothing else (no ``plugins``
    table, no other setting than ``version``); empty otherwise."""
    try:
        doc = load_toml(path, text)
    except ParseError:
        return []
    imports = doc.get("imports")
    if set(doc) - {"imports", "version"} or not isinstance(imports, list):
        return []
    return [i for i in imports if isinstance(i, str) and DROPIN.search(i.replace("*", "x"))]


@check("container-toolkit", may_find=runtime_config_may_fail)
def toolkit_writes_generated_config(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The toolkit is told to write a containerd config that the node's distribution
    generates from its template each time it starts (K3s/RKE2 render config.toml from
    config.toml.tmpl, MicroK8s containerd.toml from containerd-template.toml): the NVIDIA
    runtime it adds lasts only until the next restart of the distribution's agent, after which
    containerd runs without it (rancher/rke2-docs#263: RKE2 on SLES, GPU pods without the
    driver's libraries until CONTAINERD_CONFIG named config.toml.tmpl). Judged only on a
    platform whose configs include a template, from the path the toolkit is given."""
    configs = ctx.platform.containerd_configs
    if not configs or not any(_is_template(p) for p in configs):
        return
    env = _toolkit_env(ctx)
    name = next((n for n in _CONFIG_ENV if env.get(n)), None)
    if name is None:
        return
    path = env[name]
    if path not in configs or _is_template(path):
        return
    template = next(p for p in configs if _is_template(p))
    ev = Evidence(f"clusterpolicy spec.toolkit.env {name}",
                  f"{name}={path}: {ctx.platform.title} renders this file from {template} when it starts, "
                  "so the NVIDIA runtime written there does not last")
    yield problem(component, "containerd_config_wrong_path", ev, specificity=80)


#: The NVIDIA runtime's own log, where its configuration turns it on (config.toml's
#: ``[nvidia-container-runtime] debug = "/var/log/nvidia-container-runtime.log"``): the probe
#: keeps its tail (``files/var/log/nvidia-container-runtime.log``).
RUNTIME_LOG = "var/log/nvidia-container-runtime.log"
#: How far back the runtime's log is read for its last create.
_RUNTIME_LOG_TAIL = 200
#: The runtime's line for an OCI ``create``, the one command it changes (it reads the spec to
#: add its hook or CDI devices): 'Using bundle file: <dir>/config.json' before 1.8,
#: '{"level":"info","msg":"Using OCI specification file path: <dir>/config.json",...}' since.
_CREATE = lazy_compile(r"\bUsing (?:bundle file|OCI specification file path): ")


@check("container-toolkit", may_find=reads(f"files/{RUNTIME_LOG}"))
def runtime_log(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The NVIDIA runtime that could not change the last container spec it was given: its
    log's last error-level line ('ERROR: inject NVIDIA hook: stat /usr/bin/nvidia-container-
    runtime-hook: no such file or directory', NVIDIA/nvidia-docker#1017; logrus's
    '"level":"error"' since 1.8), with no create after it, is why every GPU container fails
    at creation. A create the runtime ran since (its spec line after the error) went
    through, and lines at info level (looking for runc under another name, "binary not
    found") are no error. Without the log nothing is said."""
    split = ctx.text_lines("files", RUNTIME_LOG)
    if split is None:
        return
    lines = split[0][-_RUNTIME_LOG_TAIL:]
    offset = len(split[0]) - len(lines)
    last = next((i for i in range(len(lines) - 1, -1, -1) if severity(lines[i]) == 2), None)
    if last is None or any(_CREATE.search(line) for line in lines[last + 1:]):
        return
    found = Decisive(last + 1, lines[last].strip()[:MAX_LINE], 2)
    where = f"{ctx.obs.path_of('files', RUNTIME_LOG)}:{offset + last + 1}"
    yield as_catalogued(ctx.kb, line_finding(ctx.kb, component, Status.FAILED, found, where,
                                             verb="cannot change a container's spec", standalone="true"))


@check("container-toolkit", may_find=reads(f"files/{CLI_LOG}"))
def cli_log(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The CLI that the NVIDIA runtime's hook runs for every GPU container, whose last run
    logged an error-level line (klog's ``E``: nvc.c that could not enter the driver root,
    driver.c's service that could not load the driver's library in it) and never got past its
    initialisation: the hook failed, so the container was not created, and that line says why
    (NVIDIA/nvidia-docker#1090, OE4T/meta-tegra#1456). A run that shut its context down had
    initialised (an error it logged on the way, a kernel module it could not load, did not
    stop it); a run since without an error went through; warnings ("skipping kernel modules
    load due to failure" when unprivileged) are no error. Without the log nothing is said."""
    failing = failing_cli_line(ctx)
    if failing is None:
        return
    last, line = failing
    found = Decisive(last + 1, line.strip()[:MAX_LINE], 2)
    where = f"{ctx.obs.path_of('files', CLI_LOG)}:{last + 1}"
    classed = line_finding(ctx.kb, component, Status.FAILED, found, where,
                           verb="cannot set up a GPU container", standalone="true")
    finding = as_catalogued(ctx.kb, classed)
    cause = pasted_cause(ctx.kb, component, found.line) if finding.cause == classed.cause else None
    yield finding if cause is None else msgspec.structs.replace(
        finding, cause=cause.code, specificity=max(cause.specificity, finding.specificity))


#: The program a node's runtime is set to start containers with, absent where the runtime
#: executes it: containerd's shim or Docker relaying "fork/exec
#: /usr/bin/nvidia-container-runtime: no such file or directory" (Azure/AKS#2039 on Docker,
#: aws/amazon-vpc-cni-k8s#3104 on containerd, NVIDIA/nvidia-docker#686), or Docker's
#: 'exec: "nvidia-container-runtime": executable file not found in $PATH' for a runtime
#: registered by name only. The NVIDIA runtime's variants (.cdi, .legacy) are the same
#: program's; its hooks (nvidia-ctk, nvidia-container-runtime-hook) are read elsewhere.
_RUNTIME_BINARY_MISSING = lazy_compile(
    r"fork/exec (?P<path>\S*/nvidia-container-runtime(?:\.\w+)?): no such file or directory"
    r'|exec: \\?"(?P<name>nvidia-container-runtime(?:\.\w+)?)\\?": executable file not found')


@check("container-toolkit", needs=("cluster/events",))
def runtime_binary_missing(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """A pod of any kind on the node whose sandbox the runtime could not create because
    the NVIDIA runtime's program it is set to run does not exist: the runtime's
    configuration names a binary the toolkit's install left out (or removed), so every
    pod the node starts with that runtime fails, cluster agents with no GPU included
    (the sandbox is the pod's first container). The toolkit's setup, not the pod."""
    for ev in ctx.facts.sandbox_refusals_by_host.get(ctx.name, ()):
        found = _RUNTIME_BINARY_MISSING.search(ev.message)
        if found is None:
            continue
        pod = ev.involved_object
        program = found.group("path") or found.group("name")
        where = f"event {pod.namespace}/{pod.name} {ev.reason}"
        line = ev.message.strip()[:MAX_LINE]
        yield problem(component, "error_file_state",
                      Evidence(where, f"the runtime cannot execute {program}: {found.group(0)}"),
                      specificity=60, ctx={SOURCE: where, LINE: line, MESSAGE: line})
        return


#: Container runtimes that a Kubernetes distribution runs as its own host unit beside any
#: system containerd, by the journal's syslog identifier of their lines, with the folder
#: their config and socket live under. Canonical Kubernetes (the k8s snap) runs
#: snap.k8s.containerd.service ("k8s.containerd[pid]:"), its config
#: /var/lib/k8s-containerd/k8s-containerd/etc/containerd/config.toml and its socket under
#: .../run/containerd/ (hrishin/GPU-Workload-Debugging task2, the GPU Operator's toolkit.env
#: there); MicroK8s runs snap.microk8s.daemon-containerd ("microk8s.daemon-containerd[pid]:")
#: with its config under /var/snap/microk8s/ (microk8s.io/docs/addon-gpu).
_OWN_CONTAINERD_UNITS = {"k8s.containerd": "/var/lib/k8s-containerd/",
                         "microk8s.daemon-containerd": "/var/snap/microk8s/"}
#: A journal line's syslog identifier: "<month> <day> <time> <host> <identifier>[<pid>]:".
_JOURNAL_IDENT = lazy_compile(r"^\w{3} +\d{1,2} [\d:]{8} \S+ (?P<ident>[\w.@-]+)\[\d+\]:")
#: The toolkit's default containerd config, which it patches where toolkit.env names none.
_DEFAULT_CONFIG = "/etc/containerd/config.toml"


@check("container-toolkit", may_find=reads("cmd/journal-runtime.txt"))
def toolkit_patches_other_containerd(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """Pods refused for a missing NVIDIA runtime handler where the runtime journal shows the
    node's containerd is a distribution's own unit (``_OWN_CONTAINERD_UNITS``: the k8s snap's
    k8s.containerd, MicroK8s') while the toolkit is told no config path under that unit's
    folder (toolkit.env without CONTAINERD_CONFIG/RUNTIME_CONFIG: the default
    /etc/containerd/config.toml, a system containerd's the kubelet does not use). The toolkit
    then patches and signals a containerd that serves no pod, and the distribution's has no
    nvidia runtime however long the toolkit runs. A journal of a plain containerd.service
    (identifier "containerd"), a toolkit given the unit's own path, or a node without the
    toolkit's pod (a toolkit installed on the host, whose path no env tells), says nothing."""
    if not ctx.stack_pods(component) or not _handler_refused(ctx):
        return
    split = ctx.text_lines("cmd", "journal-runtime.txt")
    if split is None:
        return
    lines = split[0]
    found = next(((n, m["ident"]) for n, line in enumerate(lines, 1)
                  if (m := _JOURNAL_IDENT.match(line)) and m["ident"] in _OWN_CONTAINERD_UNITS), None)
    if found is None:
        return
    number, ident = found
    env = _toolkit_env(ctx)
    path = next((env[n] for n in _CONFIG_ENV if env.get(n)), _DEFAULT_CONFIG)
    home = _OWN_CONTAINERD_UNITS[ident]
    if path.startswith(home):
        return
    where = f"nodes/{ctx.name}/cmd/journal-runtime.txt:{number}"
    ev = Evidence(where, f"the kubelet's containerd runs as {ident}, whose config lives under {home}; "
                         f"the toolkit patches {path}, another containerd's")
    yield problem(component, "containerd_config_wrong_path", ev, specificity=80, ctx={SOURCE: where})


#: nvidia-ctk's warning that none of the runtime's low-level runtimes (runc, crun) has an entry
#: in the config it patches, so it writes its own runtime without their options
#: (nvidia-container-toolkit pkg/config/engine: containerd's GetDefaultRuntimeOptions falls back
#: to defaults, "could not infer options from runtimes [runc crun]; using defaults"; CRI-O's
#: returns none, and its drop-in carries no runtime table but NVIDIA's). Alone it is common on
#: healthy installs (the runtime's built-in runc defaults serve).
_OPTIONS_NOT_INFERRED = lazy_compile(r"(?i:\bcould not infer options from runtimes \[)")
#: systemd's word that the runtime's unit did not (re)start: "Job for crio.service failed
#: because the control process exited with error code.", "Failed to start containerd.service".
_UNIT_FAILED = lazy_compile(r"\bJob for (?P<unit>crio|containerd|docker)\.service failed\b"
                            r"|\bFailed to start (?:crio|containerd|docker)\.service\b")
#: The same unit started after all (a later restart that worked).
_UNIT_STARTED = lazy_compile(r"\bStarted (?:crio|containerd|docker)\.service\b"
                             r"|\bStarted (?:Container Runtime Interface for OCI \(CRI-O\)"
                             r"|containerd container runtime|Docker Application Container Engine)\b")


@check("container-toolkit", may_find=reads("cmd/journal-runtime.txt"))
def toolkit_config_refused_on_restart(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The runtime's unit failing to restart after nvidia-ctk patched its config without the
    options of any existing low-level runtime (``_OPTIONS_NOT_INFERRED``), with no later start:
    the config the toolkit wrote is what the runtime refuses (NVIDIA/holodeck#824: CRI-O's RPM
    on Amazon Linux 2023 keeps runc and crun under /usr/libexec/crio, toolkit 1.19.1 found
    neither, wrote /etc/crio/crio.conf.d/99-nvidia.toml without the runtime tables and set
    nvidia as default, and crio.service no longer started). The warning with a runtime that
    restarts, or a unit failure before the toolkit wrote anything, says nothing."""
    split = ctx.text_lines("cmd", "journal-runtime.txt")
    if split is None:
        return
    lines = split[0]
    warned = next((n for n, line in enumerate(lines) if _OPTIONS_NOT_INFERRED.search(line)), None)
    if warned is None:
        return
    failed = next((n for n in range(warned + 1, len(lines)) if _UNIT_FAILED.search(lines[n])), None)
    if failed is None or any(_UNIT_STARTED.search(line) for line in lines[failed + 1:]):
        return
    where = f"nodes/{ctx.name}/cmd/journal-runtime.txt:{failed + 1}"
    line = lines[failed].strip()[:MAX_LINE]
    ev = Evidence(where, f"{line} (after nvidia-ctk: {lines[warned].strip()[:MAX_LINE]})")
    yield problem(component, "error_config_invalid", ev, specificity=60,
                  ctx={SOURCE: where, LINE: line, MESSAGE: line})


#: The API server's refusal of a pod whose RuntimeClass does not exist: the RuntimeClass
#: admission plugin's 'pod rejected: RuntimeClass %q not found' (kubernetes
#: plugin/pkg/admission/runtimeclass/admission.go), as the controller that creates the pod
#: relays it: a ReplicaSet's or Job's FailedCreate, or an operator's own event on its custom
#: resource, which may keep only the inner words.
_CLASS_ABSENT = lazy_compile(r'\bRuntimeClass \\?"(?P<name>nvidia[\w.-]*)\\?" not found')
#: Objects whose events the node's own signatures read already (checks.signatures).
_NODE_OBJECTS = frozenset({"Pod", "Node"})


@check("container-toolkit", needs=("cluster/runtimeclasses",))
def runtime_class_absent(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """GPU pods a controller cannot create because the NVIDIA RuntimeClass they name does not
    exist, on a node whose runtime has an NVIDIA handler such a class would select. A pod the
    API server rejects never reaches a node, so the refusal is only in the creator's events (a
    Deployment's ReplicaSet, a Job, an operator's custom resource such as a PodClique, whose
    pods an admission webhook may have given runtimeClassName nvidia). Where the runtime serves
    the handler (its config lists an NVIDIA runtime; uncollected, the platform installs the
    runtime itself, as EKS's and AKS's GPU images do, or the toolkit's pod runs here) the
    missing object is what keeps the pods out: the toolkit's (the GPU Operator creates it
    with the runtime, operator.runtimeClass). Where no NVIDIA handler exists or can be known
    (GKE's plain runc and managed plugin, a node whose runtime config and toolkit are both
    unseen) the class could not serve, and the pod's own spec asks for the wrong thing."""
    found = _class_refusal(ctx.facts)
    if found is None or not _nvidia_handler_served(ctx):
        return
    where, line = found
    ev = Evidence(where, line)
    yield problem(component, "nvidia_runtimeclass_missing", ev, specificity=78,
                  ctx={SOURCE: where})


def _class_refusal(facts: ClusterFacts) -> tuple[str, str] | None:
    """The first Warning event of an object other than a pod or node whose line says the
    NVIDIA RuntimeClass it asked for does not exist (and the bundle lists none of that name):
    a fact of the cluster, found once and shared by every node (``facts.shared``)."""
    if _CLASS_REFUSAL_KEY not in facts.shared:
        facts.shared[_CLASS_REFUSAL_KEY] = _first_class_refusal(facts)
    return cast("tuple[str, str] | None", facts.shared[_CLASS_REFUSAL_KEY])


#: The ``ClusterFacts.shared`` key of ``_class_refusal``'s answer.
_CLASS_REFUSAL_KEY = "checks.toolkit.class_refusal"


def _first_class_refusal(facts: ClusterFacts) -> tuple[str, str] | None:
    """``_class_refusal`` read from the events, once for the cluster."""
    known = {rc.metadata.name for rc in facts.runtime_classes}
    for (kind, namespace, name), events in sorted(facts.events_by_object.items()):
        if kind in _NODE_OBJECTS:
            continue
        for ev in events:
            if ev.type != "Warning" or "RuntimeClass" not in ev.message:
                continue
            for text in ev.message.splitlines():
                m = _CLASS_ABSENT.search(text)
                if m is not None and m["name"] not in known:
                    where = f"event {kind} {namespace}/{name} reason={ev.reason} count={ev.count or 1}"
                    return where, text.strip()[:MAX_LINE]
    return None


def _nvidia_handler_served(ctx: NodeContext) -> bool:
    """Whether the node's runtime has an NVIDIA handler a RuntimeClass could select: by its
    config where collected, else by a platform that installs the NVIDIA runtime itself or the
    toolkit's pod running here. A platform without a place for the toolkit (GKE) never."""
    platform = ctx.platform
    if "container-toolkit" in platform.not_used:
        return False
    setup = ctx.runtime_setup
    if setup is not None:
        return bool(setup.nvidia)
    return "container-toolkit" in platform.provides or bool(ctx.stack_pods("container-toolkit"))


#: The toolkit failing to reach containerd through the folder its DaemonSet mounts the socket's
#: directory on (the GPU Operator's /runtime/sock-dir): 'unable to dial: dial unix
#: /runtime/sock-dir/containerd.sock: connect: connection refused' (a socket file with nothing
#: listening) or '... no such file or directory' (no socket there at all).
_SOCKET_UNREACHED = lazy_compile(
    r"dial unix /runtime/sock-dir/[\w.-]+\.sock: connect: (?:connection refused|no such file or directory)")
#: The toolkit's settings that name the runtime's socket (toolkit.env).
_SOCKET_ENV = ("CONTAINERD_SOCKET", "RUNTIME_SOCKET")
#: containerd's own socket, which the toolkit dials where its env names none.
_DEFAULT_SOCKET = "/run/containerd/containerd.sock"


@check("container-toolkit", may_find=logs_here("container-toolkit"))  # (it reads only their logs)
def toolkit_dials_default_socket(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The toolkit's log says it could not reach containerd's socket (``_SOCKET_UNREACHED``) on
    a distribution that runs its own containerd (the platform's containerd reads another config
    than /etc/containerd/config.toml: K3s and RKE2 listen on /run/k3s/containerd/containerd.sock,
    MicroK8s under /var/snap/microk8s/common/run/) while the toolkit is told no socket or
    containerd's default one (toolkit.env without CONTAINERD_SOCKET/RUNTIME_SOCKET): it dials a
    socket the distribution's containerd does not serve, so nothing it patched is loaded
    (docs.rke2.io/add-ons/gpu_operators and docs.k3s.io's NVIDIA runtime notes set
    CONTAINERD_SOCKET for the operator; NVIDIA/gpu-operator#522). The same words on a node whose
    containerd is the system's own, or with the toolkit given a socket, are left to the
    signatures (containerd down, not restarted)."""
    configs = ctx.platform.containerd_configs
    if not configs or configs[0] == _DEFAULT_CONFIG or not ctx.stack_pods(component):
        return
    env = _toolkit_env(ctx)
    socket = next((env[n] for n in _SOCKET_ENV if env.get(n)), _DEFAULT_SOCKET)
    if socket != _DEFAULT_SOCKET:
        return
    for sp in ctx.stack_pods(component):
        for log in ctx.logs_of(sp.pod):
            for number, line in enumerate(log.lines, 1):
                if _SOCKET_UNREACHED.search(line):
                    where = f"{log.path}:{number}"
                    seen = (f"{line.strip()[:MAX_LINE]} ({ctx.platform.title} runs its own containerd; "
                            f"the toolkit is given no socket and dials {_DEFAULT_SOCKET})")
                    yield problem(component, "containerd_config_wrong_path", Evidence(where, seen),
                                  specificity=80, ctx={SOURCE: where})
                    return
