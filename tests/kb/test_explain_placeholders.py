# ruff: noqa: E501  (real log lines are long)
"""``gpunode explain`` fills the next steps' placeholders with what the pasted text names
(kubectl describe's pod, namespace and node; a syslog line's host; the Xid's GPU, as the
index of nvidia-smi output in the same text) and marks commands that run on the node."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from gpunode.kb import load_kb
from inprocess import run_cli

DESCRIBE = """Name:             dcgm-exporter-7xk2p
Namespace:        gpu-operator
Priority:         2000001000
Service Account:  nvidia-dcgm-exporter
Node:             gpu-wk-02/10.0.0.12
Start Time:       Mon, 01 Dec 2026 10:00:00 +0000
"""
DAEMONSET = """Name:           nvidia-device-plugin-daemonset
Namespace:      gpu-operator
Selector:       app=nvidia-device-plugin-daemonset
Node-Selector:  nvidia.com/gpu.deploy.device-plugin=true
"""
SMI_TABLE = """| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
|=========================================+========================+======================|
|   0  NVIDIA H200                    On  |   00000000:18:00.0 Off |                    0 |
|   3  NVIDIA H200                    On  |   00000000:37:00.0 Off |                    1 |
"""
SMI_Q = "GPU 00000000:18:00.0\n    Product Name : NVIDIA H200\nGPU 00000000:2A:00.0\n    Product Name : NVIDIA H200\nGPU 00000000:37:00.0\n"
SMI_CSV = "index, pci.bus_id\n0, 00000000:18:00.0\n5, 00000000:37:00.0\n"
XID_95 = "Dec  1 10:00:01 gpu-wk-07 kernel: NVRM: Xid (PCI:0000:37:00): 95, pid=5171, name=pt_main_thread, Uncontained: FBHUB. RST: Yes, D-RST: No\n"
OOM = "    Last State:     Terminated\n      Reason:       OOMKilled\n"


def explain(text: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``gpunode explain -`` on ``text``, in this process (tests/inprocess.py)."""
    return run_cli("explain", "-", *args, stdin=text)


def steps(text: str, cause: str) -> list[str]:
    proc = explain(text, "-o", "json")
    assert proc.returncode == 1, proc.stderr
    (match,) = [m for m in json.loads(proc.stdout)["matches"] if m["cause"] == cause]
    return list(match["next_steps"])


def expected(cause: str, **values: str) -> list[str]:
    """The knowledge base's own steps with these values, the rest left as <placeholders>."""
    from gpunode.kb import render_steps

    return list(render_steps(load_kb().get(cause), values))


@pytest.mark.parametrize(
    ("smi", "index"),
    [(SMI_TABLE, "3"), (SMI_Q, "2"), (SMI_CSV, "5"), ("", "0000:37:00.0")],
    ids=["nvidia-smi table", "nvidia-smi -q order", "query-gpu csv", "bus id without nvidia-smi"],
)
def test_gpu_index_comes_from_nvidia_smi_output_in_the_text(smi: str, index: str) -> None:
    got = steps(smi + XID_95, "xid_95_uncontained_ecc")
    assert got == expected("xid_95_uncontained_ecc", node="gpu-wk-07", **{"gpu-index": index, "bus-id": "0000:37:00.0"})
    assert f"nvidia-smi -r -i {index}" in " ".join(got)


def test_pod_namespace_and_node_come_from_kubectl_describe() -> None:
    got = steps(DESCRIBE + OOM, "oom_killed")
    assert got == expected("oom_killed", namespace="gpu-operator", pod="dcgm-exporter-7xk2p", node="gpu-wk-02")
    assert not any("<" in s for s in got)


def test_a_syslog_host_names_the_node_of_its_own_line() -> None:
    """The Xid line's host wins over the described pod's node: the line is the evidence."""
    got = steps(DESCRIBE + XID_95, "xid_95_uncontained_ecc")
    assert got[0] == "kubectl drain gpu-wk-07 --ignore-daemonsets --delete-emptydir-data"


@pytest.mark.parametrize(
    "text",
    [DESCRIBE + DESCRIBE.replace("dcgm-exporter-7xk2p", "dcgm-exporter-q9zzv") + OOM, DAEMONSET + OOM],
    ids=["two pods described", "a DaemonSet described"],
)
def test_no_guess_between_two_pods_nor_from_a_daemonset(text: str) -> None:
    assert steps(text, "oom_killed") == expected("oom_killed")


def test_table_and_markdown_mark_commands_that_run_on_the_node() -> None:
    for fmt in ("table", "markdown"):
        out = explain(SMI_TABLE + XID_95, "-o", fmt).stdout
        assert "ssh gpu-wk-07 nvidia-smi -r -i 3  # on the node" in out, fmt
        assert "kubectl drain gpu-wk-07 --ignore-daemonsets --delete-emptydir-data  # on the node" not in out


def test_the_line_path_and_the_byte_path_find_the_same_names() -> None:
    """Streams are scanned as bytes (RE2), lists of lines as str: both read the same names."""
    import io

    from gpunode.explain import explain_lines, explain_stream

    text = DESCRIBE + SMI_Q + XID_95 + OOM
    by_lines = explain_lines(text.splitlines())
    by_bytes = explain_stream(io.BytesIO(text.encode()))
    assert [by_lines.step_values(m) for m in by_lines.matches] == [by_bytes.step_values(m) for m in by_bytes.matches]
    assert {v.get("gpu-index") for m in by_bytes.matches for v in [by_bytes.step_values(m)]} >= {"2"}


@pytest.mark.parametrize(
    ("path", "names"),
    [
        ("b/logs/gpu-operator/nvidia-driver-daemonset-ncdvs/nvidia-driver-ctr.log",
         {"namespace": "gpu-operator", "pod": "nvidia-driver-daemonset-ncdvs", "container": "nvidia-driver-ctr"}),
        ("logs/gpu-operator/nvidia-driver-daemonset-ncdvs/nvidia-driver-ctr.previous.log",
         {"namespace": "gpu-operator", "pod": "nvidia-driver-daemonset-ncdvs", "container": "nvidia-driver-ctr"}),
        ("/var/log/pods/gpu-operator_nvidia-driver-daemonset-ncdvs_038ec781-bbf8-41c5-b0b5-ebf4ba7c8215/nvidia-driver-ctr/3.log",
         {"namespace": "gpu-operator", "pod": "nvidia-driver-daemonset-ncdvs", "container": "nvidia-driver-ctr"}),
        ("/var/log/containers/nvidia-driver-daemonset-ncdvs_gpu-operator_nvidia-driver-ctr-" + "ab" * 32 + ".log",
         {"namespace": "gpu-operator", "pod": "nvidia-driver-daemonset-ncdvs", "container": "nvidia-driver-ctr"}),
        ("/tmp/driver.log", {}),
        ("logs/Not_A_Namespace/x/y.log", {}),
    ],
)
def test_pod_log_paths_name_their_pod(path: str, names: dict[str, str]) -> None:
    from gpunode.parse.pasted import names_from_path

    assert names_from_path(path) == names


def test_a_bundle_log_fills_namespace_and_pod_and_steps_are_never_wrapped(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "gpu-operator" / "nvidia-driver-daemonset-ncdvs" / "nvidia-driver-ctr.log"
    log.parent.mkdir(parents=True)
    log.write_text("Could not resolve Linux kernel version\n")
    proc = run_cli("explain", str(log), env={**os.environ, "COLUMNS": "60"})
    assert proc.returncode == 1
    cause = load_kb().get("kernel_headers_missing")
    from gpunode.kb import render_steps

    for step in render_steps(cause, {"namespace": "gpu-operator", "pod": "nvidia-driver-daemonset-ncdvs"}):
        assert any(line.strip().startswith(f"$ {step}") for line in proc.stdout.splitlines()), step
