"""Agent facts folded into live collection, end to end through the test API server.

The simulated Falcon AI cluster gets a gpunode agent pod on each GPU node (the pod
the DaemonSet in ``deploy/agent`` creates) and a probe result recorded on a real
H200, adapted to the node it is filed under: its GPUs from the node's nvidia-smi
XML, host facts from the probe's own collector over the node's files. The test
server answers the agents' ``/facts`` through the pod proxy from that file.
Also here: the test server drains refused request bodies (keep-alive safety).
"""

from __future__ import annotations

import copy
import datetime as dt
import http.client
import json
import shutil
import ssl
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml
from livehelpers import http as api_client
from livehelpers import read_list

import gpunode.sim
from gpunode.apiserver import Faults, RunningServer, serve_bundle
from gpunode.apiserver.handler import MAX_DRAIN_BYTES
from gpunode.cli import build_report
from gpunode.collect import CollectResult, collect_bundle
from gpunode.collect.agents import agent_pods_on_page, is_agent, supplied
from gpunode.collect.plan import ExecTarget
from gpunode.collect.slim import RawPage
from gpunode.fleet.history import HISTORY_FORMAT, History, HistoryEntry, encode_history
from gpunode.model import NodeReport, Status
from gpunode.parse.modules import parse_modules
from gpunode.parse.nvidia_smi import GpuInfo, NvidiaSmiReport, parse_nvidia_smi_xml
from gpunode.probe import load_probe_json
from gpunode.probe.host import collect_host
from gpunode.probe.hostfs import HostFS

REPO = Path(__file__).resolve().parents[2]
RECORDED_PROBE = REPO / "tests" / "fixtures" / "node" / "h200-device" / "probe.json"
AGENT_DAEMONSET = REPO / "deploy" / "agent" / "daemonset.yaml"
GPU_NODES = ("gpu-wk-01", "gpu-wk-02")
AGENT_PODS = {"gpu-wk-01": "gpunode-agent-7xk2p", "gpu-wk-02": "gpunode-agent-q4mzt"}
AGENT_UIDS = {"gpunode-agent-7xk2p": "5f1c3e2a-9b7d-4c61-8e0f-3a6d2c9b1e47",
              "gpunode-agent-q4mzt": "c2d8a6f1-4e3b-4a97-b5c0-8f1e7d2a9c63"}
PROBE = "cmd/gpunode-probe.json"
HISTORY = "cmd/gpunode-history.json"
NO_FAULTS = Faults()
Facts = dict[str, Any]


# --- the cluster: Falcon AI with agents -------------------------------------------


@pytest.fixture(scope="module")
def falcon(tmp_path_factory: pytest.TempPathFactory) -> Path:
    scenario = gpunode.sim.load_scenario("falcon-ai")
    return gpunode.sim.build_bundle(scenario, tmp_path_factory.mktemp("falcon") / "bundle")


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def _rfc3339(when: dt.datetime) -> str:
    return when.isoformat().replace("+00:00", "Z")


def _nodes(bundle: Path) -> dict[str, Facts]:
    return {n["metadata"]["name"]: n for n in read_list(bundle / "cluster" / "nodes.json")}


def agent_pod(node: Facts, name: str, *, ready: bool = True) -> Facts:
    """The pod the agent DaemonSet's controller creates on ``node``, as the API returns it."""
    daemonset = yaml.safe_load(AGENT_DAEMONSET.read_text())
    template = copy.deepcopy(daemonset["spec"]["template"])
    node_name = node["metadata"]["name"]
    started = _rfc3339(_now() - dt.timedelta(hours=6))
    spec = template["spec"]
    spec["containers"][0].update(image="registry.example.com/platform/gpunode:0.1.0",
                                 imagePullPolicy="IfNotPresent",
                                 terminationMessagePath="/dev/termination-log",
                                 terminationMessagePolicy="File")
    spec.update(nodeName=node_name, schedulerName="default-scheduler", restartPolicy="Always",
                dnsPolicy="ClusterFirst", priority=0, enableServiceLinks=True,
                preemptionPolicy="PreemptLowerPriority", securityContext={},
                affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchFields": [{
                        "key": "metadata.name", "operator": "In", "values": [node_name]}]}]}}})
    spec["tolerations"] += _daemonset_tolerations()
    return {
        "metadata": {
            "name": name, "generateName": "gpunode-agent-", "namespace": "gpunode",
            "uid": AGENT_UIDS[name],
            "resourceVersion": "48213", "creationTimestamp": started,
            "labels": {**template["metadata"]["labels"],
                       "controller-revision-hash": "6d4b9c7f58", "pod-template-generation": "1"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet",
                                 "name": "gpunode-agent", "uid": "0b6e8f3d-2a41-4f7c-9d15-7c3e9a1b2f60",
                                 "controller": True, "blockOwnerDeletion": True}],
        },
        "spec": spec,
        "status": _running_status(node, started, ready),
    }


def _daemonset_tolerations() -> list[Facts]:
    """Tolerations the DaemonSet controller adds to every pod it creates."""
    no_execute = [{"key": f"node.kubernetes.io/{k}", "operator": "Exists", "effect": "NoExecute"}
                  for k in ("not-ready", "unreachable")]
    no_schedule = [{"key": f"node.kubernetes.io/{k}", "operator": "Exists",
                    "effect": "NoSchedule"}
                   for k in ("disk-pressure", "memory-pressure", "pid-pressure", "unschedulable")]
    return no_execute + no_schedule


def _running_status(node: Facts, started: str, ready: bool) -> Facts:
    address = next(a["address"] for a in node["status"]["addresses"] if a["type"] == "InternalIP")
    readiness = "True" if ready else "False"
    conditions = [{"type": t, "status": s, "lastProbeTime": None, "lastTransitionTime": started}
                  for t, s in (("PodReadyToStartContainers", "True"), ("Initialized", "True"),
                               ("Ready", readiness), ("ContainersReady", readiness),
                               ("PodScheduled", "True"))]
    return {
        "phase": "Running", "conditions": conditions, "hostIP": address,
        "hostIPs": [{"ip": address}], "podIP": "10.244.3.17", "podIPs": [{"ip": "10.244.3.17"}],
        "startTime": started, "qosClass": "Burstable",
        "containerStatuses": [{
            "name": "agent", "ready": ready, "restartCount": 0, "started": True,
            "state": {"running": {"startedAt": started}}, "lastState": {},
            "image": "registry.example.com/platform/gpunode:0.1.0",
            "imageID": "registry.example.com/platform/gpunode@sha256:"
                       "3f6d0c2b9a8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a392817065f4e",
            "containerID": "containerd://9c1e4b7a2d5f8e0b3c6a9d2f5e8b1c4a7d0e3f6b9c2a5d8e1f4b7c0a3d6e9f2b",
        }],
    }


def probe_facts(bundle: Path, node: Facts) -> Facts:
    """The recorded H200 probe as an agent on this simulated node would report it."""
    name = node["metadata"]["name"]
    node_dir = bundle / "nodes" / name
    facts: Facts = json.loads(RECORDED_PROBE.read_text())
    smi = parse_nvidia_smi_xml((node_dir / "cmd" / "nvidia-smi-q.xml").read_text())
    facts.update(node_name=name, host_root="/host", collected_at=_rfc3339(_now()))
    _adapt_nvml(facts["nvml"], smi)
    facts["host"] = _host(facts["host"], node_dir, node, smi)
    return facts


def _adapt_nvml(nvml: Facts, smi: NvidiaSmiReport) -> None:
    """The node's GPUs (bus ids, UUIDs, names, fabric state) with the recorded GPU's readings."""
    recorded = nvml["gpus"][0]
    cuda_major = (smi.cuda_version or "12").split(".")[0]
    nvml.update(driver_version=smi.driver_version, cuda_driver_version=smi.cuda_version,
                nvml_version=f"{cuda_major}.{smi.driver_version}", device_count=len(smi.gpus),
                gpus=[_gpu(recorded, gpu, index) for index, gpu in enumerate(smi.gpus)])


def _gpu(recorded: Facts, gpu: GpuInfo, index: int) -> Facts:
    clone = copy.deepcopy(recorded)
    clone.update(index=index, minor_number=gpu.minor_number, name=gpu.product_name,
                 uuid=gpu.uuid, serial=gpu.serial, pci_bus_id=gpu.pci_bus_id,
                 vbios_version=gpu.vbios_version, memory_total_mib=gpu.memory_total_mib,
                 fabric_state=gpu.fabric_state, fabric_status=gpu.fabric_status,
                 nvlinks=[{"link": link, "active": True} for link in range(18)])
    clone["calls"].update({"nvmlDeviceGetGpuFabricInfo": "ok", "nvmlDeviceGetNvLinkState": "ok"})
    return clone


def _host(recorded: Facts, node_dir: Path, node: Facts, smi: NvidiaSmiReport) -> Facts:
    """Host facts: the probe's collector over the node's files, the rest from the node."""
    collected, _ = collect_host(HostFS(str(node_dir / "files")), kernel_log=False)
    host: Facts = msgspec.to_builtins(collected)
    info = node["status"]["nodeInfo"]
    boot = _now().timestamp() - 3 * 86400
    modules = parse_modules((node_dir / "cmd" / "lsmod.txt").read_text())
    switches = [f"nvidia-nvswitch{i}" for i in range(4)] if smi.gpus[0].fabric_state else []
    host.update(
        kernel_release=info["kernelVersion"], boot_time=boot, driver_loaded_at=boot + 41.5,
        os_release={"PRETTY_NAME": info["osImage"], "ID": "ubuntu", "VERSION_ID": "22.04"},
        modules={n: msgspec.to_builtins(m) for n, m in modules.items()},
        device_nodes=sorted([*(f"nvidia{i}" for i in range(len(smi.gpus))), "nvidia-caps",
                             "nvidia-uvm", "nvidia-uvm-tools", "nvidiactl", *switches]),
        kernel_log={**recorded["kernel_log"], "source": "dmesg",
                    "driver_loaded": smi.driver_version, "driver_loaded_uptime_s": 41.5},
        processes={**recorded["processes"], "kubelet": True, "containerd": True,
                   "nvidia-persistenced": True, "nv-fabricmanager": bool(switches),
                   "dcgm-exporter": True})
    for marker in host["validations"]:
        marker["older_than_driver_load"] = False
    return host


def lose_gpu(facts: Facts, index: int) -> None:
    """NVML's view of a GPU that fell off the bus: the first call after the handle is lost."""
    gpu = facts["nvml"]["gpus"][index]
    calls = dict.fromkeys(gpu["calls"], "skipped_gpu_lost")
    calls.update({"nvmlDeviceGetHandleByIndex": "ok", "nvmlDeviceGetPciInfo": "ok",
                  "nvmlDeviceGetArchitecture": "gpu_is_lost"})
    keep = {"index", "pci_bus_id", "seconds"}
    gpu.update({k: None for k in gpu if k not in keep and k not in ("calls", "nvlinks")})
    gpu.update(calls=calls, lost=True, nvlinks=[])


def with_agents(source: Path, dest: Path, facts: dict[str, Facts | bytes],
                *, ready: bool = True) -> Path:
    """A copy of ``source`` with an agent pod on each GPU node and its probe file."""
    shutil.copytree(source, dest)
    nodes = _nodes(dest)
    pods_file = dest / "cluster" / "pods.json"
    doc = json.loads(pods_file.read_text())
    doc["items"] += [agent_pod(nodes[n], AGENT_PODS[n], ready=ready) for n in GPU_NODES]
    pods_file.write_text(json.dumps(doc))
    for node, body in facts.items():
        data = body if isinstance(body, bytes) else json.dumps(body, indent=2).encode()
        (dest / "nodes" / node / PROBE).write_bytes(data)
    return dest


def healthy_facts(bundle: Path) -> dict[str, Facts | bytes]:
    nodes = _nodes(bundle)
    return {n: probe_facts(bundle, nodes[n]) for n in GPU_NODES}


def collect(bundle: Path, out: Path, faults: Faults = NO_FAULTS,
            nodes: tuple[str, ...] = ()) -> tuple[CollectResult, Counter[str]]:
    """Collect ``bundle`` through the test server (every GPU node's extras, the mechanics under
    test here); also the proxy and exec calls per pod."""
    with serve_bundle(bundle, faults=faults) as server:
        result = collect_bundle(out, kubeconfig=server.kubeconfig_path, nodes=nodes, quiet=True,
                                extras="deep" if nodes else "all-nodes")
        calls = Counter(f"{r.resource} {r.name.split(':')[0]}" for r in server.audit()
                        if r.resource in ("pods/proxy", "pods/exec"))
    return result, calls


def _node_report(bundle: Path, node: str) -> NodeReport:
    return next(n for n in build_report(bundle, None).nodes if n.name == node)


# --- the healthy cluster with agents ------------------------------------------------


@pytest.fixture(scope="module")
def agents_bundle(falcon: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    bundle = with_agents(falcon, tmp_path_factory.mktemp("agents") / "bundle", healthy_facts(falcon))
    # gpu-wk-01's agent keeps a history (served at /history); gpu-wk-02's keeps none (404)
    (bundle / "nodes" / "gpu-wk-01" / HISTORY).write_bytes(_history())
    return bundle


def _history() -> bytes:
    now = _now().timestamp()
    return encode_history(History(HISTORY_FORMAT, "gpu-wk-01", (
        HistoryEntry(now - 86400 * 2, now - 7200, "ok"),
        HistoryEntry(now - 3600, now - 60, "ok", xids={"79": 1}),
    )))


@pytest.fixture(scope="module")
def collected(agents_bundle: Path,
              tmp_path_factory: pytest.TempPathFactory) -> tuple[CollectResult, Counter[str]]:
    return collect(agents_bundle, tmp_path_factory.mktemp("collected") / "bundle")


def test_test_server_serves_agent_facts_through_the_pod_proxy(agents_bundle: Path) -> None:
    with serve_bundle(agents_bundle) as server, api_client(server) as api:
        base = f"/api/v1/namespaces/gpunode/pods/{AGENT_PODS['gpu-wk-01']}"
        plain = api.get(f"{base}:9808/proxy/facts")
        raw = api.get(f"{base}:metrics/proxy/facts", params={"raw": "1"}).json()
        other = api.get(f"{base}:9808/proxy/report")
        closed = api.get(f"{base}:9400/proxy/facts")
    stored = agents_bundle / "nodes" / "gpu-wk-01"
    assert plain.status_code == 200
    assert plain.content == (stored / PROBE).read_bytes()
    assert raw["raw"]["cmd/dmesg.txt"] == (stored / "cmd" / "dmesg.txt").read_text()
    assert raw["raw"]["files/etc/containerd/config.toml"] == \
        (stored / "files" / "etc" / "containerd" / "config.toml").read_text()
    assert "cmd/nvidia-smi-q.xml" not in raw["raw"]  # the probe says nvidia_smi: not_run
    assert {k: v for k, v in raw.items() if k != "raw"} == json.loads(plain.content)
    assert other.status_code == 404
    assert (closed.status_code, closed.json()["reason"]) == (503, "ServiceUnavailable")


def test_each_gpu_node_gets_its_agent_facts(collected: tuple[CollectResult, Counter[str]],
                                            agents_bundle: Path) -> None:
    result, calls = collected
    assert (result.partial, result.warnings) == (False, ())
    assert result.agent_nodes == GPU_NODES
    manifest = json.loads((result.path / "manifest.json").read_text())
    assert manifest["agent_facts"] == list(GPU_NODES)
    for node in GPU_NODES:
        assert calls[f"pods/proxy {AGENT_PODS[node]}"] == 2  # its facts, then its history
        folded = load_probe_json((result.path / "nodes" / node / PROBE).read_bytes())
        served = load_probe_json((agents_bundle / "nodes" / node / PROBE).read_bytes())
        assert folded == served


def test_execs_run_only_for_what_the_agent_does_not_supply(
        collected: tuple[CollectResult, Counter[str]], falcon: Path) -> None:
    result, calls = collected
    _, without = collect(falcon, result.path.parent / "without-agents")
    execs = {k: v for k, v in calls.items() if k.startswith("pods/exec")}
    baseline = {k: v for k, v in without.items() if k.startswith("pods/exec")}
    driver_pods = [k for k in baseline if "nvidia-driver-daemonset" in k]
    assert len(driver_pods) == 2
    # A node's commands in one pod are one batched exec. nvidia-smi -q -x, nvidia-smi and
    # lsmod stay; dmesg, the driver version file and the validator markers come from the
    # agent; so does the containerd config: the toolkit pods see no exec at all, nor do
    # the MOFED pods (ibstat, ibv_devinfo: the agent's probe facts hold the ports).
    toolkit_pods = [k for k in baseline if "container-toolkit" in k]
    mofed_pods = [k for k in baseline if "mofed-" in k]
    assert len(toolkit_pods) == 2 and len(mofed_pods) == 2
    assert baseline == dict.fromkeys(driver_pods + toolkit_pods + mofed_pods, 1)
    assert execs == dict.fromkeys(driver_pods, 1)
    for node in GPU_NODES:
        files = result.path / "nodes" / node
        assert (files / "cmd" / "nvidia-smi-q.xml").is_file()
        assert (files / "cmd" / "lsmod.txt").is_file()
        assert (files / "cmd" / "dmesg.txt").read_bytes() == \
            (falcon / "nodes" / node / "cmd" / "dmesg.txt").read_bytes()
        assert (files / "files" / "run" / "nvidia" / "validations" / "driver-ready").is_file()
        assert (files / "files" / "etc" / "containerd" / "conf.d" / "99-nvidia.toml").is_file()


def test_agent_facts_of_healthy_nodes_agree_with_the_rest(
        collected: tuple[CollectResult, Counter[str]], falcon: Path) -> None:
    result, _ = collected
    with_facts = build_report(result.path, None)
    assert not with_facts.has_failures
    for node in GPU_NODES:
        report = next(n for n in with_facts.nodes if n.name == node)
        assert (report.status, report.root_causes) == (Status.OK, ())
        hardware = next(c for c in report.components if c.component == "gpu-hardware")
        assert hardware.status == Status.OK
    assert [n.name for n in with_facts.nodes] == [n.name for n in build_report(falcon, None).nodes]


def test_a_lost_gpu_in_the_agent_facts_fails_gpu_hardware(falcon: Path, tmp_path: Path) -> None:
    facts = healthy_facts(falcon)
    lost = facts["gpu-wk-02"]
    assert isinstance(lost, dict)
    lose_gpu(lost, 5)
    bundle = with_agents(falcon, tmp_path / "source", facts)
    result, _ = collect(bundle, tmp_path / "collected")
    assert result.agent_nodes == GPU_NODES
    broken = _node_report(result.path, "gpu-wk-02")
    assert broken.status == Status.FAILED
    cause = next(rc for rc in broken.root_causes if rc.component == "gpu-hardware")
    assert cause.cause == "gpu_fallen_off_bus"
    assert any(e.source.endswith("gpu-wk-02/cmd/gpunode-probe.json") and "gpu_is_lost" in e.excerpt
               for e in cause.evidence)
    assert _node_report(result.path, "gpu-wk-01").status == Status.OK


def test_without_pods_proxy_permission_execs_read_the_nodes(falcon: Path,
                                                            agents_bundle: Path,
                                                            tmp_path: Path) -> None:
    result, calls = collect(agents_bundle, tmp_path / "b", Faults(forbid=("get pods/proxy",)))
    assert result.partial
    assert [w for w in result.warnings if "gpunode" in w] == [
        "cannot reach gpunode agents (pods/proxy get) in gpunode: node facts were not taken "
        "from the gpunode agents; execs were used where allowed"]
    assert result.agent_nodes == ()
    assert sum(n for k, n in calls.items() if "nvidia-driver-daemonset" in k) == 2  # batched
    for node in GPU_NODES:
        assert not (result.path / "nodes" / node / PROBE).exists()
        assert (result.path / "nodes" / node / "cmd" / "dmesg.txt").read_bytes() == \
            (falcon / "nodes" / node / "cmd" / "dmesg.txt").read_bytes()


def test_without_exec_permission_agent_nodes_miss_only_nvidia_smi(agents_bundle: Path,
                                                                  tmp_path: Path) -> None:
    result, _ = collect(agents_bundle, tmp_path / "b", Faults(forbid=("create pods/exec",)))
    assert result.agent_nodes == GPU_NODES
    assert [w for w in result.warnings if "pods/exec" in w] == [
        "cannot exec into pods (pods/exec create) in gpu-operator: nvidia-smi was not read on "
        "nodes whose gpunode agent supplied the other node facts"]
    for node in GPU_NODES:
        files = result.path / "nodes" / node
        assert (files / PROBE).is_file() and (files / "cmd" / "dmesg.txt").is_file()
        assert not (files / "cmd" / "nvidia-smi-q.xml").exists()
    assert _node_report(result.path, "gpu-wk-01").status == Status.OK


def _allowed(rules: list[Facts], verb: str, resource: str) -> bool:
    return any(resource in rule["resources"] and verb in rule["verbs"] for rule in rules)


def test_agent_facts_stay_within_the_published_rbac(agents_bundle: Path, tmp_path: Path) -> None:
    roles = list(yaml.safe_load_all((REPO / "deploy" / "rbac-readonly.yaml").read_text()))
    access = next(r for r in roles if r["metadata"]["name"] == "gpunode-node-access")["rules"]
    rules = [rule for role in roles for rule in role["rules"]]
    with serve_bundle(agents_bundle) as server:
        collect_bundle(tmp_path / "b", kubeconfig=server.kubeconfig_path, quiet=True)
        audit = server.audit()
    agents = [r for r in audit if r.namespace == "gpunode"]
    assert {(r.verb, r.resource) for r in agents} == {("get", "pods/proxy")}
    assert all(_allowed(access, r.verb, r.resource) for r in agents)
    assert all(_allowed(rules, r.verb, r.resource) for r in audit)


def test_stale_or_broken_agent_facts_are_warned_about_and_execs_used(
        falcon: Path, tmp_path: Path) -> None:
    facts = healthy_facts(falcon)
    stale = facts["gpu-wk-01"]
    assert isinstance(stale, dict)
    stale["collected_at"] = _rfc3339(_now() - dt.timedelta(hours=2))
    facts["gpu-wk-02"] = b"<html>upstream connect error</html>"
    bundle = with_agents(falcon, tmp_path / "source", facts)
    result, calls = collect(bundle, tmp_path / "collected")
    assert result.partial
    assert result.agent_nodes == ()
    assert sorted(result.warnings) == [
        f"node gpu-wk-01: agent facts not used: facts collected at {stale['collected_at']} "
        "are too old",
        "node gpu-wk-02: agent facts not used: not a gpunode probe result"]
    assert sum(n for k, n in calls.items() if "nvidia-driver-daemonset" in k) == 2  # batched
    assert not list(result.path.glob(f"nodes/*/{PROBE}"))


def test_agents_not_ready_or_not_chosen_are_not_asked(agents_bundle: Path, falcon: Path,
                                                      tmp_path: Path) -> None:
    only, calls = collect(agents_bundle, tmp_path / "only", nodes=("gpu-wk-02",))
    assert only.agent_nodes == ("gpu-wk-02",)
    assert [k for k in calls if k.startswith("pods/proxy gpunode-agent")] == \
        [f"pods/proxy {AGENT_PODS['gpu-wk-02']}"]
    unready = with_agents(falcon, tmp_path / "unready", healthy_facts(falcon), ready=False)
    result, calls = collect(unready, tmp_path / "collected")
    assert result.agent_nodes == ()
    assert not [k for k in calls if "gpunode-agent" in k]


def test_without_a_cluster_wide_pod_list_the_agent_namespace_is_listed(
        agents_bundle: Path, tmp_path: Path) -> None:
    faults = Faults(forbid=("list pods -",))  # cluster-wide only; namespaced lists allowed
    with serve_bundle(agents_bundle, faults=faults) as server:
        result = collect_bundle(tmp_path / "b", kubeconfig=server.kubeconfig_path, quiet=True)
        lists = [(r.namespace, r.verb) for r in server.audit() if r.resource == "pods"]
        by_path = server.path_counts()
    assert result.warnings[0].startswith("pods were listed only in ")
    assert "(listing them cluster-wide refused (403))" in result.warnings[0]
    assert lists[0] == ("", "list") and ("gpunode", "list") in lists
    assert {verb for _, verb in lists} == {"list"}
    assert by_path["GET /api/v1/namespaces/gpunode/pods"] == 1  # listed once, agents taken from it
    assert result.agent_nodes == GPU_NODES
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    scoped = manifest["scoped"][0]
    assert scoped["path"] == "cluster/pods.json" and {"gpu-operator", "gpunode"} <= set(scoped["namespaces"])
    namespaces = {p["metadata"]["namespace"] for p in read_list(tmp_path / "b" / "cluster" / "pods.json")}
    assert "gpu-operator" in namespaces and namespaces <= set(scoped["namespaces"])


# --- which execs an agent's facts make unnecessary (pure) ------------------------------


def _target(argv: tuple[str, ...], rel: str, *, tar: bool = False) -> ExecTarget:
    return ExecTarget("gpu-wk-01", "gpu-operator", "nvidia-driver-daemonset-ncdvs",
                      "nvidia-driver-ctr", argv, f"nodes/gpu-wk-01/{rel}", unpack_tar=tar)


def test_an_exec_is_supplied_only_by_its_own_file_or_its_equivalent() -> None:
    covered = frozenset({"cmd/dmesg.txt", "files/proc/modules",
                         "files/run/nvidia/validations/driver-ready"})
    assert supplied(_target(("dmesg",), "cmd/dmesg.txt"), covered)
    assert supplied(_target(("lsmod",), "cmd/lsmod.txt"), covered)  # /proc/modules
    assert supplied(_target(("tar", "-C", "/run/nvidia/validations", "-cf", "-", "."),
                            "files/run/nvidia/validations", tar=True), covered)
    assert not supplied(_target(("nvidia-smi", "-q", "-x"), "cmd/nvidia-smi-q.xml"), covered)
    assert not supplied(_target(("tar", "-C", "/run/nvidia/valid", "-cf", "-", "."),
                                "files/run/nvidia/valid", tar=True), covered)
    assert not supplied(_target(("lsmod",), "cmd/lsmod.txt"), frozenset())


def test_agent_pods_are_picked_from_a_pod_page_by_namespace_and_label(
        agents_bundle: Path) -> None:
    body = (agents_bundle / "cluster" / "pods.json").read_bytes()
    page = msgspec.json.decode(body, type=RawPage)
    found = agent_pods_on_page(body, page)
    assert sorted(p.metadata.name for p in found) == sorted(AGENT_PODS.values())
    assert all(is_agent(p) for p in found)
    elsewhere = json.loads(body)
    for pod in elsewhere["items"]:
        if pod["metadata"]["namespace"] == "gpunode":
            pod["metadata"]["namespace"] = "monitoring"
    moved = msgspec.json.encode(elsewhere)
    assert agent_pods_on_page(moved, msgspec.json.decode(moved, type=RawPage)) == []
    without = msgspec.json.encode({"items": [p for p in elsewhere["items"]
                                             if "gpunode-agent" not in json.dumps(p)]})
    assert agent_pods_on_page(without, msgspec.json.decode(without, type=RawPage)) == []


# --- the test server keeps kept-alive connections in step --------------------------


PATCH_BODY = b'{"status":{"conditions":[{"type":"GPUStackHealthy","status":"True"}]}}'


def _connection(server: RunningServer) -> http.client.HTTPSConnection:
    context = ssl.create_default_context(cafile=str(server.ca_cert_path))
    host, port = server.url.removeprefix("https://").rsplit(":", 1)
    return http.client.HTTPSConnection(host, int(port), context=context, timeout=30)


def _headers(server: RunningServer) -> dict[str, str]:
    return {"Authorization": f"Bearer {server.token}",
            "Content-Type": "application/strategic-merge-patch+json"}


def test_refused_write_leaves_the_kept_alive_connection_usable(mini_server: RunningServer) -> None:
    conn = _connection(mini_server)
    try:
        conn.request("PATCH", "/api/v1/nodes/gpu-wk-01/status", body=PATCH_BODY,
                     headers=_headers(mini_server))
        refused = conn.getresponse()
        assert (refused.status, refused.getheader("Connection")) == (405, None)
        refused.read()
        conn.request("GET", "/version", headers=_headers(mini_server))
        answer = conn.getresponse()
        assert answer.status == 200
        assert b'"gitVersion"' in answer.read()
    finally:
        conn.close()


def test_refused_chunked_write_is_drained_too(mini_server: RunningServer) -> None:
    def chunks() -> Iterator[bytes]:
        yield PATCH_BODY[:20]
        yield PATCH_BODY[20:]

    conn = _connection(mini_server)
    try:
        conn.request("PATCH", "/api/v1/nodes/gpu-wk-01/status", body=chunks(),
                     headers=_headers(mini_server), encode_chunked=True)
        refused = conn.getresponse()
        assert (refused.status, refused.getheader("Connection")) == (405, None)
        refused.read()
        conn.request("GET", "/version", headers=_headers(mini_server))
        assert conn.getresponse().status == 200
    finally:
        conn.close()


def test_refused_oversized_write_closes_the_connection(mini_server: RunningServer) -> None:
    conn = _connection(mini_server)
    try:
        conn.putrequest("POST", "/api/v1/namespaces/gpunode/events")
        for name, value in _headers(mini_server).items():
            conn.putheader(name, value)
        conn.putheader("Content-Length", str(MAX_DRAIN_BYTES + 1))
        conn.endheaders()  # the body never comes: the server must not wait for it
        refused = conn.getresponse()
        assert (refused.status, refused.getheader("Connection")) == (405, "close")
    finally:
        conn.close()


def test_each_agents_history_is_kept_beside_its_facts_for_since(
        collected: tuple[CollectResult, Counter[str]], agents_bundle: Path) -> None:
    from gpunode.commands.history import changes_since

    result, _ = collected
    kept = result.path / "nodes" / "gpu-wk-01" / HISTORY
    assert kept.read_bytes() == (agents_bundle / "nodes" / "gpu-wk-01" / HISTORY).read_bytes()
    assert not (result.path / "nodes" / "gpu-wk-02" / HISTORY).exists()  # its agent keeps none
    assert not any("history" in note for note in result.notes)
    section = changes_since(result.path, GPU_NODES, _now().timestamp() - 86400)
    wk01, wk02 = section.nodes
    assert (wk01.status, wk01.changes[0][:12]) == ("changed", "Xid 79 once ")
    assert (wk02.status, wk02.note) == ("no_history", "no agent history in this bundle")
