"""Redaction corpus: well over 100 secrets planted in every source collect reads (pod,
DaemonSet and custom-resource env, args, commands, probe headers, last-applied
annotations, ConfigMaps, events, logs, node commands, containerd registry credentials,
metrics); after a collection none of them is anywhere in the bundle, and the manifest
names what was redacted without any value."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from itertools import count
from pathlib import Path
from typing import Any

from gpunode.apiserver import serve_bundle
from gpunode.collect import collect_bundle
from gpunode.collect.redact import redact_args, redact_item, redact_text

_SERIAL = count(1)
ENV_NAMES = ["DB_PASS", "MYSQL_PWD", "GITHUB_PAT", "AWS_SECRET_ACCESS_KEY", "NGC_API_KEY",
             "REDIS_PASSWORD", "API_TOKEN", "WEBHOOK_SECRET", "DB_CREDS", "PGPASSWORD",
             "REGISTRY_AUTH", "SMTP_PASSWD", "VAULT_TOKEN", "S3_ACCESS_KEY", "PRIVATE_KEY",
             "client_secret", "HF_TOKEN", "OPENAI_API_KEY", "LICENSE_KEY", "SESSION_COOKIE"]


def secret() -> str:
    return f"Zq{next(_SERIAL):04d}x9PlantedValue"


class Corpus:
    """Planted secret values, and the shapes that carry them."""

    def __init__(self) -> None:
        self.values: list[str] = []

    def plant(self, value: str | None = None) -> str:
        value = value or secret()
        self.values.append(value)
        return value

    def env(self) -> list[dict[str, str]]:
        return [{"name": name, "value": self.plant()} for name in ENV_NAMES]

    def shaped(self) -> Iterator[str]:
        """Secrets recognisable by their shape alone, each in a line of text."""
        yield f"Authorization: Bearer {self.plant()}"
        yield f"curl -H 'Authorization: Basic {self.plant()}' https://x"
        yield f"pulling from https://robot:{self.plant()}@registry.example.com/v2/"
        yield f"token {self.plant('ghp_' + secret() + 'AAAAAA')} accepted"
        yield f"using {self.plant('github_pat_' + secret() + '_BBBB')}"
        yield f"key {self.plant('AKIA' + 'QWERTYUIOP123456')} loaded"
        yield f"jwt={self.plant('eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.' + secret())}"
        yield f"--password={self.plant()} --verbose"
        yield f"login --token {self.plant()}"
        yield f'password = "{self.plant()}"'
        yield f"nvapi key {self.plant('nvapi-' + secret() + 'CCCC')}"
        yield f"client_secret: {self.plant()}"


def _edit(path: Path, change: Any) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def _pods(doc: dict[str, Any], corpus: Corpus) -> None:
    for pod in doc["items"]:
        container = pod["spec"]["containers"][0]
        container["env"] = [*container.get("env", []), *corpus.env()]
        container["args"] = ["--password", corpus.plant(), f"--api-key={corpus.plant()}",
                             "-p", corpus.plant(), f"-p{corpus.plant()}"]
        container["command"] = ["sh", "-c", f"mysql -u root -p {corpus.plant()} && "
                                            f"curl -H 'Authorization: Bearer {corpus.plant()}' x"]
        container["livenessProbe"] = {"httpGet": {"path": "/", "port": 80, "httpHeaders": [
            {"name": "Authorization", "value": f"Bearer {corpus.plant()}"},
            {"name": "X-Api-Key", "value": corpus.plant()}]}}
        last = json.dumps({"spec": {"containers": [{"env": [{"name": "X",
                                                              "value": corpus.plant()}]}]}})
        pod["metadata"].setdefault("annotations", {})[
            "kubectl.kubernetes.io/last-applied-configuration"] = last

def _daemonsets(doc: dict[str, Any], corpus: Corpus) -> None:
    for ds in doc["items"]:
        spec = ds["spec"]["template"]["spec"]
        spec["containers"][0]["env"] = [*spec["containers"][0].get("env", []), *corpus.env()[:5]]
        ds["metadata"].setdefault("annotations", {})[
            "kubectl.kubernetes.io/last-applied-configuration"] = json.dumps(
                {"password": corpus.plant()})

def _policies(doc: dict[str, Any], corpus: Corpus) -> None:
    for policy in doc["items"]:
        for section in ("driver", "toolkit", "devicePlugin", "dcgmExporter"):
            part = policy["spec"].setdefault(section, {})
            part["env"] = [*part.get("env", []), *corpus.env()[:6]]
        policy["spec"]["driver"]["repoConfig"] = {"url": next(corpus.shaped())}

def _events(doc: dict[str, Any], corpus: Corpus) -> None:
    template = doc["items"][0]
    for i, line in enumerate(corpus.shaped()):
        event = json.loads(json.dumps(template))
        event["metadata"]["name"] = f"planted-{i}"
        event["message"] = f"Failed to pull: {line}"
        doc["items"].append(event)

def _nodes(doc: dict[str, Any], corpus: Corpus) -> None:
    for node in doc["items"]:
        node["metadata"].setdefault("annotations", {})[
            "kubectl.kubernetes.io/last-applied-configuration"] = json.dumps(
                {"metadata": {"annotations": {"token": corpus.plant()}}})


def _plant_objects(bundle: Path, corpus: Corpus) -> None:
    for name, change in (("pods", _pods), ("daemonsets", _daemonsets), ("clusterpolicies", _policies),
                         ("events", _events), ("nodes", _nodes)):
        _edit(bundle / "cluster" / f"{name}.json", lambda doc, change=change: change(doc, corpus))
    kubeconfig = (f"apiVersion: v1\nusers:\n- name: admin\n  user:\n    token: {corpus.plant()}\n"
                  f"    client-key-data: {corpus.plant()}\n")
    configmaps = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "admin-kubeconfig",
                                                               "namespace": "gpu-operator"},
         "data": {"config": kubeconfig, "note": corpus.plant()}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "time-slicing-config",
                                                               "namespace": "gpu-operator"},
         "data": {"any": "version: v1\n" + "\n".join(corpus.shaped())}},
    ]
    (bundle / "cluster" / "configmaps.json").write_text(json.dumps({"kind": "List", "items": configmaps}))


def _plant_node_files(bundle: Path, corpus: Corpus) -> None:
    for node in ("gpu-wk-01", "gpu-wk-02"):
        files = bundle / "nodes" / node
        config = files / "files" / "etc" / "containerd" / "config.toml"
        config.write_text(config.read_text() + (
            '\n[plugins."io.containerd.grpc.v1.cri".registry.configs."nvcr.io".auth]\n'
            f'  username = "$oauthtoken"\n  password = "{corpus.plant()}"\n'
            f'  auth = "{corpus.plant()}"\n  identitytoken = "{corpus.plant()}"\n'))
        dmesg = files / "cmd" / "dmesg.txt"
        dmesg.write_text(dmesg.read_text() + "\n".join(corpus.shaped()) + "\n")
    for log in (bundle / "logs").rglob("*.log"):
        log.write_text(log.read_text() + "\n".join(corpus.shaped()) + "\n")


def test_no_planted_secret_reaches_the_bundle(mini_bundle: Path, tmp_path: Path) -> None:
    served = tmp_path / "served"
    shutil.copytree(mini_bundle, served)
    corpus = Corpus()
    _plant_objects(served, corpus)
    _plant_node_files(served, corpus)
    assert len(set(corpus.values)) >= 100
    out = tmp_path / "collected"
    with serve_bundle(served) as server:
        result = collect_bundle(out, kubeconfig=server.kubeconfig_path, quiet=True)
    texts = {p.relative_to(out).as_posix(): p.read_text(errors="replace")
             for p in out.rglob("*") if p.is_file()}
    sources = {rel.split("/")[0] + ("/" + rel.split("/")[1] if rel.startswith("cluster") else "")
               for rel in texts}
    assert {"cluster/pods.json", "cluster/configmaps.json", "cluster/events.json", "logs",
            "nodes"} <= sources  # every planted source was collected
    leaks = sorted({v for v in corpus.values for rel, text in texts.items() if v in text})
    assert leaks == [], f"{len(leaks)} of {len(set(corpus.values))} planted secrets leaked"
    manifest = json.loads((out / "manifest.json").read_text())
    assert any("DB_PASS" in r for r in manifest["redacted"])
    assert any(r.startswith("cluster/configmaps.json") for r in manifest["redacted"])
    assert any(r.startswith("nodes/") for r in manifest["redacted"])
    assert any(r.startswith("logs/") for r in manifest["redacted"])
    assert result.objects["pods"] == 11  # nothing was lost on the way


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
    assert redact_text("NVRM: Xid (PCI:0000:00:06): 79, pid=1, GPU has fallen off the bus.") == \
        "NVRM: Xid (PCI:0000:00:06): 79, pid=1, GPU has fallen off the bus."
    assert redact_args(["--token", "x", "--v=2"]) == ["--token", "<redacted>", "--v=2"]


_SHARED = (
    "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n"
)


def test_device_plugin_config_is_collected_whatever_its_name(mini_bundle: Path, tmp_path: Path) -> None:
    """The ConfigMap the ClusterPolicy names for the device plugin keeps its plugin configs
    (its name says nothing of GPUs); its other values and other ConfigMaps are not collected."""
    served = tmp_path / "served"
    shutil.copytree(mini_bundle, served)

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
