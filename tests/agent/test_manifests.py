"""deploy/agent: the manifests parse, fit the schema and each other, and fit the agent's code."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from lightkube.models.apiextensions_v1 import CustomResourceDefinition
from lightkube.models.apps_v1 import DaemonSet
from lightkube.models.core_v1 import Namespace, Service, ServiceAccount
from lightkube.models.rbac_v1 import ClusterRole, ClusterRoleBinding
from manifests import COMPONENTS, DEPLOY, Obj, apply_op, by_kind, one, render, unknown_fields

from gpunode.agent.fold import AGENT_LABEL, AGENT_NAMESPACE, AGENT_PORT

SCHEMAS = {
    "DaemonSet": DaemonSet,
    "Namespace": Namespace,
    "Service": Service,
    "ServiceAccount": ServiceAccount,
    "ClusterRole": ClusterRole,
    "ClusterRoleBinding": ClusterRoleBinding,
    "CustomResourceDefinition": CustomResourceDefinition,
}
# hostPath types under which the kubelet or runtime would create a missing path on the host
CREATING_TYPES = {"", "DirectoryOrCreate", "FileOrCreate"}
VARIANTS = [(), ("node-condition",), ("servicemonitor",), ("privileged",), COMPONENTS]


def _pod(objects: list[Obj]) -> Obj:
    spec: Obj = one(objects, "DaemonSet")["spec"]["template"]["spec"]
    return spec


def _container(objects: list[Obj]) -> Obj:
    containers = _pod(objects)["containers"]
    assert len(containers) == 1
    container: Obj = containers[0]
    return container


def _flag(container: Obj, name: str) -> str | None:
    for arg in container["args"]:
        if arg == name:
            return ""
        if arg.startswith(name + "="):
            return str(arg.split("=", 1)[1])
    return None


def test_every_yaml_file_parses_and_is_used() -> None:
    used = {DEPLOY / "kustomization.yaml"}
    for folder in [DEPLOY, *(DEPLOY / "components" / c for c in COMPONENTS)]:
        spec = yaml.safe_load((folder / "kustomization.yaml").read_text())
        used |= {folder / "kustomization.yaml"}
        used |= {folder / r for r in spec.get("resources", [])}
        used |= {folder / p["path"] for p in spec.get("patches", [])}
    on_disk = set(DEPLOY.rglob("*.yaml"))
    assert on_disk == used
    for path in on_disk:
        assert list(yaml.safe_load_all(path.read_text()))


@pytest.mark.parametrize("components", VARIANTS)
def test_objects_fit_the_kubernetes_schema(components: tuple[str, ...]) -> None:
    for obj in render(*components):
        schema = SCHEMAS.get(obj["kind"])
        assert schema is not None or obj["kind"] == "ServiceMonitor"
        if schema is not None:
            assert unknown_fields(obj, schema) == [], obj["kind"]


def test_the_schema_check_catches_a_misspelt_field() -> None:
    ds = one(render(), "DaemonSet")
    apply_op(ds, {"op": "add", "path": "/spec/template/spec/containers/0/securityContxt", "value": {}})
    assert unknown_fields(ds, DaemonSet) == ["$.spec.template.spec.containers[0].securityContxt"]


def test_selectors_match_labels_and_ports_match() -> None:
    objects = render("servicemonitor")
    ds, service, monitor = (one(objects, k) for k in ("DaemonSet", "Service", "ServiceMonitor"))
    template_labels = ds["spec"]["template"]["metadata"]["labels"]
    assert ds["spec"]["selector"]["matchLabels"].items() <= template_labels.items()
    assert service["spec"]["selector"].items() <= template_labels.items()
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert monitor["spec"]["namespaceSelector"]["matchNames"] == [service["metadata"]["namespace"]]
    assert template_labels[AGENT_LABEL[0]] == AGENT_LABEL[1]  # what fold.agent_pods_by_node looks for

    container = _container(objects)
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"metrics": AGENT_PORT}
    assert _flag(container, "--port") == str(AGENT_PORT)
    assert [(p["name"], p["port"], p["targetPort"]) for p in service["spec"]["ports"]] == [
        ("metrics", AGENT_PORT, "metrics")
    ]
    assert [e["port"] for e in monitor["spec"]["endpoints"]] == ["metrics"]
    for probe in ("livenessProbe", "readinessProbe"):
        assert container[probe]["httpGet"] == {"path": "/healthz", "port": "metrics"}
    assert service["spec"]["clusterIP"] == "None"


@pytest.mark.parametrize("components", VARIANTS)
def test_host_paths_are_read_only_and_never_created(components: tuple[str, ...]) -> None:
    objects = render(*components)
    pod, container = _pod(objects), _container(objects)
    host_root = _flag(container, "--host-root")
    host_volumes = {v["name"]: v["hostPath"] for v in pod["volumes"] if "hostPath" in v}
    # the agent's own directory, where it keeps the node's history, is the one it writes
    assert host_volumes.pop("history") == {"path": "/var/lib/gpunode", "type": "DirectoryOrCreate"}
    assert _flag(container, "--history-dir") == "/var/lib/gpunode"
    assert host_volumes
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    assert mounts["history"]["mountPath"] == "/var/lib/gpunode" and not mounts["history"].get("readOnly")
    for name, host_path in host_volumes.items():
        assert mounts[name].get("readOnly") is True, name
        assert host_path.get("type", "") not in CREATING_TYPES, name
        # mounted where the probe looks for it: <host root> + the host path
        assert mounts[name]["mountPath"] == f"{host_root}{host_path['path']}", name
    assert {m["name"] for m in container["volumeMounts"]} <= {v["name"] for v in pod["volumes"]}


def test_security_context_is_tight() -> None:
    objects = render()
    context = _container(objects)["securityContext"]
    assert context["readOnlyRootFilesystem"] is True
    assert context["allowPrivilegeEscalation"] is False
    assert context["privileged"] is False
    assert context["capabilities"] == {"drop": ["ALL"], "add": ["SYSLOG"]}
    assert context["seccompProfile"] == {"type": "RuntimeDefault"}
    pod = _pod(objects)
    assert pod["runtimeClassName"] == "nvidia"
    assert not any(pod.get(k) for k in ("hostPID", "hostNetwork", "hostIPC"))
    env = {e["name"]: e for e in _container(objects)["env"]}
    assert env["NVIDIA_VISIBLE_DEVICES"]["value"] == "all"
    assert env["NODE_NAME"]["valueFrom"] == {"fieldRef": {"fieldPath": "spec.nodeName"}}


def test_privileged_component_does_without_the_nvidia_runtime() -> None:
    objects = render("privileged")
    pod, container = _pod(objects), _container(objects)
    assert "runtimeClassName" not in pod
    assert container["securityContext"]["privileged"] is True
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert [e["name"] for e in container["env"]] == ["NODE_NAME"]


def _tolerates(tolerations: list[Obj], key: str, value: str, effect: str) -> bool:
    for tol in tolerations:
        if tol.get("effect") and tol["effect"] != effect:
            continue
        if tol.get("operator") == "Exists" and tol.get("key", key) in (key, ""):
            return True
        if tol.get("key") == key and tol.get("value") == value:
            return True
    return False


@pytest.mark.parametrize(
    ("key", "value", "effect"),
    [
        ("nvidia.com/gpu", "present", "NoSchedule"),
        ("nvidia.com/gpu", "", "NoExecute"),
        ("sku", "gpu", "NoSchedule"),
    ],
)
def test_runs_on_gpu_nodes_despite_gpu_taints(key: str, value: str, effect: str) -> None:
    pod = _pod(render())
    assert pod["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    assert _tolerates(pod["tolerations"], key, value, effect)
    assert not _tolerates(pod["tolerations"], "node-role.kubernetes.io/control-plane", "", "NoSchedule")


def test_resources_and_names_fit_together() -> None:
    objects = render("node-condition")
    container = _container(objects)
    assert set(container["resources"]) == {"requests", "limits"}
    assert _flag(container, "--node-condition") == ""
    account = one(objects, "ServiceAccount")["metadata"]
    assert _pod(objects)["serviceAccountName"] == account["name"]
    assert account["namespace"] == AGENT_NAMESPACE == one(objects, "Namespace")["metadata"]["name"]
    roles = {r["metadata"]["name"] for r in by_kind(objects, "ClusterRole")}
    for binding in by_kind(objects, "ClusterRoleBinding"):
        assert binding["roleRef"]["name"] in roles
        subject = {"kind": "ServiceAccount", "name": account["name"], "namespace": AGENT_NAMESPACE}
        assert binding["subjects"] == [subject]


def _docs_key(obj: Obj) -> tuple[str, str]:
    return obj["kind"], obj["metadata"]["name"]


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl (with kustomize) is not installed")
def test_rendering_matches_kubectl_kustomize(tmp_path: Path) -> None:
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    shutil.copytree(DEPLOY, tmp_path / "agent")
    spec: dict[str, Any] = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": ["../agent"],
        "components": [f"../agent/components/{c}" for c in COMPONENTS],
    }
    (overlay / "kustomization.yaml").write_text(yaml.safe_dump(spec))
    for target, components in ((tmp_path / "agent", ()), (overlay, COMPONENTS)):
        command = ["kubectl", "kustomize", str(target)]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        theirs = sorted(yaml.safe_load_all(done.stdout), key=_docs_key)
        assert theirs == sorted(render(*components), key=_docs_key)
