"""Planted secrets (issue 22): none reaches the bundle, the reports or the HTML.

Well over 150 secrets of varied shapes are planted in every carrier ``collect`` reads:
container args, shell lines in commands, env values, probe headers, annotations
(known keys and unknown ones), custom-resource specs, ConfigMaps (GPU-stack ones, a
device-plugin config with a key of its own, others), events, container and condition
messages, logs, node command output, node files and metrics. The cluster is served by
``gpunode serve-bundle`` and read by the console script (``gpunode collect``), then
``diagnose``, ``stack`` and ``validate`` (run in this process) render it as table, wide, JSON,
Markdown and HTML: no planted value may appear anywhere.

Two nets: the projection (bundle/projection.py) keeps only the fields gpunode reads, so a
secret of a shape no rule knows is never collected from a field gpunode does not read (the
``unknown`` shapes below are checked to pass every redaction rule untouched); redaction by
name and shape (gpunode/redact.py) cleans what is read (messages, logs, node files).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import string
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from gpunode.redact import redact_args, redact_item, redact_text
from inprocess import run_cli

REPO = Path(__file__).parents[2]
GPUNODE = REPO / ".venv" / "bin" / "gpunode"
KILL_AFTER_S = 120
MIN_PLANTED = 150


class Corpus:
    """Planted secret values: ``secret()`` is the part that must never be seen again."""

    def __init__(self, seed: int = 22) -> None:
        self.rng = random.Random(seed)
        self.values: dict[str, str] = {}  # value -> where it was planted
        self.unknowns: set[str] = set()

    def secret(self, where: str, length: int = 24,
               alphabet: str = string.ascii_letters + string.digits) -> str:
        value = "Q" + "".join(self.rng.choice(alphabet) for _ in range(length - 1))
        self.values[value] = where
        return value

    def unknown(self, where: str) -> str:
        """A value no redaction rule knows: random text under a name that says nothing."""
        value = self.secret(where, 28, string.ascii_lowercase + string.digits + "-")
        self.unknowns.add(value)
        assert redact_text(value) == value and redact_text(f"handle {value}") == f"handle {value}"
        return value

    def lines(self, where: str) -> Iterator[str]:
        """Known shapes, one a line: connection strings, webhook URLs, cloud and SaaS tokens,
        passwords on command lines and in shell lines, bearer tokens, keys, basic auth."""
        s = self.secret
        yield f"connecting to postgres://app:{s(where)}@db.internal:5432/prod"
        yield f"cache at redis://:{s(where)}@cache:6379/0"
        yield f"mongodb+srv://admin:{s(where)}@cluster0.example.net/test"
        yield f"Server=tcp:db,1433;Database=x;User ID=sa;Password={s(where)};Encrypt=true"
        yield (f"DefaultEndpointsProtocol=https;AccountName=a;AccountKey={s(where)}==;"
               "EndpointSuffix=core.windows.net")
        yield f"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey={s(where)}="
        yield f"jdbc:mysql://db:3306/app?user=root&password={s(where)}&ssl=true"
        yield f"alerts to https://hooks.slack.com/services/T0001/B0001/{s(where)}"
        yield f"posting https://discord.com/api/webhooks/123456/{s(where)}"
        yield f"teams https://acme.webhook.office.com/webhookb2/{s(where)}/IncomingWebhook/x"
        yield f"https://alerts.example.com/webhooks/{s(where)}"
        yield f"aws_secret_access_key = {s(where, 40)}"
        yield f"AWS_SESSION_TOKEN={s(where, 60)}"
        yield f"using key AKIA{s(where, 16, string.ascii_uppercase + string.digits)[1:]}X"
        yield f"gcloud token ya29.{s(where, 40)}"
        yield f'"private_key_id": "{s(where, 40, "0123456789abcdef")}"'
        yield f"export AZURE_CLIENT_SECRET='{s(where, 34)}'"
        yield f"https://acct.blob.core.windows.net/c/f?sv=2022-11-02&sig={s(where)}&se=2030"
        yield f"clone with ghp_{s(where, 36)}"
        yield f"slack xoxb-1234-5678-{s(where)}"
        yield f"stripe sk_live_{s(where)}"
        yield f"vault hvs.{s(where)}"
        yield f"hf_{s(where, 34)} loaded"
        yield f"NGC key nvapi-{s(where, 40)}"
        yield f"PGPASSWORD={s(where)} psql -h db -U app"
        yield f"MYSQL_PWD={s(where)} mysqldump app"
        yield f"mysql -uroot -p{s(where)} -e 'select 1'"
        yield f"curl -u admin:{s(where)} https://registry.internal/v2/"
        yield f"echo {s(where)} | docker login -u robot --password-stdin nvcr.io"
        yield f"redis-cli -a {s(where)} ping"
        yield f"kubectl create secret generic db --from-literal=conn={s(where)}"
        yield f"Authorization: Bearer {s(where, 40)}"
        yield f"Cookie: session={s(where)}"
        yield f"X-Api-Key: {s(where)}"
        yield f"pulling https://robot:{s(where)}@registry.example.com/v2/"
        yield f"git clone https://x-access-token:{s(where)}@github.com/org/repo.git"
        yield f"jwt=eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.{s(where, 40)}"
        yield f"--db-password={s(where)} --verbose"
        yield f'password = "{s(where)}"'
        yield f"client_secret: {s(where)}"
        yield f"-----BEGIN OPENSSH PRIVATE KEY-----\n{s(where, 64)}\n-----END OPENSSH PRIVATE KEY-----"


# --- planting ---------------------------------------------------------------------------------


def _edit(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    doc = json.loads(path.read_text()) if path.exists() else {"apiVersion": "v1", "kind": "List", "items": []}
    change(doc)
    path.write_text(json.dumps(doc))


def _container_carriers(container: dict[str, Any], c: Corpus, where: str) -> None:
    container["env"] = [*container.get("env", []),
                        {"name": "TEAM_HANDLE", "value": c.unknown(f"{where} env")},
                        {"name": "UPSTREAM", "value": c.unknown(f"{where} env")},
                        {"name": "DB_PASS", "value": c.secret(f"{where} env")},
                        {"name": "DATABASE_URL", "value": f"postgres://u:{c.secret(where)}@db/x"}]
    container["args"] = [*container.get("args", []), f"--upstream-handle={c.unknown(f'{where} args')}",
                         c.unknown(f"{where} args"), "--password", c.secret(f"{where} args"),
                         f"--db-url=mysql://root:{c.secret(where)}@db/app"]
    container["command"] = ["sh", "-c", f"export HANDLE={c.unknown(f'{where} shell')}; "
                                         f"PGPASSWORD={c.secret(f'{where} shell')} psql -h db && "
                                         f"curl -H 'Authorization: Bearer {c.secret(where)}' x"]
    container["livenessProbe"] = {"httpGet": {"path": "/", "port": 80, "httpHeaders": [
        {"name": "X-Handle", "value": c.unknown(f"{where} probe header")}]}}


def _annotate(obj: dict[str, Any], c: Corpus, where: str) -> None:
    meta = obj.setdefault("metadata", {})
    meta.setdefault("annotations", {}).update({
        "team.example.com/handle": c.unknown(f"{where} annotation"),
        "vault.hashicorp.com/agent-inject-token": c.secret(f"{where} annotation"),
        "kubectl.kubernetes.io/last-applied-configuration": json.dumps(
            {"data": {"handle": c.unknown(f"{where} last-applied")}})})


def _pods(doc: dict[str, Any], c: Corpus) -> None:
    for pod in doc["items"][:6]:
        where = f"pod {pod['metadata']['name']}"
        _container_carriers(pod["spec"]["containers"][0], c, where)
        _annotate(pod, c, where)
        pod["spec"]["volumes"] = [*pod["spec"].get("volumes", []), {"name": "x", "csi": {
            "driver": "secrets", "volumeAttributes": {"handle": c.unknown(f"{where} volume")}}}]
    # read text: only shapes can be caught there
    waiting = doc["items"][0]["status"].setdefault("containerStatuses", [{}])[0]
    waiting["state"] = {"waiting": {"reason": "ImagePullBackOff", "message": (
        f"pull failed: Authorization: Bearer {c.secret('waiting message', 40)}")}}
    terminated = doc["items"][1]["status"].setdefault("containerStatuses", [{}])[0]
    terminated["lastState"] = {"terminated": {"reason": "Error", "exitCode": 1, "message": (
        f"dial postgres://app:{c.secret('terminated message')}@db:5432 failed")}}
    doc["items"][2]["status"]["conditions"] = [{"type": "Ready", "status": "False", "message": (
        f"probe https://hooks.slack.com/services/T1/B1/{c.secret('condition message')} failed")}]


def _daemonsets(doc: dict[str, Any], c: Corpus) -> None:
    for ds in doc["items"][:3]:
        where = f"daemonset {ds['metadata']['name']}"
        _container_carriers(ds["spec"]["template"]["spec"]["containers"][0], c, where)
        _annotate(ds, c, where)
        ds["spec"]["template"]["metadata"].setdefault("annotations", {})["team/handle"] = \
            c.unknown(f"{where} template annotation")


def _nodes(doc: dict[str, Any], c: Corpus) -> None:
    for node in doc["items"]:
        _annotate(node, c, f"node {node['metadata']['name']}")


def _events(doc: dict[str, Any], c: Corpus) -> None:
    template = doc["items"][0]
    for i, line in enumerate(c.lines("event message")):
        event = json.loads(json.dumps(template))
        event["metadata"]["name"] = f"planted-{i}"
        event["message"] = f"Failed to pull image: {line}"
        doc["items"].append(event)


def _policies(doc: dict[str, Any], c: Corpus) -> None:
    for policy in doc["items"]:
        spec = policy["spec"]
        for section in ("driver", "toolkit", "devicePlugin", "dcgmExporter"):
            part = spec.setdefault(section, {})
            handle = {"name": "HANDLE", "value": c.unknown(f"ClusterPolicy {section} env")}
            part["env"] = [*part.get("env", []), handle]
        spec["driver"]["licensingConfig"] = {"nlsEnabled": True,
                                             "configMapName": c.unknown("ClusterPolicy spec")}
        spec["driver"]["repoConfig"] = {"url": f"https://mirror:{c.secret('ClusterPolicy spec')}@repo/x"}
        spec["customerExtension"] = {"opaque": c.unknown("ClusterPolicy unknown section")}
        _annotate(policy, c, "ClusterPolicy")


def _nic_policies(doc: dict[str, Any], c: Corpus) -> None:
    doc["items"] = [{"apiVersion": "mellanox.com/v1alpha1", "kind": "NicClusterPolicy",
                     "metadata": {"name": "nic-cluster-policy"},
                     "spec": {"ofedDriver": {"image": "doca-driver", "env": [
                         {"name": "HANDLE", "value": c.unknown("NicClusterPolicy env")}],
                         "repoConfig": {"configMapName": c.unknown("NicClusterPolicy spec")}}},
                     "status": {"state": "ready"}}]


def _services(doc: dict[str, Any], c: Corpus) -> None:
    doc["items"] = [{"apiVersion": "v1", "kind": "Service", "metadata": {
        "name": "nvidia-dcgm-exporter", "namespace": "gpu-operator",
        "labels": {"app": "nvidia-dcgm-exporter"},
        "annotations": {"prometheus.io/scrape": "true",
                        "cloud.example.com/lb-token": c.unknown("Service annotation")}},
        "spec": {"selector": {"app": "nvidia-dcgm-exporter"}, "externalName": c.unknown("Service spec")}}]


def _pvcs(doc: dict[str, Any], c: Corpus) -> None:
    doc["items"] = [{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {
        "name": "data", "namespace": "ml", "annotations": {"team/handle": c.unknown("PVC annotation")}},
        "spec": {"storageClassName": "standard", "volumeName": c.unknown("PVC spec")},
        "status": {"phase": "Bound"}}]


def _configmaps(c: Corpus) -> list[dict[str, Any]]:
    shared = ("version: v1\nflags:\n  migStrategy: none\n  handle: " + c.unknown("plugin config unknown key")
              + "\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 1\n")
    meta = {"namespace": "gpu-operator"}
    kubeconfig = ("apiVersion: v1\nusers:\n- name: admin\n  user:\n"
                  f"    token: {c.secret('ConfigMap kubeconfig')}\n"
                  f"    client-key-data: {c.secret('ConfigMap kubeconfig')}\n")
    return [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {**meta, "name": "nvidia-team-settings"},
         "data": {"handle": c.unknown("GPU-stack ConfigMap"),
                  "notes": "\n".join(c.lines("GPU-stack ConfigMap"))}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {**meta, "name": "admin-kubeconfig"},
         "data": {"config": kubeconfig, "note": c.unknown("ConfigMap")},
         "binaryData": {"blob": c.unknown("ConfigMap binaryData")}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {**meta, "name": "time-slicing-config"},
         "data": {"any": shared}},
    ]


def _plant_objects(root: Path, c: Corpus) -> None:
    cluster = root / "cluster"
    for name, change in (("pods", _pods), ("daemonsets", _daemonsets), ("nodes", _nodes), ("events", _events),
                         ("clusterpolicies", _policies), ("nicclusterpolicies", _nic_policies),
                         ("services", _services), ("persistentvolumeclaims", _pvcs)):
        _edit(cluster / f"{name}.json", lambda doc, change=change: change(doc, c))  # type: ignore[misc]

    def mount(doc: dict[str, Any]) -> None:  # the device plugin reads time-slicing-config
        doc["items"][0]["spec"]["devicePlugin"]["config"] = {"name": "time-slicing-config", "default": "any"}
    _edit(cluster / "clusterpolicies.json", mount)
    (cluster / "configmaps.json").write_text(json.dumps({"kind": "List", "items": _configmaps(c)}))


def _plant_node_files(root: Path, c: Corpus) -> None:
    for node in ("gpu-wk-01", "gpu-wk-02"):
        files = root / "nodes" / node
        config = files / "files" / "etc" / "containerd" / "config.toml"
        config.write_text(config.read_text() + (
            '\n[plugins."io.containerd.grpc.v1.cri".registry.configs."nvcr.io".auth]\n'
            f'  username = "$oauthtoken"\n  password = "{c.secret("containerd config")}"\n'
            f'  auth = "{c.secret("containerd config")}"\n'
            f'  identitytoken = "{c.secret("containerd config")}"\n'))
        for name in ("dmesg.txt", "nvidia-smi.txt"):
            out = files / "cmd" / name
            out.write_text(out.read_text() + "\n".join(c.lines(f"node {node} {name}")) + "\n")
        for prom in (files / "metrics").glob("*.prom"):
            prom.write_text(prom.read_text() + (
                f'# HELP probe_info x\nprobe_info{{target="https://u:{c.secret("metrics label")}@db"}} 1\n'))
    for log in (root / "logs").rglob("*.log"):
        log.write_text(log.read_text() + "\n".join(c.lines(f"log {log.parent.name}")) + "\n")


# --- running the console script ---------------------------------------------------------------


def _env(tmp: Path) -> dict[str, str]:
    for sub in ("home", "tmp"):
        (tmp / sub).mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(tmp / "home"), "TMPDIR": str(tmp / "tmp"), "COLUMNS": "200"}
    env.pop("KUBECONFIG", None)
    return env


@contextmanager
def _served(bundle: Path, tmp: Path) -> Iterator[Path]:
    """``gpunode serve-bundle`` in its own process, until the block ends."""
    kubeconfig = tmp / "served.kubeconfig"
    server = subprocess.Popen([str(GPUNODE), "serve-bundle", str(bundle), "--kubeconfig", str(kubeconfig)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=_env(tmp))
    try:
        deadline = time.monotonic() + 60
        while not kubeconfig.exists() and time.monotonic() < deadline and server.poll() is None:
            time.sleep(0.05)
        assert kubeconfig.exists(), "serve-bundle did not start"
        time.sleep(0.2)  # the file is written before the socket listens on some paths
        yield kubeconfig
    finally:
        server.terminate()
        server.wait(timeout=30)


def _gpunode(tmp: Path, *args: str, here: bool = False) -> str:
    """``gpunode ARGS`` through the console script, or (``here``) its ``main`` in this process
    (tests/inprocess.py): the renderings of the collected bundle, which print the same either way."""
    if here:
        done = run_cli(*args, env=_env(tmp))
    else:
        done = subprocess.run([str(GPUNODE), *args], capture_output=True, text=True, env=_env(tmp),
                              timeout=KILL_AFTER_S, check=False)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, 1), f"{args}: exit {done.returncode}: {done.stderr}"
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Corpus, dict[str, str]]:
    """The planted cluster collected and rendered: every text a user or a ticket gets."""
    tmp = tmp_path_factory.mktemp("planted")
    served = shutil.copytree(Path(__file__).parent / "fixtures" / "mini", tmp / "served")
    corpus = Corpus()
    _plant_objects(served, corpus)
    _plant_node_files(served, corpus)
    out = tmp / "collected"
    texts: dict[str, str] = {}
    with _served(served, tmp) as kubeconfig:
        live = ("--kubeconfig", str(kubeconfig), "-q")
        texts["collect"] = _gpunode(tmp, "collect", *live, "--all-nodes", "-d", str(out))
        texts["live diagnose -o json"] = _gpunode(tmp, "diagnose", *live, "--all-nodes", "-o", "json")
    for rel in out.rglob("*"):
        if rel.is_file():
            texts[f"bundle {rel.relative_to(out)}"] = rel.read_text(errors="replace")
    src = ("--from", str(out))
    for output in ("table", "wide", "json", "markdown", "html"):
        texts[f"diagnose -o {output}"] = _gpunode(tmp, "diagnose", *src, "--all", "-o", output, here=True)
    texts["stack"] = _gpunode(tmp, "stack", *src, here=True)
    for output in ("table", "json", "html"):
        texts[f"validate -o {output}"] = _gpunode(tmp, "validate", *src, "-o", output, here=True)
    return corpus, texts


def test_no_planted_secret_is_collected_or_shown(planted: tuple[Corpus, dict[str, str]]) -> None:
    corpus, texts = planted
    assert len(corpus.values) >= MIN_PLANTED
    carriers = {where.split(" ")[0] for where in corpus.values.values()}
    assert {"pod", "daemonset", "node", "event", "ClusterPolicy", "NicClusterPolicy", "ConfigMap",
            "GPU-stack", "plugin", "log", "containerd", "metrics", "waiting", "terminated"} <= carriers
    leaks = {value: (where, [name for name, text in texts.items() if value in text])
             for value, where in corpus.values.items() if any(value in text for text in texts.values())}
    print(f"{len(leaks)} of {len(corpus.values)} planted secrets leaked")
    assert leaks == {}, f"{len(leaks)} of {len(corpus.values)} planted secrets leaked: {leaks}"


def test_every_carrier_was_collected(planted: tuple[Corpus, dict[str, str]]) -> None:
    """Nothing passes by not being read: each planted list, log and node file is in the bundle."""
    _, texts = planted
    for rel in ("cluster/pods.json", "cluster/daemonsets.json", "cluster/events.json",
                "cluster/configmaps.json", "cluster/nicclusterpolicies.json", "cluster/services.json",
                "nodes/gpu-wk-01/cmd/dmesg.txt", "nodes/gpu-wk-01/files/etc/containerd/config.toml",
                "nodes/gpu-wk-01/metrics/dcgm-exporter.prom"):
        assert f"bundle {rel}" in texts, rel
    assert any(name.startswith("bundle logs/") for name in texts)
    manifest = json.loads(texts["bundle manifest.json"])
    assert manifest["projected"].startswith("fields read by gpunode only")
    assert any(r.startswith("logs/") for r in manifest["redacted"])
    assert any(r.startswith("nodes/") for r in manifest["redacted"])


def test_a_shape_no_rule_knows_is_caught_by_the_projection(planted: tuple[Corpus, dict[str, str]]) -> None:
    """A secret the redaction rules let through (checked here against them) is still not
    collected: the field holding it is not read. This is the case a new secret shape is."""
    corpus, texts = planted
    unknown = corpus.unknowns
    assert len(unknown) >= 40
    for value in unknown:
        obj = {"metadata": {"name": "p", "annotations": {"team.example.com/handle": value}},
               "spec": {"containers": [{"name": "c", "env": [{"name": "UPSTREAM", "value": value}],
                                        "args": [f"--upstream-handle={value}"]}]}}
        assert value in redact_item(json.dumps(obj).encode()).decode()  # the rules alone keep it
    bundle = "\n".join(text for name, text in texts.items() if name.startswith("bundle "))
    assert not [v for v in unknown if v in bundle]


def test_what_is_not_secret_is_kept() -> None:
    pod = {"metadata": {"name": "p", "labels": {"app": "x"}}, "spec": {
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
        "containers": [{"name": "c", "env": [{"name": "PASS_DEVICE_SPECS", "value": "true"},
                                             {"name": "DEVICE_LIST_STRATEGY", "value": "envvar"},
                                             {"name": "TOKEN_REF", "valueFrom": {"secretKeyRef": {
                                                 "name": "s", "key": "token"}}}],
                        "args": ["--fail-on-init-error=false", "--mig-strategy=single"]}]}}
    raw = json.dumps(pod).encode()
    assert json.loads(redact_item(raw)) == pod
    for line in ("NVRM: Xid (PCI:0000:00:06): 79, pid=1, GPU has fallen off the bus.",
                 "      key_model = 'node'",
                 'Error: secret "nvidia-registry" not found',
                 "0/4 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: }",
                 "https://registry.example.com/v2/library/busybox@sha256:" + "a" * 64,
                 "mkdir -p /run/nvidia/validations && echo done"):
        assert redact_text(line) == line
    assert redact_args(["--token", "x", "--v=2"]) == ["--token", "<redacted>", "--v=2"]


_SHARED = (
    "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n"
)


def test_device_plugin_config_is_collected_whatever_its_name(tmp_path: Path) -> None:
    """The ConfigMap the ClusterPolicy names for the device plugin keeps what gpunode reads of
    its plugin configs (its name says nothing of GPUs); its other values and other
    ConfigMaps are not collected."""
    from gpunode.apiserver import serve_bundle
    from gpunode.collect import collect_bundle

    served = shutil.copytree(Path(__file__).parent / "fixtures" / "mini", tmp_path / "served")

    def name_config(doc: dict[str, Any]) -> None:
        doc["items"][0]["spec"]["devicePlugin"]["config"] = {"name": "sharing-profiles", "default": "t4"}

    _edit(served / "cluster" / "clusterpolicies.json", name_config)
    meta = {"namespace": "gpu-operator"}
    configmaps = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {**meta, "name": "sharing-profiles"},
         "data": {"t4": _SHARED, "readme": "ask the platform team"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {**meta, "name": "team-settings"},
         "data": {"t4": _SHARED}},
    ]
    (served / "cluster" / "configmaps.json").write_text(json.dumps({"kind": "List", "items": configmaps}))
    out = tmp_path / "collected"
    with serve_bundle(served) as server:
        collect_bundle(out, kubeconfig=server.kubeconfig_path, quiet=True)
    kept = {c["metadata"]["name"]: c["data"]
            for c in json.loads((out / "cluster" / "configmaps.json").read_text())["items"]}
    assert kept["sharing-profiles"] == {"t4": _SHARED, "readme": "<not collected>"}
    assert kept["team-settings"] == {"t4": "<not collected>"}
