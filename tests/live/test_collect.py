"""collect_bundle against the test API server, with the real client library."""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml
from livehelpers import key, read_list, widen

from gpunode.apiserver import Faults, RunningServer, serve_bundle
from gpunode.bundle.load import RESOURCES, load_bundle
from gpunode.bundle.projection import project_item
from gpunode.cli import build_report
from gpunode.collect import collect_bundle
from gpunode.collect.kube import KubeApi, load_config
from gpunode.errors import SourceUnreachable, UsageError

REPO = Path(__file__).parents[2]


def objects(path: Path) -> dict[str, dict[str, Any]]:
    return {key(o): o for o in read_list(path)}


def read(path: Path) -> dict[str, Any]:
    """A list's items as the loader reads them (its slim Structs) after the projection
    ``collect`` applies (bundle/projection.py): the same for a source and its collection."""
    decoder = msgspec.json.Decoder(RESOURCES[path.stem])
    return {key(o): decoder.decode(project_item(path.stem, json.dumps(o).encode()))
            for o in read_list(path)}


def extras(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for sub in ("logs", "nodes")
            for p in sorted((root / sub).rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def collected(mini_server: RunningServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("collect") / "bundle"
    result = collect_bundle(out, kubeconfig=mini_server.kubeconfig_path, quiet=True,
                            extras="all-nodes")  # every node's extras, as the source has them
    assert (result.partial, result.warnings) == (False, ())
    return out


def test_collected_lists_hold_the_same_objects(collected: Path, mini_bundle: Path) -> None:
    for source in sorted((mini_bundle / "cluster").glob("*.json")):
        if source.stem == "version":
            assert json.loads((collected / "cluster" / "version.json").read_text()) == \
                json.loads(source.read_text())
            continue
        assert read(collected / "cluster" / source.name) == read(source), source.name
    for extra in (collected / "cluster").glob("*.json"):
        if not (mini_bundle / "cluster" / extra.name).exists() and extra.stem != "version":
            assert read_list(extra) == [], extra.name


def test_collected_extras_are_the_node_observations(collected: Path, mini_bundle: Path) -> None:
    assert extras(collected) == extras(mini_bundle)


def test_manifest_describes_a_complete_live_collection(collected: Path,
                                                       mini_server: RunningServer) -> None:
    manifest = json.loads((collected / "manifest.json").read_text())
    assert manifest["format"] == "gpunode-bundle/v1"
    assert (manifest["source"], manifest["api_server"]) == ("live", mini_server.url)
    assert (manifest["partial"], manifest["warnings"]) == (False, [])
    assert manifest["cluster_name"] == "falcon-ai"  # the kubeconfig's cluster name


def test_collected_bundle_diagnoses_like_its_source(collected: Path, mini_bundle: Path) -> None:
    live, offline = build_report(collected, None), build_report(mini_bundle, None)
    assert live.nodes == offline.nodes
    assert live.cluster == offline.cluster
    assert live.groups == offline.groups
    assert live.has_failures  # the fixture has a crash-looping device plugin


def test_tarball_output_loads(mini_server: RunningServer, tmp_path: Path) -> None:
    out = tmp_path / "falcon.tar.gz"
    result = collect_bundle(out, kubeconfig=mini_server.kubeconfig_path, quiet=True)
    assert result.path == out
    with tarfile.open(out) as tar:
        assert "falcon/cluster/pods.json" in tar.getnames()
    assert sorted(load_bundle(out).nodes) == ["gpu-wk-01", "gpu-wk-02", "mgmt-01"]
    assert [p.name for p in tmp_path.iterdir()] == ["falcon.tar.gz"]  # no staging left


def test_what_is_not_read_is_not_collected(collected: Path) -> None:
    """Env, args and commands are not read: not collected, secret or not (issue 22)."""
    text = (collected / "cluster" / "pods.json").read_text()
    assert "nvapi-" not in text
    pod = objects(collected / "cluster" / "pods.json")[
        "gpu-operator/nvidia-device-plugin-daemonset-h5t6v"]
    assert set(pod["spec"]["containers"][0]) <= {"name", "image", "resources"}
    manifest = json.loads((collected / "manifest.json").read_text())
    assert manifest["projected"].startswith("fields read by gpunode only")


def test_without_exec_and_proxy_permission_the_bundle_is_partial(mini_bundle: Path,
                                                                 tmp_path: Path) -> None:
    faults = Faults(forbid=("create pods/exec", "get pods/proxy"))
    with serve_bundle(mini_bundle, faults=faults) as server:
        result = collect_bundle(tmp_path / "b", kubeconfig=server.kubeconfig_path, quiet=True)
    assert result.partial
    assert any(w.startswith("cannot exec into pods (pods/exec create) in gpu-operator: ")
               and "diagnosis of layer 1 will use pod status only" in w for w in result.warnings)
    assert any("pods/proxy" in w and "monitoring" in w for w in result.warnings)
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert manifest["partial"] is True
    assert manifest["warnings"] == list(result.warnings)
    assert not (tmp_path / "b" / "nodes").exists()
    assert read(tmp_path / "b" / "cluster" / "pods.json") == read(mini_bundle / "cluster" / "pods.json")
    assert build_report(tmp_path / "b", None).source.partial


def test_forbidden_list_is_a_warning_not_a_failure(mini_bundle: Path, tmp_path: Path) -> None:
    with serve_bundle(mini_bundle, faults=Faults(forbid=("list events",))) as server:
        result = collect_bundle(tmp_path / "b", kubeconfig=server.kubeconfig_path, quiet=True,
                                extras="all-nodes")
    assert result.partial
    assert any(w.startswith("cannot list events cluster-wide") for w in result.warnings)
    assert not (tmp_path / "b" / "cluster" / "events.json").exists()  # never an empty list
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert manifest["missing"] == [{"path": "cluster/events.json",
                                    "reason": manifest["missing"][0]["reason"]}]
    assert "forbidden to list events cluster-wide (403" in manifest["missing"][0]["reason"]
    assert (tmp_path / "b" / "nodes" / "gpu-wk-01" / "cmd" / "nvidia-smi-q.xml").is_file()


def _causes(bundle: Path) -> set[tuple[str, str, str]]:
    report = build_report(bundle, None)
    return {(n.name, rc.component, rc.cause) for n in report.nodes for rc in n.root_causes}


def test_pods_forbidden_everywhere_make_pod_checks_unknown(mini_bundle: Path,
                                                           tmp_path: Path) -> None:
    with serve_bundle(mini_bundle, faults=Faults(forbid=("list pods",))) as server:
        result = collect_bundle(tmp_path / "b", kubeconfig=server.kubeconfig_path, quiet=True)
    assert result.warnings[0].startswith("cannot list pods cluster-wide")
    assert not (tmp_path / "b" / "cluster" / "pods.json").exists()
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert [m["path"] for m in manifest["missing"]] == [
        "cluster/pods.json", "nodes/gpu-wk-01/cmd/nvidia-smi-q.xml",
        "nodes/gpu-wk-02/cmd/nvidia-smi-q.xml"]  # no pod known to run nvidia-smi in
    assert manifest["missing"][1]["reason"] == "no pod to run it in: the pod list was not read"
    report = build_report(tmp_path / "b", None)
    causes = {rc.cause for n in report.nodes for rc in n.root_causes}
    assert not causes & {"pod_missing", "component_missing"}
    assert _causes(tmp_path / "b") <= _causes(mini_bundle)  # nothing false, only less seen
    assert "cluster/pods.json" in report.source.missing


def test_pods_listed_per_namespace_when_cluster_wide_is_forbidden(mini_bundle: Path,
                                                                  tmp_path: Path) -> None:
    with serve_bundle(mini_bundle, faults=Faults(forbid=("list pods -",))) as server:
        result = collect_bundle(tmp_path / "b", kubeconfig=server.kubeconfig_path, quiet=True)
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert manifest["missing"] == []
    assert "gpu-operator" in manifest["scoped"][0]["namespaces"]
    assert any(w.startswith("pods were listed only in ") for w in result.warnings)
    assert _causes(tmp_path / "b") <= _causes(mini_bundle)
    assert _causes(tmp_path / "b")  # the stack's own failures are still found


def test_pods_by_daemonset_selector_when_the_namespace_is_forbidden(mini_bundle: Path,
                                                                    tmp_path: Path) -> None:
    faults = Faults(forbid=("list pods -", "list pods gpu-operator"))
    with serve_bundle(mini_bundle, faults=faults) as server:
        collect_bundle(tmp_path / "b", kubeconfig=server.kubeconfig_path, quiet=True)
        asked = [r for r in server.audit() if r.resource == "pods" and r.namespace == "gpu-operator"]
    daemonsets = read_list(mini_bundle / "cluster" / "daemonsets.json")
    assert len(asked) == 1 + len(daemonsets)  # the namespace, then each DaemonSet's selector
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert "gpu-operator" not in manifest["scoped"][0]["namespaces"]
    causes = _causes(tmp_path / "b")
    assert causes <= _causes(mini_bundle)
    assert not {c for _, _, c in causes} & {"pod_missing", "component_missing"}


@pytest.mark.parametrize("faults", [
    Faults(too_many_every=4, retry_after_s=0),
    Faults(error_500_every=3),
    Faults(drop_every=5),
    Faults(latency_s=0.02, error_500_every=7),
], ids=["429", "500", "drop", "latency+500"])
def test_transient_faults_are_retried(faults: Faults, mini_bundle: Path, tmp_path: Path) -> None:
    with serve_bundle(mini_bundle, faults=faults) as server:
        result = collect_bundle(tmp_path / "b", kubeconfig=server.kubeconfig_path, quiet=True,
                                extras="all-nodes")
    assert (result.partial, result.warnings) == (False, ())
    assert result.retries > 0
    assert extras(tmp_path / "b") == extras(mini_bundle)
    assert read(tmp_path / "b" / "cluster" / "nodes.json") == read(mini_bundle / "cluster" / "nodes.json")


def test_unreachable_server_names_the_address(mini_server: RunningServer, tmp_path: Path) -> None:
    config = yaml.safe_load(mini_server.kubeconfig_path.read_text())
    config["clusters"][0]["cluster"]["server"] = "https://127.0.0.1:9"
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(config))
    with pytest.raises(SourceUnreachable) as err:
        collect_bundle(tmp_path / "out", kubeconfig=kubeconfig, quiet=True)
    assert "https://127.0.0.1:9" in str(err.value)
    assert err.value.exit_code == 3
    assert not (tmp_path / "out").exists()


def test_kubeconfig_conventions(mini_server: RunningServer, tmp_path: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(tmp_path / "absent"),
                                                      str(mini_server.kubeconfig_path)]))
    assert load_config().cluster.server == mini_server.url
    assert load_config(context="falcon-ai").context_name == "falcon-ai"
    with pytest.raises(UsageError, match="nope"):
        load_config(context="nope")
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "absent"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(UsageError, match="no kubeconfig"):
        load_config()


def test_only_named_nodes_get_extras(mini_server: RunningServer, tmp_path: Path) -> None:
    result = collect_bundle(tmp_path / "b", kubeconfig=mini_server.kubeconfig_path,
                            nodes=["gpu-wk-01"], quiet=True)
    assert {p.name for p in (tmp_path / "b" / "nodes").iterdir()} == {"gpu-wk-01"}
    # The failing pods are on gpu-wk-02; the operator acts for every node, so its log comes.
    logs = [str(p.relative_to(tmp_path / "b" / "logs")) for p in (tmp_path / "b" / "logs").rglob("*.log")]
    assert logs == ["gpu-operator/gpu-operator-7c9d6b8f4d-x2k9q/gpu-operator.log"]
    assert result.objects["pods"] == 11  # lists stay cluster-wide
    with pytest.raises(UsageError, match="gpu-wk-99"):
        collect_bundle(tmp_path / "c", kubeconfig=mini_server.kubeconfig_path,
                       nodes=["gpu-wk-99"], quiet=True)
    assert not (tmp_path / "c").exists()


def test_api_calls_grow_with_pages_not_with_pods(mini_bundle: Path, tmp_path: Path) -> None:
    def pod_calls(bundle: Path, out: Path) -> tuple[int, int, int]:
        with serve_bundle(bundle) as server:
            result = collect_bundle(out, kubeconfig=server.kubeconfig_path, quiet=True)
            counts = server.path_counts()
        extras = sum(n for p, n in counts.items() if "/pods/" in p)
        return counts["GET /api/v1/pods"], extras, result.objects["pods"]

    small = pod_calls(mini_bundle, tmp_path / "small")
    wide = pod_calls(widen(mini_bundle, tmp_path / "wide", pods=1200), tmp_path / "b")
    assert (small[0], wide[0]) == (1, 3)  # list pages: 11 pods, then 1200 pods at 500 a page
    assert wide[1] == small[1] > 0  # workload pods add no per-pod calls
    assert wide[2] == 1200


def test_expired_continue_token_restarts_the_list(mini_bundle: Path, tmp_path: Path) -> None:
    bundle = widen(mini_bundle, tmp_path / "wide", pods=700)
    with serve_bundle(bundle) as server:
        api = KubeApi(load_config(server.kubeconfig_path))
        pages = api.list_pages("/api/v1/pods", {}, limit=300)
        first_body, first = next(pages)
        server.expire_continue_tokens()
        rest = list(pages)
        api.close()
    assert rest[0][0] == b""  # the restart sentinel
    assert [len(p.items) for _, p in [(first_body, first), *rest[1:]]] == [300, 300, 300, 100]


def _allowed(rules: list[dict[str, Any]], verb: str, resource: str) -> bool:
    return any(resource in rule["resources"] and verb in rule["verbs"] for rule in rules)


def test_requests_stay_within_the_published_rbac(mini_server: RunningServer,
                                                 tmp_path: Path) -> None:
    roles = list(yaml.safe_load_all((REPO / "deploy" / "rbac-readonly.yaml").read_text()))
    rules = [rule for role in roles for rule in role["rules"]]
    readonly = next(r for r in roles if r["metadata"]["name"] == "gpunode-reader")["rules"]
    before = len(mini_server.audit())
    collect_bundle(tmp_path / "b", kubeconfig=mini_server.kubeconfig_path, quiet=True)
    requests = mini_server.audit()[before:]
    assert requests
    for record in requests:
        assert _allowed(rules, record.verb, record.resource), record
        assert record.resource != "secrets"
        if record.resource not in ("pods/exec", "pods/proxy"):
            assert _allowed(readonly, record.verb, record.resource), record


def test_api_calls_are_counted_by_kind_as_the_server_saw_them(mini_server: RunningServer,
                                                              tmp_path: Path) -> None:
    before = len(mini_server.audit())
    result = collect_bundle(tmp_path / "b", kubeconfig=mini_server.kubeconfig_path, quiet=True,
                            concurrency=3)
    seen = mini_server.audit()[before:]
    by_resource: dict[str, int] = {}
    for record in seen:
        kind = {"pods/exec": "exec", "pods/proxy": "proxy", "pods/log": "log"}.get(
            record.resource, record.verb)
        by_resource[kind] = by_resource.get(kind, 0) + 1
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert manifest["api_calls_by_kind"] == result.calls_by_kind
    assert {k: v for k, v in result.calls_by_kind.items() if k != "get"} == by_resource
    assert sum(result.calls_by_kind.values()) == result.api_calls
    # one batched exec per pod a node's commands run in: driver and toolkit pods
    assert by_resource["exec"] == len({r.name for r in seen if r.resource == "pods/exec"})


def test_selector_chooses_whose_node_extras_are_fetched(mini_server: RunningServer, mini_bundle: Path,
                                                       tmp_path: Path) -> None:
    """-l narrows the node extras (execs, logs, scrapes) like diagnose narrows its report;
    it goes to the API with the node list, so only matching nodes are listed; the other
    lists stay whole so the bundle can still be judged cluster-wide."""
    out = tmp_path / "b"
    result = collect_bundle(out, kubeconfig=mini_server.kubeconfig_path, quiet=True,
                            selector="kubernetes.io/hostname=gpu-wk-02", extras="deep")
    assert sorted(p.name for p in (out / "nodes").iterdir()) == ["gpu-wk-02"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["nodes"] == ["gpu-wk-02"]
    assert manifest["node_selector"] == "kubernetes.io/hostname=gpu-wk-02"
    assert {o["metadata"]["name"] for o in read_list(out / "cluster" / "nodes.json")} == {"gpu-wk-02"}
    assert len(read_list(out / "cluster" / "pods.json")) == len(read_list(
        mini_bundle / "cluster" / "pods.json"))
    assert result.path == out
    both = collect_bundle(tmp_path / "c", kubeconfig=mini_server.kubeconfig_path, quiet=True,
                          nodes=["gpu-wk-01"], selector="nvidia.com/gpu.count")
    assert sorted(p.name for p in (tmp_path / "c" / "nodes").iterdir()) == ["gpu-wk-01"]
    assert both.path == tmp_path / "c"
    with pytest.raises(UsageError, match="no node matches --selector"):
        collect_bundle(tmp_path / "d", kubeconfig=mini_server.kubeconfig_path, quiet=True,
                       selector="node-role.kubernetes.io/control-plane,nvidia.com/gpu.count")
