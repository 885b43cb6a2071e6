"""Container and pod status shapes, exactly as the kubelet reports them.

A pod's status is described by a list of `Ctr` (one per container, init first);
`pod_status` turns that into conditions, phase and the container status arrays,
so a fault only states "this container is crash-looping" and the rest follows.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Literal

from gpunode.sim import ids
from gpunode.sim.k8s import Obj, condition

State = Literal["running", "completed", "waiting", "crashloop", "terminated"]


@dataclass(frozen=True)
class Ctr:
    """What one container is doing now (and what it did last)."""

    name: str
    image: str
    state: State = "running"
    ready: bool = True
    restarts: int = 0
    started_at: datetime | None = None
    finished_at: datetime | None = None
    exit_code: int = 0
    reason: str = ""
    message: str = ""
    last_exit_code: int = 1
    last_reason: str = "Error"
    last_message: str = ""
    last_started_at: datetime | None = None
    last_finished_at: datetime | None = None
    init: bool = False


def running(c: Ctr, at: datetime, ready: bool = True) -> Ctr:
    """The container is up since `at`."""
    return replace(c, state="running", ready=ready, started_at=at)


def completed(c: Ctr, at: datetime, took: timedelta) -> Ctr:
    """An init (or job) container that exited 0."""
    return replace(c, state="completed", ready=True, started_at=at, finished_at=at + took)


def waiting(c: Ctr, reason: str = "PodInitializing", message: str = "") -> Ctr:
    """The container has not started (yet)."""
    return replace(c, state="waiting", ready=False, reason=reason, message=message)


def crashloop(
    c: Ctr,
    restarts: int,
    *,
    last_start: datetime,
    last_end: datetime,
    exit_code: int = 1,
    reason: str = "Error",
) -> Ctr:
    """Back-off after the container exited non-zero `restarts` times."""
    return replace(
        c,
        state="crashloop",
        ready=False,
        restarts=restarts,
        last_started_at=last_start,
        last_finished_at=last_end,
        last_exit_code=exit_code,
        last_reason=reason,
    )


def failed(c: Ctr, at: datetime, took: timedelta, exit_code: int = 1) -> Ctr:
    """A container (of a run-once pod) that exited with an error."""
    return replace(
        c,
        state="terminated",
        ready=False,
        started_at=at,
        finished_at=at + took,
        exit_code=exit_code,
        reason="Error",
    )


def container_status(c: Ctr, pod_key: str, runtime: str, md: Obj) -> Obj:
    """One entry of containerStatuses / initContainerStatuses."""
    cid = ids.container_id(f"{pod_key}/{c.name}/{c.restarts}", runtime)
    out: Obj = {}
    if c.state != "waiting":
        out["containerID"] = cid
    out["image"] = c.image
    out["imageID"] = ids.image_digest(c.image) if c.state != "waiting" or c.restarts else ""
    out["lastState"] = _last_state(c, pod_key, runtime)
    out["name"] = c.name
    out["ready"] = c.ready
    out["restartCount"] = c.restarts
    out["started"] = c.state == "running"
    out["state"] = _state(c, md, cid)
    if not c.init:
        return out
    out.pop("started")
    return out


def _state(c: Ctr, md: Obj, cid: str) -> Obj:
    """The `state` object: exactly one of running / waiting / terminated."""
    if c.state == "running":
        return {"running": {"startedAt": ids.rfc3339(_at(c.started_at))}}
    if c.state in ("completed", "terminated"):
        return {
            "terminated": _terminated(c.exit_code, c.reason or "Completed", cid, c.started_at, c.finished_at)
        }
    if c.state == "crashloop":
        pod = f"{md['name']}_{md['namespace']}({md['uid']})"
        msg = f"back-off 5m0s restarting failed container={c.name} pod={pod}"
        return {"waiting": {"message": msg, "reason": "CrashLoopBackOff"}}
    out: Obj = {}
    if c.message:
        out["message"] = c.message
    out["reason"] = c.reason or "PodInitializing"
    return {"waiting": out}


def _last_state(c: Ctr, pod_key: str, runtime: str) -> Obj:
    """`lastState.terminated` for a container that has restarted, else `{}`."""
    if c.restarts == 0:
        return {}
    cid = ids.container_id(f"{pod_key}/{c.name}/{c.restarts - 1}", runtime)
    start = c.last_started_at or c.started_at
    last = _terminated(c.last_exit_code, c.last_reason, cid, start, c.last_finished_at)
    if c.last_message:
        last["message"] = c.last_message  # e.g. the runtime's StartError text
    return {"terminated": dict(sorted(last.items()))}


def _terminated(code: int, reason: str, cid: str, started: datetime | None, finished: datetime | None) -> Obj:
    """A `terminated` state block."""
    start = _at(started)
    end = finished or start + timedelta(seconds=3)
    return {
        "containerID": cid,
        "exitCode": code,
        "finishedAt": ids.rfc3339(end),
        "reason": reason,
        "startedAt": ids.rfc3339(start),
    }


def _at(moment: datetime | None) -> datetime:
    """Guard: every started container has a start time."""
    if moment is None:
        raise ValueError("container state needs a start time")
    return moment


@dataclass(frozen=True)
class PodPlace:
    """Where a pod runs and since when."""

    node: str
    host_ip: str
    pod_ip: str | None
    scheduled: datetime
    qos: str = "BestEffort"
    runtime: str = "containerd"


def pod_status(pod: Obj, place: PodPlace, ctrs: list[Ctr], *, node_ready: bool = True) -> Obj:
    """Full pod status, phase and conditions derived from its containers."""
    md = pod["metadata"]
    key = f"{md['namespace']}/{md['name']}"
    inits = [c for c in ctrs if c.init]
    mains = [c for c in ctrs if not c.init]
    sandbox = _sandbox_up(ctrs)
    status: Obj = {"conditions": _conditions(place, inits, mains, node_ready=node_ready, up=sandbox)}
    status["containerStatuses"] = [_cs(c, key, place, md) for c in mains]
    status["hostIP"] = place.host_ip
    status["hostIPs"] = [{"ip": place.host_ip}]
    if inits:
        status["initContainerStatuses"] = [_cs(c, key, place, md) for c in inits]
    status["phase"] = _phase(inits, mains)
    if place.pod_ip is not None and sandbox:
        status["podIP"] = place.pod_ip
        status["podIPs"] = [{"ip": place.pod_ip}]
    status["qosClass"] = place.qos
    status["startTime"] = ids.rfc3339(place.scheduled)
    return status


def _cs(c: Ctr, key: str, place: PodPlace, md: Obj) -> Obj:
    return container_status(c, key, place.runtime, md)


def _sandbox_up(ctrs: list[Ctr]) -> bool:
    """A pod gets an IP once its sandbox exists, i.e. some container ever started."""
    return not ctrs or any(c.state != "waiting" or c.restarts for c in ctrs)


def _phase(inits: list[Ctr], mains: list[Ctr]) -> str:
    """Pending until init containers finish; Running once a main container ran."""
    if any(c.state != "completed" for c in inits):
        return "Pending"
    if mains and all(c.state in ("completed", "terminated") for c in mains):
        return "Failed" if any(c.exit_code for c in mains) else "Succeeded"
    if all(c.state == "waiting" and not c.restarts for c in mains):
        return "Pending"
    return "Running"


def _conditions(
    place: PodPlace, inits: list[Ctr], mains: list[Ctr], *, node_ready: bool, up: bool
) -> list[Obj]:
    """PodReadyToStartContainers, Initialized, Ready, ContainersReady, PodScheduled."""
    t0 = place.scheduled
    t_init = t0 + timedelta(seconds=2)
    sandbox = "True" if up else "False"
    not_init = [c.name for c in inits if c.state != "completed"]
    done = bool(mains) and all(c.state in ("completed", "terminated") for c in mains)
    if done:
        sandbox = "False"
    init_cond = (
        condition("Initialized", "True", t_init)
        if not not_init
        else condition(
            "Initialized",
            "False",
            t0,
            "ContainersNotInitialized",
            f"containers with incomplete status: [{' '.join(not_init)}]",
        )
    )
    ctrs_ready = _ready_condition(t0, mains, bool(done))
    ready = dict(ctrs_ready, type="Ready")
    if not node_ready:
        # The node lifecycle controller flips only Ready, leaving the rest stale.
        ready = {k: v for k, v in ready.items() if k not in ("reason", "message")}
        ready["status"] = "False"
    return [
        condition("PodReadyToStartContainers", sandbox, t_init),
        init_cond,
        ready,
        dict(ctrs_ready, type="ContainersReady"),
        condition("PodScheduled", "True", t0),
    ]


def _ready_condition(t0: datetime, mains: list[Ctr], done: bool) -> Obj:
    """ContainersReady: True only when every main container is ready."""
    unready = [c.name for c in mains if not c.ready]
    when = max((c.started_at for c in mains if c.started_at), default=t0)
    if done:
        return condition("Ready", "False", when, "PodCompleted")
    if unready:
        return condition(
            "Ready",
            "False",
            when,
            "ContainersNotReady",
            f"containers with unready status: [{' '.join(unready)}]",
        )
    return condition("Ready", "True", when + timedelta(seconds=1))
