"""Building blocks of fault cascades: a container crash-looping, a pod stuck in an init
container, a sandbox the runtime cannot create, a node reboot, and the chains the GPU
stack shows when the driver or the toolkit never becomes ready."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta

from gpunode.errors import UsageError
from gpunode.sim import ids, logs, nodes
from gpunode.sim.k8s import Obj, event
from gpunode.sim.logtext import join
from gpunode.sim.podstatus import Ctr, crashloop, running, waiting
from gpunode.sim.world import NodeState, World

GPU_OPERANDS = ("device-plugin", "gfd", "dcgm-exporter", "mig-manager")
NO_RUNTIME = (
    "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: "
    'no runtime for "nvidia" is configured'
)


# -- single pods -----------------------------------------------------------------


def edit_ctr(world: World, key: str, name: str, change: Callable[[Ctr], Ctr]) -> None:
    """Apply `change` to one container's state."""
    world.set_containers(key, [change(c) if c.name == name else c for c in world.containers(key)])


def crash(
    world: World,
    key: str,
    container: str,
    *,
    restarts: int,
    log: str,
    exit_code: int = 1,
    reason: str = "Error",
    previous_log: str | None = None,
) -> None:
    """`container` exits `restarts` times and now waits in CrashLoopBackOff."""
    end = world.ago(seconds=20 + ids.number(key + container, 200))
    start = end - timedelta(seconds=3 + ids.number(key, 20))
    edit_ctr(
        world,
        key,
        container,
        lambda c: crashloop(c, restarts, last_start=start, last_end=end, exit_code=exit_code, reason=reason),
    )
    world.set_log(key, container, log)
    world.set_log(key, container, previous_log or log, previous=True)
    pod = world.pods[key]
    md = pod["metadata"]
    message = (
        f"Back-off restarting failed container {container} in pod {md['name']}_{md['namespace']}({md['uid']})"
    )
    pod_event(world, key, "BackOff", message, count=max(1, restarts * 4), container=container)


def stall(world: World, key: str, running_init: str, since: datetime, log: str) -> None:
    """The pod sits in init container `running_init`; what follows has not started."""
    out: list[Ctr] = []
    reached = False
    for c in world.containers(key):
        if c.name == running_init:
            reached = True
            out.append(replace(running(c, since, ready=False), restarts=c.restarts))
        elif reached:
            out.append(waiting(replace(c, restarts=0)))
            world.logs.pop(f"{key}/{c.name}", None)
        else:
            out.append(c)
    world.set_containers(key, out)
    world.set_log(key, running_init, log)


def no_sandbox(world: World, key: str, since: datetime, message: str = NO_RUNTIME) -> None:
    """The runtime cannot create the pod sandbox: nothing ever starts, kubelet keeps retrying."""
    world.set_containers(key, [waiting(replace(c, restarts=0)) for c in world.containers(key)])
    for log_key in [k for k in world.logs if k.startswith(key + "/")]:
        del world.logs[log_key]
    elapsed = int((world.collected_at - since).total_seconds())
    pod_event(world, key, "FailedCreatePodSandBox", message, count=max(2, elapsed // 12), first=since)


def pod_event(
    world: World,
    key: str,
    reason: str,
    message: str,
    *,
    count: int = 1,
    kind: str = "Warning",
    container: str | None = None,
    first: datetime | None = None,
) -> None:
    """A kubelet event about a pod (optionally one of its containers)."""
    pod = world.pods[key]
    node = world.places[key].node
    path = f"spec.containers{{{container}}}" if container else None
    world.add_event(
        event(
            "Pod",
            pod,
            reason,
            message,
            first=first or world.ago(minutes=49),
            last=world.ago(seconds=31),
            count=count,
            kind=kind,
            host=node,
            field_path=path,
        )
    )


def wait_lines(world: World, since: datetime, line: str, every: int = 5, cap: int = 720) -> str:
    """A poll loop's log: one line every `every` seconds since `since` (bounded)."""
    count = min(cap, max(1, int((world.collected_at - since).total_seconds()) // every))
    return join([line] * count)


# -- node-wide -------------------------------------------------------------------


def reboot(world: World, node: NodeState, at: datetime) -> None:
    """The node rebooted at `at`: every pod's containers ran again, in order, once it was back."""
    node.host.booted_at = at
    for key, place in world.places.items():
        if place.node == node.name:
            world.ctrs[key] = _rerun(world.ctrs[key], at, at + timedelta(seconds=95 + ids.number(key, 60)))


def _rerun(ctrs: list[Ctr], down: datetime, up: datetime) -> list[Ctr]:
    """Init containers run again one after another; running containers restart (lastState Unknown)."""
    out: list[Ctr] = []
    t = up
    for c in ctrs:
        if c.state == "completed" and c.init:
            took = (c.finished_at or t) - (c.started_at or t)
            out.append(replace(c, started_at=t, finished_at=t + took))
            t += took + timedelta(seconds=1)
        elif c.state == "running":
            out.append(
                replace(
                    c,
                    started_at=t,
                    restarts=c.restarts + 1,
                    last_exit_code=255,
                    last_reason="Unknown",
                    last_started_at=c.started_at,
                    last_finished_at=down,
                )
            )
        else:
            out.append(c)
    return out


def drop_gpus(node: NodeState, capacity: str | None = None, allocatable: str | None = None) -> None:
    """The device plugin never registered (None) or advertises fewer GPUs."""
    nodes.set_resource(node.obj, nodes.GPU_RESOURCE, capacity, allocatable)


def strip_gfd_labels(node: NodeState) -> None:
    """GFD never ran on this node."""
    labels = node.labels
    for key in [k for k in labels if nodes.is_gfd_label(k)]:
        del labels[key]


def remove_validation_pods(world: World, node: NodeState) -> None:
    for kind in ("cuda-validator", "plugin-validator"):
        key = world.ds_pod_key(kind, node.name)
        if key:
            world.remove_pod(key)


def _operand_keys(world: World, node: NodeState, names: tuple[str, ...]) -> list[str]:
    keys = [world.ds_pod_key(n, node.name) for n in names]
    return [k for k in keys if k]


def driver_not_ready(world: World, node: NodeState, since: datetime, error: str | None = None) -> None:
    """Everything above the driver waits: the classic `Init:0/1` cascade."""
    error = error or "chroot: failed to run command 'nvidia-smi': No such file or directory"
    ctx_node = node
    attempts = max(1, min(700, int((world.collected_at - since).total_seconds()) // 5))
    for operand in ("toolkit", "validator"):
        key = world.ds_pod_key(operand, node.name)
        if key:
            ctx = logs.LogCtx(world, ctx_node, key, since)
            stall(
                world, key, "driver-validation", since, logs.driver_validation_waiting(ctx, attempts, error)
            )
    for key in _operand_keys(world, node, GPU_OPERANDS):
        stall(
            world,
            key,
            "toolkit-validation",
            since,
            wait_lines(world, since, "waiting for nvidia container stack to be setup"),
        )
    _gpu_stack_gone(world, node)
    node.host.driver_loaded = False
    node.host.nvidia_smi = False
    node.host.validations = {}


def _gpu_stack_gone(world: World, node: NodeState) -> None:
    """No GPUs advertised, no GFD labels, no validation pods, no DCGM data."""
    remove_validation_pods(world, node)
    drop_gpus(node)
    strip_gfd_labels(node)
    node.host.dcgm_scrape = False


def toolkit_not_ready(world: World, node: NodeState, since: datetime) -> None:
    """The driver works but the runtime is not set up: GPU pods cannot get a sandbox (CDI) or wait."""
    validations = node.host.validations
    for name in ("toolkit-ready", "cuda-ready", "plugin-ready"):
        validations.pop(name, None)
    gpu_pods = _operand_keys(world, node, (*GPU_OPERANDS, "validator"))
    for key in gpu_pods:
        if world.scenario.cluster.cdi:
            no_sandbox(world, key, since)
        elif key == world.ds_pod_key("validator", node.name):
            stall(
                world, key, "toolkit-validation", since, wait_lines(world, since, "toolkit is not ready", 10)
            )
        else:
            stall(
                world,
                key,
                "toolkit-validation",
                since,
                wait_lines(world, since, "waiting for nvidia container stack to be setup"),
            )
    _gpu_stack_gone(world, node)


def append_log(world: World, key: str, container: str, lines: list[str]) -> None:
    """Add lines to the end of a container's current log."""
    world.set_log(key, container, world.log(key, container) + join(lines))


def pod(world: World, operand: str, node: NodeState) -> tuple[str, Obj]:
    """Key and object (for editing) of `operand`'s pod on `node`."""
    key = world.ds_pod_key(operand, node.name)
    if key is None:
        raise UsageError(
            f"scenario {world.scenario.name}: the fault needs a {operand} pod on {node.name}, "
            "which this scenario does not deploy"
        )
    return key, world.pod(key)
