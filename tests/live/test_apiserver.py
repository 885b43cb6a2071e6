"""The test API server answers like a real one: paths, lists, errors, logs, exec, proxy."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from lightkube import ApiError, Client
from lightkube.config.kubeconfig import KubeConfig
from livehelpers import http, key, read_list, widen

from gpunode.apiserver import Faults, RunningServer, serve_bundle


@pytest.fixture(scope="module")
def api(mini_server: RunningServer) -> Iterator[httpx2.Client]:
    with http(mini_server) as client:
        yield client


@pytest.fixture(scope="module")
def wide_server(tmp_path_factory: pytest.TempPathFactory, mini_bundle: Path) -> Iterator[RunningServer]:
    bundle = widen(mini_bundle, tmp_path_factory.mktemp("wide") / "bundle", pods=1200)
    with serve_bundle(bundle) as server:
        yield server


def test_discovery_and_version_tolerate_trailing_slashes(api: httpx2.Client) -> None:
    assert api.get("/version/").json()["gitVersion"] == "v1.31.4"
    assert api.get("/api/").json()["versions"] == ["v1"]
    groups = {g["name"] for g in api.get("/apis").json()["groups"]}
    assert {"apps", "nvidia.com", "storage.k8s.io"} <= groups
    assert "mellanox.com" not in groups  # no NicClusterPolicy in this bundle
    core = {r["name"] for r in api.get("/api/v1/").json()["resources"]}
    assert {"pods", "pods/log", "pods/exec", "pods/proxy", "nodes"} <= core


def test_list_carries_kind_version_and_typed_items_drop_typemeta(api: httpx2.Client) -> None:
    pods = api.get("/api/v1/pods").json()
    assert (pods["kind"], pods["apiVersion"]) == ("PodList", "v1")
    assert pods["metadata"]["resourceVersion"].isdigit()
    assert "kind" not in pods["items"][0]
    policies = api.get("/apis/nvidia.com/v1/clusterpolicies").json()
    assert policies["kind"] == "ClusterPolicyList"
    assert policies["items"][0]["kind"] == "ClusterPolicy"  # custom resources keep it
    one = api.get("/api/v1/nodes/gpu-wk-01").json()
    assert (one["kind"], one["metadata"]["name"]) == ("Node", "gpu-wk-01")


def test_namespaced_and_selected_lists(api: httpx2.Client, mini_bundle: Path) -> None:
    everything = read_list(mini_bundle / "cluster" / "pods.json")
    in_monitoring = api.get("/api/v1/namespaces/monitoring/pods").json()["items"]
    assert {key(p) for p in in_monitoring} == {key(p) for p in everything
                                               if p["metadata"]["namespace"] == "monitoring"}
    selected = api.get("/api/v1/pods", params={
        "labelSelector": "app in (nvidia-device-plugin-daemonset,nvidia-dcgm-exporter)",
        "fieldSelector": "spec.nodeName=gpu-wk-02,status.phase!=Running"}).json()["items"]
    assert [p["metadata"]["name"] for p in selected] == ["nvidia-dcgm-exporter-m6r2w"]
    events = api.get("/api/v1/events", params={
        "fieldSelector": "involvedObject.kind=Pod,involvedObject.name="
                         "nvidia-device-plugin-daemonset-z8c3x"}).json()["items"]
    assert [e["reason"] for e in events] == ["BackOff"]


def test_bad_selectors_and_unknown_fields_are_400_status(api: httpx2.Client) -> None:
    answer = api.get("/api/v1/pods", params={"fieldSelector": "spec.hostname=x"})
    assert answer.status_code == 400
    body = answer.json()
    assert (body["kind"], body["reason"], body["code"]) == ("Status", "BadRequest", 400)
    assert "field label not supported" in body["message"]
    assert api.get("/api/v1/pods", params={"labelSelector": "app in x"}).status_code == 400


def test_pagination_walks_every_item_once(wide_server: RunningServer) -> None:
    with http(wide_server) as client:
        seen, token, pages = [], "", 0
        while True:
            params: dict[str, Any] = {"limit": 500, **({"continue": token} if token else {})}
            page = client.get("/api/v1/pods", params=params).json()
            seen += [key(p) for p in page["items"]]
            pages += 1
            token = page["metadata"].get("continue", "")
            if not token:
                break
            assert page["metadata"]["remainingItemCount"] == 1200 - len(seen)
    assert pages == 3
    assert len(seen) == len(set(seen)) == 1200
    assert seen == sorted(seen)


def test_stale_continue_token_is_410_expired(wide_server: RunningServer) -> None:
    with http(wide_server) as client:
        token = client.get("/api/v1/pods", params={"limit": 100}).json()["metadata"]["continue"]
        wide_server.expire_continue_tokens()
        stale = client.get("/api/v1/pods", params={"limit": 100, "continue": token})
        assert (stale.status_code, stale.json()["reason"]) == (410, "Expired")
        garbage = client.get("/api/v1/pods", params={"limit": 100, "continue": "not-a-token"})
        assert garbage.status_code == 400


def test_large_lists_are_gzipped_when_asked(wide_server: RunningServer) -> None:
    with http(wide_server) as client:
        request = client.build_request("GET", "/api/v1/pods", params={"limit": 500},
                                       headers={"Accept-Encoding": "gzip"})
        answer = client.send(request, stream=True)
        raw = b"".join(answer.iter_raw())
        answer.close()
    assert answer.headers["Content-Encoding"] == "gzip"
    assert len(json.loads(gzip.decompress(raw))["items"]) == 500


def test_go_style_booleans(api: httpx2.Client) -> None:
    watch = api.get("/api/v1/pods", params={"watch": "True"})
    assert (watch.status_code, watch.json()["reason"]) == (405, "MethodNotAllowed")
    assert api.get("/api/v1/pods", params={"watch": "yes"}).status_code == 400
    assert api.get("/api/v1/pods", params={"watch": "0"}).status_code == 200


def test_missing_object_and_bad_token(api: httpx2.Client, mini_server: RunningServer) -> None:
    missing = api.get("/api/v1/namespaces/gpu-operator/pods/nope").json()
    assert (missing["code"], missing["reason"], missing["details"]["name"]) == (404, "NotFound", "nope")
    assert missing["message"] == 'pods "nope" not found'
    with http(mini_server, token="wrong") as stranger:
        denied = stranger.get("/api/v1/pods")
    assert (denied.status_code, denied.json()["reason"]) == (401, "Unauthorized")


def test_writes_are_refused(api: httpx2.Client) -> None:
    answer = api.delete("/api/v1/namespaces/gpu-operator/pods/nvidia-driver-daemonset-4xk2p")
    assert answer.status_code == 405


LOGS = "/api/v1/namespaces/gpu-operator/pods/nvidia-device-plugin-daemonset-z8c3x/log"


def test_logs_are_text_with_tail_previous_and_limit(api: httpx2.Client, mini_bundle: Path) -> None:
    source = (mini_bundle / "logs" / "gpu-operator" / "nvidia-device-plugin-daemonset-z8c3x" /
              "nvidia-device-plugin.log").read_text()
    last_two = api.get(LOGS, params={"tailLines": 2})
    assert last_two.headers["Content-Type"].startswith("text/plain")
    assert last_two.text == "".join(source.splitlines(keepends=True)[-2:])
    assert api.get(LOGS, params={"previous": "true", "limitBytes": 10}).text == source[:10]


def test_log_errors_match_the_api(api: httpx2.Client) -> None:
    wrong = api.get(LOGS, params={"container": "nope"}).json()
    assert wrong["message"] == ("container nope is not valid for pod "
                                "nvidia-device-plugin-daemonset-z8c3x")
    never_ran = api.get("/api/v1/namespaces/gpu-operator/pods/nvidia-dcgm-exporter-m6r2w/log",
                        params={"container": "nvidia-dcgm-exporter"}).json()
    assert "is waiting to start: PodInitializing" in never_ran["message"]
    no_previous = api.get("/api/v1/namespaces/gpu-operator/pods/nvidia-driver-daemonset-4xk2p/"
                          "log", params={"container": "nvidia-driver-ctr", "previous": "1"})
    assert no_previous.status_code == 400


@pytest.fixture(scope="module")
def lightkube_client(mini_server: RunningServer) -> Iterator[Client]:
    config = KubeConfig.from_file(mini_server.kubeconfig_path)
    with Client(config, trust_env=False) as client:
        yield client


def test_exec_returns_the_nodes_command_output(lightkube_client: Client, mini_bundle: Path) -> None:
    result = lightkube_client.exec("nvidia-driver-daemonset-9fz7c", namespace="gpu-operator",
                                   container="nvidia-driver-ctr",
                                   command=["nvidia-smi", "-q", "-x"], stdout=True, decode=None)
    expected = (mini_bundle / "nodes" / "gpu-wk-02" / "cmd" / "nvidia-smi-q.xml").read_bytes()
    assert (result.stdout, result.exit_code) == (expected, 0)


def test_exec_cat_reads_host_files_through_the_pods_mounts(lightkube_client: Client,
                                                          mini_bundle: Path) -> None:
    result = lightkube_client.exec("nvidia-container-toolkit-daemonset-b7m4n",
                                   namespace="gpu-operator",
                                   command=["cat", "/runtime/config-dir.d/99-nvidia.toml"],
                                   stdout=True)
    expected = mini_bundle / "nodes" / "gpu-wk-01" / "files" / "etc" / "containerd" / "conf.d"
    assert result.stdout == (expected / "99-nvidia.toml").read_text()


def test_exec_failures_are_realistic(lightkube_client: Client) -> None:
    missing = lightkube_client.exec("nvidia-driver-daemonset-4xk2p", namespace="gpu-operator",
                                    container="nvidia-driver-ctr", command=["cat", "/etc/nope"],
                                    stdout=True, stderr=True)
    assert missing.exit_code == 1
    assert missing.stderr == "cat: /etc/nope: No such file or directory\n"
    unprivileged = lightkube_client.exec("nvidia-device-plugin-daemonset-h5t6v",
                                         namespace="gpu-operator", command=["dmesg"],
                                         stderr=True)
    assert unprivileged.exit_code == 1
    with pytest.raises(ApiError) as unknown:
        lightkube_client.exec("nvidia-driver-daemonset-4xk2p", namespace="gpu-operator",
                              container="nvidia-driver-ctr", command=["no-such-tool"])
    assert unknown.value.status.reason == "InternalError"
    assert "executable file not found" in (unknown.value.status.message or "")


def test_exec_speaks_v4_too(mini_server: RunningServer) -> None:
    with http(mini_server) as client, client.websocket(
            "/api/v1/namespaces/gpu-operator/pods/nvidia-driver-daemonset-4xk2p/exec",
            params={"command": "nvidia-smi", "container": "nvidia-driver-ctr", "stdout": "true"},
            subprotocols=["v4.channel.k8s.io"]) as ws:
        assert ws.subprotocol == "v4.channel.k8s.io"
        first = ws.receive_bytes(timeout=5)
        while first[0] != 3:
            first = ws.receive_bytes(timeout=5)
    assert json.loads(first[1:])["status"] == "Success"


def test_exec_into_pod_stuck_in_init_is_refused(api: httpx2.Client) -> None:
    answer = api.get("/api/v1/namespaces/gpu-operator/pods/nvidia-dcgm-exporter-m6r2w/exec",
                     params={"command": "true"}, headers={"Upgrade": "websocket",
                                                         "Connection": "Upgrade"})
    assert answer.status_code == 400
    assert 'container not found ("nvidia-dcgm-exporter")' in answer.json()["message"]


def test_pod_proxy_serves_the_exporters_scrape(api: httpx2.Client, mini_bundle: Path) -> None:
    path = "/api/v1/namespaces/gpu-operator/pods/nvidia-dcgm-exporter-k3p9d:9400/proxy/metrics"
    scrape = api.get(path)
    assert scrape.content == (mini_bundle / "nodes" / "gpu-wk-01" / "metrics" /
                              "dcgm-exporter.prom").read_bytes()
    assert scrape.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    refused = api.get(path.replace(":9400", ":9500")).json()
    assert (refused["code"], refused["reason"]) == (503, "ServiceUnavailable")
    named = api.get(path.replace(":9400", ":metrics"))
    assert named.status_code == 200


def test_injected_faults(mini_bundle: Path) -> None:
    faults = Faults(too_many_every=2, retry_after_s=3, forbid=("create pods/exec",))
    with serve_bundle(mini_bundle, faults=faults) as server, http(server) as client:
        assert client.get("/version").status_code == 200
        throttled = client.get("/version")
        assert (throttled.status_code, throttled.headers["Retry-After"]) == (429, "3")
        assert throttled.json()["details"]["retryAfterSeconds"] == 3
        denied = client.get("/api/v1/namespaces/gpu-operator/pods/x/exec", params={"command": "ls"})
        assert denied.status_code == 403
        assert denied.json()["message"] == (
            'pods "x" is forbidden: User "system:serviceaccount:gpunode:gpunode-reader" cannot '
            'create resource "pods/exec" in API group "" in the namespace "gpu-operator"')
        assert server.request_count == 3


def test_dropped_connections_and_500s(mini_bundle: Path) -> None:
    with serve_bundle(mini_bundle, faults=Faults(drop_every=2, error_500_every=3)) as server, \
            http(server) as client:
        assert client.get("/version").status_code == 200
        with pytest.raises(httpx2.RemoteProtocolError):
            client.get("/version")
        assert client.get("/version").status_code == 500


def test_tarball_bundle_and_subprocess_mode(tmp_path: Path, mini_bundle: Path) -> None:
    archive = Path(shutil.make_archive(str(tmp_path / "mini"), "gztar", mini_bundle.parent, "mini"))
    with serve_bundle(archive, in_subprocess=True) as server, http(server) as client:
        nodes = client.get("/api/v1/nodes").json()["items"]
        assert sorted(n["metadata"]["name"] for n in nodes) == ["gpu-wk-01", "gpu-wk-02", "mgmt-01"]
        assert server.path_counts()["GET /api/v1/nodes"] == 1


def test_subprocess_server_takes_a_token_that_begins_with_a_dash(mini_bundle: Path) -> None:
    # A random token begins with "-" about once in 64 (urlsafe base64): the server must start.
    with serve_bundle(mini_bundle, in_subprocess=True, token="-Xdash-token") as server, \
            http(server) as client:
        assert server.token == "-Xdash-token"
        assert client.get("/version").status_code == 200


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")
def test_kubectl_can_use_the_server(mini_server: RunningServer) -> None:
    def kubectl(*args: str) -> str:
        done = subprocess.run(["kubectl", "--kubeconfig", str(mini_server.kubeconfig_path), *args],
                              capture_output=True, text=True, timeout=60, check=True)
        return done.stdout

    assert "nvidia-device-plugin-daemonset-z8c3x" in kubectl(
        "get", "pods", "-n", "gpu-operator", "-l", "app=nvidia-device-plugin-daemonset",
        "--field-selector", "spec.nodeName=gpu-wk-02", "--chunk-size=1")
    assert "NVIDIA-SMI 580.159.04" in kubectl("exec", "-n", "gpu-operator",
                                              "nvidia-driver-daemonset-4xk2p", "-c",
                                              "nvidia-driver-ctr", "--", "nvidia-smi")


def test_a_served_subprocess_does_not_outlive_the_process_that_started_it(mini_bundle: Path) -> None:
    """A test killed before it could stop its server (SIGKILL, a timeout) leaves no server
    behind: the child notices it was re-parented and stops within a few seconds."""
    import os
    import signal
    import sys
    import time

    starter = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from pathlib import Path; from gpunode.apiserver import serve_bundle; "
         "s = serve_bundle(Path(sys.argv[1]), in_subprocess=True); print(s.pid, flush=True); time.sleep(300)",
         str(mini_bundle)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert starter.stdout is not None
        child = int(starter.stdout.readline())
    finally:
        starter.kill()
        starter.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    os.kill(child, signal.SIGKILL)
    raise AssertionError(f"test API server {child} outlived its parent by 15 s")
