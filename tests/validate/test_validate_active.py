"""Active checks end to end against the test API server with the workload overlay.

The overlay moves test pods through Pending → Running → Succeeded and prints
what the bundle's node would print; scripts make nodes short of GPUs, hang
pods, or deny permissions. Every test ends with no test object left behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_workloads import WorkloadScript, WorkloadServer, serve_with_workloads
from vhelpers import Json, edit_items, item

from gpunode.apiserver.faults import Faults
from gpunode.bundle.load import load_bundle
from gpunode.validate.active.session import ActiveOptions, run_active
from gpunode.validation import CheckResult, Verdict

FAST = {"poll_s": 0.02, "timeout_s": 5.0}


@pytest.fixture
def serve(request: pytest.FixtureRequest) -> Iterator[object]:
    started: list[WorkloadServer] = []

    def start(
        bundle: Path, script: WorkloadScript | None = None, faults: Faults | None = None
    ) -> WorkloadServer:
        server = serve_with_workloads(bundle, script, faults=faults)
        started.append(server)
        return server

    yield start
    for server in started:
        server.running.stop()


def run(bundle: Path, server: WorkloadServer, **options: object) -> dict[str, CheckResult]:
    opts = ActiveOptions(kubeconfig=server.running.kubeconfig_path, **{**FAST, **options})  # type: ignore[arg-type]
    return {r.id: r for r in run_active(load_bundle(bundle), opts)}


def test_healthy_cluster_passes_and_leaves_nothing(falcon_healthy: Path, serve) -> None:  # type: ignore[no-untyped-def]
    server = serve(falcon_healthy)
    results = run(falcon_healthy, server, nccl=True)
    assert {k: v.verdict for k, v in results.items()} == {
        "gpu.workload-smoke": Verdict.PASS,
        "storage.pvc-write": Verdict.PASS,
        "network.nccl-allreduce": Verdict.PASS,
        "infra.active-cleanup": Verdict.PASS,
    }
    assert all(r.active for r in results.values())
    assert "listed all 8 GPUs" in results["gpu.workload-smoke"].summary
    assert server.overlay.our_objects() == []
    audit = server.running.audit()
    created = [a for a in audit if a.verb == "create"]
    assert {a.resource for a in created} == {"namespaces", "pods", "persistentvolumeclaims", "secrets"}
    assert all(a.namespace.startswith("gpunode-validate-") for a in created if a.resource != "namespaces")
    assert [a.verb for a in audit if a.resource == "namespaces" and a.name][-1] == "delete"


def test_node_listing_fewer_gpus_fails_naming_it(falcon_healthy: Path, serve) -> None:  # type: ignore[no-untyped-def]
    server = serve(falcon_healthy, WorkloadScript(gpus_listed={"gpu-wk-02": 7}))
    smoke = run(falcon_healthy, server, pvc=False)["gpu.workload-smoke"]
    assert (smoke.verdict, smoke.nodes) == (Verdict.FAIL, ("gpu-wk-02",))
    assert "listed 7 of 8 GPUs" in smoke.summary
    assert smoke.fix


def test_gpu_withheld_keeps_the_pod_pending_and_fails(falcon: Path, serve) -> None:  # type: ignore[no-untyped-def]
    edit_items(
        falcon,
        "nodes",
        lambda nodes: item(nodes, "gpu-wk-02")["status"]["allocatable"].update({"nvidia.com/gpu": "7"}),
    )
    server = serve(falcon)
    smoke = run(falcon, server, pvc=False, timeout_s=0.3)["gpu.workload-smoke"]
    assert smoke.verdict == Verdict.FAIL and smoke.nodes == ("gpu-wk-02",)
    assert "did not finish" in smoke.summary and "Insufficient nvidia.com/gpu" in smoke.summary
    assert server.overlay.our_objects() == []


def test_claim_without_default_class_fails_storage(falcon: Path, serve) -> None:  # type: ignore[no-untyped-def]
    def undefault(classes: list[Json]) -> None:
        classes[0]["metadata"]["annotations"] = {}

    edit_items(falcon, "storageclasses", undefault)
    server = serve(falcon)
    pvc = run(falcon, server, gpu_smoke=False, timeout_s=0.3)["storage.pvc-write"]
    assert (pvc.category, pvc.verdict) == ("storage", Verdict.FAIL)
    assert "unbound immediate PersistentVolumeClaims" in pvc.summary
    assert any(ev.excerpt == "Pending" for ev in pvc.evidence)


def test_nccl_below_the_floor_fails(falcon_healthy: Path, serve) -> None:  # type: ignore[no-untyped-def]
    server = serve(falcon_healthy, WorkloadScript(nccl_busbw_gbps=41.5))
    created: list[str] = []
    results = run(falcon_healthy, server, gpu_smoke=False, pvc=False, nccl=True, on_created=created.append)
    nccl = results["network.nccl-allreduce"]
    assert nccl.verdict == Verdict.FAIL and "41.5 GB/s at 1 GiB below the floor of 100 GB/s" in nccl.summary
    assert "links' rate unknown" in nccl.summary and nccl.nodes == ("gpu-wk-01+gpu-wk-02",)
    # the key first, then the worker (sshd); the launcher only once the worker has an address
    assert created[1:] == ["gpunode-validate-nccl-ssh", "nccl-0-worker", "nccl-0-launcher"]
    assert server.overlay.our_objects() == []


#: Two 400 Gb/s NDR InfiniBand ports per node, as collect's grep of /sys/class/infiniband
#: prints them: the pair is rated at 100 GB/s.
SYSFS_TWO_NDR = "".join(
    f"mlx5_{i}/ports/1/{attr}:{value}\n"
    for i in range(2)
    for attr, value in (("state", "4: ACTIVE"), ("phys_state", "5: LinkUp"),
                        ("rate", "400 Gb/sec (4X NDR)"), ("link_layer", "InfiniBand"))
)


@pytest.fixture
def falcon_ndr(falcon: Path) -> Path:
    for node in ("gpu-wk-01", "gpu-wk-02"):
        (falcon / "nodes" / node / "cmd" / "sysfs-infiniband.txt").write_text(SYSFS_TWO_NDR)
    return falcon


@pytest.mark.parametrize(("busbw", "verdict", "share"), [
    (92.0, Verdict.PASS, "92%"), (41.5, Verdict.WARN, "42%"), (9.8, Verdict.FAIL, "10%"),
])
def test_nccl_bus_bandwidth_is_judged_against_the_links_rated_speed(  # type: ignore[no-untyped-def]
    falcon_ndr: Path, serve, busbw: float, verdict: Verdict, share: str
) -> None:
    server = serve(falcon_ndr, WorkloadScript(nccl_busbw_gbps=busbw))
    nccl = run(falcon_ndr, server, gpu_smoke=False, pvc=False, nccl=True)["network.nccl-allreduce"]
    assert (nccl.category, nccl.verdict) == ("network", verdict)
    assert f"{share} of the links' rated 100 GB/s" in nccl.summary
    assert "2 active InfiniBand port(s), 800 Gb/s" in nccl.summary
    assert "gpu-wk-01+gpu-wk-02" in nccl.summary
    assert server.overlay.our_objects() == []


def test_nccl_timeout_fails_and_cleans_up(falcon_healthy: Path, serve) -> None:  # type: ignore[no-untyped-def]
    server = serve(falcon_healthy, WorkloadScript(nccl_hang=True))
    results = run(falcon_healthy, server, gpu_smoke=False, pvc=False, nccl=True, timeout_s=0.3)
    nccl = results["network.nccl-allreduce"]
    assert nccl.verdict == Verdict.FAIL and "NCCL all-reduce did not finish in" in nccl.summary
    assert results["infra.active-cleanup"].verdict == Verdict.PASS
    assert server.overlay.our_objects() == []


def test_ctrl_c_during_the_nccl_run_deletes_its_pods_and_key(  # type: ignore[no-untyped-def]
    falcon_healthy: Path, serve
) -> None:
    server = serve(falcon_healthy, WorkloadScript(nccl_hang=True))

    def interrupt_once_launched(name: str) -> None:
        if name.endswith("-launcher"):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run(falcon_healthy, server, gpu_smoke=False, pvc=False, nccl=True, on_created=interrupt_once_launched)
    assert server.overlay.our_objects() == []
    deleted = {a.name for a in server.running.audit() if a.verb == "delete"}
    assert {"gpunode-validate-nccl-ssh", "nccl-0-worker", "nccl-0-launcher"} <= deleted


def test_timeout_fails_and_still_cleans_up(falcon_healthy: Path, serve) -> None:  # type: ignore[no-untyped-def]
    server = serve(falcon_healthy, WorkloadScript(hang=frozenset({"gpu-wk-01"})))
    results = run(falcon_healthy, server, pvc=False, timeout_s=0.3)
    smoke = results["gpu.workload-smoke"]
    assert smoke.nodes == ("gpu-wk-01",) and "did not finish in" in smoke.summary
    assert results["infra.active-cleanup"].verdict == Verdict.PASS
    assert server.overlay.our_objects() == []


def test_forbidden_pod_creation_is_unknown_and_the_namespace_is_removed(falcon_healthy: Path, serve) -> None:  # type: ignore[no-untyped-def]
    server = serve(falcon_healthy, faults=Faults(forbid=("create pods",)))
    results = run(falcon_healthy, server, pvc=False)
    smoke = results["gpu.workload-smoke"]
    assert smoke.verdict == Verdict.UNKNOWN and "403 Forbidden" in smoke.summary
    assert server.overlay.our_objects() == []


def test_ctrl_c_mid_run_deletes_what_was_created(falcon_healthy: Path, serve) -> None:  # type: ignore[no-untyped-def]
    server = serve(falcon_healthy, WorkloadScript(hang=frozenset({"gpu-wk-01", "gpu-wk-02"})))
    seen: list[str] = []

    def interrupt_after_first_pod(name: str) -> None:
        seen.append(name)
        if name.startswith("gpu-smoke-"):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run(falcon_healthy, server, on_created=interrupt_after_first_pod)
    assert seen[0].startswith("gpunode-validate-") and seen[1].startswith("gpu-smoke-")
    assert server.overlay.our_objects() == []
    deleted = {(a.resource, a.name) for a in server.running.audit() if a.verb == "delete"}
    assert ("pods", seen[1]) in deleted and ("namespaces", seen[0]) in deleted


RUNNER = """
import sys
from pathlib import Path
from gpunode.bundle.load import load_bundle
from gpunode.validate.active.session import ActiveOptions, run_active
facts = load_bundle(Path(sys.argv[1]))
try:
    options = ActiveOptions(kubeconfig=Path(sys.argv[2]), poll_s=0.02, timeout_s=60, run_id=sys.argv[3])
    run_active(facts, options)
except KeyboardInterrupt:
    print("interrupted, cleaned up", flush=True)
    sys.exit(130)
"""


def _start_runner(bundle: Path, server: WorkloadServer, run_id: str) -> subprocess.Popen[str]:
    argv = [sys.executable, "-c", RUNNER, str(bundle), str(server.running.kubeconfig_path), run_id]
    return subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ)
    )


def _wait_for_pods(server: WorkloadServer, proc: subprocess.Popen[str], count: int) -> None:
    deadline = time.monotonic() + 60
    while sum(1 for kind, _, _ in server.overlay.our_objects() if kind == "pods") < count:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "runner never created its pods"
        time.sleep(0.05)


def test_killed_run_leaves_objects_the_next_run_removes(falcon_healthy: Path, serve) -> None:  # type: ignore[no-untyped-def]
    server = serve(falcon_healthy, WorkloadScript(hang=frozenset({"gpu-wk-01", "gpu-wk-02"})))
    proc = _start_runner(falcon_healthy, server, "killed1")
    _wait_for_pods(server, proc, 3)
    proc.kill()  # SIGKILL: no chance to clean up
    proc.wait(timeout=30)
    left = server.overlay.our_objects()
    assert ("namespaces", "", "gpunode-validate-killed1") in left and len(left) >= 4

    server.overlay.script = WorkloadScript()  # the next run's pods behave
    results = run(falcon_healthy, server)
    cleanup = results["infra.active-cleanup"]
    assert cleanup.verdict == Verdict.PASS
    assert "removed leftovers of an interrupted run: gpunode-validate-killed1" in cleanup.summary
    assert results["gpu.workload-smoke"].verdict == Verdict.PASS
    assert server.overlay.our_objects() == []


def test_sigterm_runs_the_cleanup(falcon_healthy: Path, serve) -> None:  # type: ignore[no-untyped-def]
    server = serve(falcon_healthy, WorkloadScript(hang=frozenset({"gpu-wk-01", "gpu-wk-02"})))
    proc = _start_runner(falcon_healthy, server, "term1")
    _wait_for_pods(server, proc, 3)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted, cleaned up" in out
    assert server.overlay.our_objects() == []
