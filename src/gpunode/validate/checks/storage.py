"""Storage: CSI drivers registered on GPU nodes, a default StorageClass, no PVC stuck Pending."""

from __future__ import annotations

from datetime import datetime, timedelta

from gpunode.bundle.kube import GenericObject
from gpunode.model import Evidence
from gpunode.validate.context import ValidationContext
from gpunode.validate.registry import count, failed, named, passed, skipped, unknown, validation, warned
from gpunode.validation import CATEGORY, Outcome, Verdict, worst

CAT = CATEGORY.STORAGE
DEFAULT_ANNOTATIONS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)
# A claim younger than this may simply still be provisioning.
PENDING_GRACE = timedelta(minutes=2)


@validation(
    "storage.csi-registered",
    CAT,
    "CSI drivers registered on every GPU node",
    fix="Check the CSI node plugin pod (node-driver-registrar log) on the named nodes.",
    needs=("cluster/csidrivers", "cluster/csinodes"),
)
def csi_registered(ctx: ValidationContext) -> Outcome:
    """Each CSI driver backing a StorageClass (else any node plugin) is listed in each GPU node's CSINode."""
    drivers = {d.metadata.name for d in ctx.facts.csi_drivers}
    if not drivers:
        return skipped("no CSIDriver objects: no CSI storage in the cluster")
    required = _required_drivers(ctx, drivers)
    missing: dict[str, list[str]] = {}
    lost = ctx.facts.skipped.get("csinodes")
    unread = []  # nodes whose CSINode may be an item skipped as malformed: unknown, not missing
    for name in ctx.gpu_nodes:
        csinode = ctx.facts.csi_nodes.get(name)
        if csinode is None and lost is not None and lost.may_be(name):
            unread.append(name)
            continue
        listed = {d.name for d in (csinode.spec.drivers or ())} if csinode else set()
        if required - listed:
            missing[name] = sorted(required - listed)
    if not ctx.gpu_nodes:
        return unknown("no GPU nodes to check")
    unread_said = (f"; CSINode of {named(unread)} skipped as malformed (cluster/csinodes.json "
                   f"{lost.first}): unknown" if unread and lost else "")
    if missing:
        evidence = [
            Evidence(f"csinode/{n} spec.drivers", f"missing {', '.join(d)}") for n, d in missing.items()
        ]
        return failed(f"not registered on {named(list(missing))}{unread_said}", *evidence,
                      nodes=list(missing))
    if unread:
        return unknown(unread_said.removeprefix("; "), nodes=unread)
    shown = ", ".join(sorted(required))
    return passed(
        f"{shown} registered on {len(ctx.gpu_nodes)} GPU nodes", Evidence("cluster/csinodes.json", shown)
    )


def _required_drivers(ctx: ValidationContext, drivers: set[str]) -> set[str]:
    backing = {sc.provisioner for sc in ctx.facts.storage_classes if sc.provisioner in drivers}
    if backing:
        return backing
    on_nodes = {d.name for c in ctx.facts.csi_nodes.values() for d in (c.spec.drivers or ())}
    return drivers & on_nodes


@validation(
    "storage.default-class",
    CAT,
    "Exactly one default StorageClass",
    fix=(
        "kubectl annotate storageclass NAME storageclass.kubernetes.io/is-default-class=true "
        "(and remove it from all others)"
    ),
    needs=("cluster/storageclasses",),
)
def default_class(ctx: ValidationContext) -> Outcome:
    """PVCs without a class only bind when exactly one class is marked default."""
    defaults = [sc.metadata.name for sc in ctx.facts.storage_classes if is_default_class(sc)]
    classes = [sc.metadata.name for sc in ctx.facts.storage_classes]
    ev = Evidence(
        "cluster/storageclasses.json",
        f"classes: {named(classes) or 'none'}; default: {named(defaults) or 'none'}",
    )
    if not defaults:
        return failed("no default StorageClass", ev)
    if len(defaults) > 1:
        return warned(
            f"{len(defaults)} default StorageClasses ({named(defaults)}): the choice is arbitrary", ev
        )
    sc = next(s for s in ctx.facts.storage_classes if s.metadata.name == defaults[0])
    return passed(f"default StorageClass {defaults[0]} ({sc.provisioner})", ev)


def is_default_class(sc: GenericObject) -> bool:
    return any(sc.metadata.annotations.get(a) == "true" for a in DEFAULT_ANNOTATIONS)


@validation(
    "storage.pvc-bound",
    CAT,
    "No PersistentVolumeClaim stuck Pending",
    fix="kubectl describe pvc NAME: the provisioner's events name the cause (class, quota, capacity).",
    needs=("cluster/persistentvolumeclaims",),
)
def pvc_bound(ctx: ValidationContext) -> Outcome:
    """Pending claims fail, unless they wait for their first consumer; young ones only warn."""
    pending = [p for p in ctx.facts.pvcs if p.status.get("phase") == "Pending"]
    if not pending:
        return passed(f"{len(ctx.facts.pvcs)} PVCs, none Pending")
    judged = [(p, *_pending_verdict(ctx, p)) for p in pending]
    stuck = [(p, v, why) for p, v, why in judged if v != Verdict.PASS]
    if not stuck:
        return passed(
            f"{len(ctx.facts.pvcs)} PVCs; waiting for a consumer: {named([_name(p) for p in pending])}"
        )
    evidence = [Evidence(f"pvc {_name(p)}", why) for p, _, why in stuck]
    summary = f"{count(len(stuck), 'PVC')} Pending: {named([_name(p) for p, _, _ in stuck])}"
    verdict = worst(v for _, v, _ in stuck)
    return failed(summary, *evidence) if verdict == Verdict.FAIL else warned(summary, *evidence)


def _pending_verdict(ctx: ValidationContext, pvc: GenericObject) -> tuple[Verdict, str]:
    """(verdict, why) for one Pending claim, from its events, class and age."""
    meta = pvc.metadata
    events = ctx.facts.events_for("PersistentVolumeClaim", meta.namespace, meta.name)
    warnings = [e for e in events if e.type == "Warning"]
    if warnings:
        return Verdict.FAIL, f"{warnings[-1].reason}: {warnings[-1].message}"
    sc_name = _class_of(ctx, pvc)
    if sc_name is None:
        return Verdict.FAIL, "no storageClassName and no default StorageClass"
    if ctx.binding_mode(sc_name) == "WaitForFirstConsumer":
        return Verdict.PASS, f"class {sc_name} binds on first consumer"
    age = _age(ctx, meta.creation_timestamp)
    if age is not None and age < PENDING_GRACE:
        return Verdict.WARN, f"Pending, created {int(age.total_seconds())}s before collection"
    detail = f"{events[-1].reason}: {events[-1].message}" if events else "no events"
    return Verdict.FAIL, f"Pending on class {sc_name}: {detail}"


def _class_of(ctx: ValidationContext, pvc: GenericObject) -> str | None:
    name = pvc.spec.get("storageClassName")
    if isinstance(name, str):
        return name
    return next((sc.metadata.name for sc in ctx.facts.storage_classes if is_default_class(sc)), None)


def _age(ctx: ValidationContext, created: str | None) -> timedelta | None:
    collected = ctx.facts.manifest.collected_at
    if not created or not collected:
        return None
    try:
        return _parse_time(collected) - _parse_time(created)
    except ValueError:
        return None


def _parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _name(pvc: GenericObject) -> str:
    return f"{pvc.metadata.namespace}/{pvc.metadata.name}"


__all__ = ["is_default_class"]
