"""Secret-looking values never reach a bundle; everything else keeps its bytes."""

from __future__ import annotations

import msgspec

from gpunode.redact import REDACTED, redact_args, redact_pod, redact_workload


def test_flags_with_sensitive_names_lose_their_values() -> None:
    assert redact_args(["--token=abc", "--password", "hunter2", "--verbose", "--cert-key", "k",
                        "--keep-alive", "--node-name=gpu"]) == [
        f"--token={REDACTED}", "--password", REDACTED, "--verbose", "--cert-key", REDACTED,
        "--keep-alive", "--node-name=gpu"]


def test_pod_env_values_are_replaced_and_references_kept() -> None:
    pod = {"metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "c", "env": [
            {"name": "NGC_API_KEY", "value": "nvapi-abc"},
            {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "pw"}}},
            {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]}],
        "initContainers": [{"name": "i", "args": ["--registry-token", "t0k"]}]}}
    out = msgspec.json.decode(redact_pod(msgspec.json.encode(pod)))
    env = out["spec"]["containers"][0]["env"]
    assert env[0]["value"] == REDACTED
    assert env[1] == pod["spec"]["containers"][0]["env"][1]  # type: ignore[index]
    assert env[2]["value"] == "all"
    assert out["spec"]["initContainers"][0]["args"] == ["--registry-token", REDACTED]


def test_clean_objects_keep_their_exact_bytes() -> None:
    raw = b'{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","args":["--v=2"]}]}}'
    assert redact_pod(raw) is raw
    workload = (b'{"spec":{"template":{"spec":{"containers":[{"name":"c","env":'
                b'[{"name":"AUTH_TOKEN","value":"x"}]}]}}}}')
    assert b'"value":"<redacted>"' in redact_workload(workload)
