"""Every class of hostile input stays within 512 MiB of memory (docs/limits.md).

Each case builds one hostile bundle or file from the small fixture cluster and runs
the CLI on it in a child process whose peak resident memory (``ru_maxrss``) is
printed last on stderr. Sizes are chosen to run in seconds while well past what a
real cluster produces in that shape.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

MINI = Path(__file__).parents[1] / "live" / "fixtures" / "mini"
LIMIT_MIB = 512
NODE = "nodes/gpu-wk-01"
LOG = "logs/gpu-operator/nvidia-device-plugin-daemonset-z8c3x/nvidia-device-plugin.log"
EVENT = ('{"metadata":{"name":"e%d","namespace":"gpu-operator"},"involvedObject":{"kind":"Pod",'
         '"name":"nvidia-device-plugin-daemonset-z8c3x","namespace":"gpu-operator"},'
         '"reason":"BackOff","message":"Back-off restarting failed container","type":"Warning",'
         '"count":3}')


def peak_run(*args: str) -> tuple[subprocess.CompletedProcess[str], int]:
    """The CLI in a child process; its exit, output and peak memory in MiB (of that process
    or the largest of its worker processes)."""
    code = ("import resource, sys\nfrom gpunode.cli import main\ntry:\n    main()\nfinally:\n"
            "    print(max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF,"
            " resource.RUSAGE_CHILDREN)), file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=300, check=False)
    return proc, int(proc.stderr.strip().splitlines()[-1]) // 1024


def _copy(dest: Path) -> Path:
    shutil.copytree(MINI, dest)
    return dest


def large_list(tmp: Path) -> Path:
    """150,000 well-formed events, and 2,000,000 junk pods read item by item."""
    bundle = _copy(tmp / "b")
    (bundle / "cluster" / "events.json").write_text(
        '{"kind":"EventList","apiVersion":"v1","items":[' + ",".join(EVENT % i for i in range(150_000))
        + "]}")
    (bundle / "cluster" / "pods.json").write_bytes(b'{"items":[' + b"0," * 1_999_999 + b"0]}")
    return bundle


def deep_node_files(tmp: Path) -> Path:
    """Probe JSON and containerd TOML nested 200,000 deep: node data, never fatal."""
    bundle = _copy(tmp / "b")
    depth = 200_000
    (bundle / NODE / "cmd" / "gpunode-probe.json").write_text("[" * depth + "]" * depth)
    (bundle / NODE / "files/etc/containerd/config.toml").write_text("a = " + "[" * depth + "]" * depth)
    (bundle / "cluster" / "version.json").write_text("{\"a\":" * depth + "1" + "}" * depth)
    return bundle


def deep_cluster_list(tmp: Path) -> Path:
    bundle = _copy(tmp / "b")
    (bundle / "cluster" / "nodes.json").write_text('{"items":' + "[" * 200_000 + "]" * 200_000 + "}")
    return bundle


def huge_line(tmp: Path) -> Path:
    """A 64 MB log line that starts like a known signature."""
    bundle = _copy(tmp / "b")
    with (bundle / LOG).open("w") as log:
        log.write("NVRM: Xid (PCI:0000:3b:00): 79, pid=1, " + "A" * 64_000_000 + "\n")
    return bundle


def many_members(tmp: Path) -> Path:
    """A fleet archive of 60,000 members."""
    path = tmp / "fleet.tar.gz"
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        for p in sorted(MINI.rglob("*")):
            if p.is_file():
                tar.add(p, f"b/{p.relative_to(MINI)}")
        data = b"nvidia 1 0\n"
        for i in range(60_000):
            info = tarfile.TarInfo(f"b/nodes/n{i:05d}/cmd/lsmod.txt")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def big_node_files(tmp: Path) -> Path:
    """300 MB nvidia-smi XML, dmesg, metrics and containerd config (sparse files)."""
    bundle = _copy(tmp / "b")
    for rel in ("cmd/nvidia-smi-q.xml", "cmd/dmesg.txt", "metrics/dcgm-exporter.prom",
                "files/etc/containerd/config.toml"):
        with (bundle / NODE / rel).open("wb") as handle:
            handle.truncate(300_000_000)
    return bundle


CASES: dict[str, tuple[Callable[[Path], Path], tuple[int, ...]]] = {
    "large-json-list": (large_list, (0, 1)),
    "deep-nesting-node-files": (deep_node_files, (0, 1)),
    "deep-nesting-cluster-list": (deep_cluster_list, (2,)),
    "huge-line": (huge_line, (0, 1)),
    "many-tar-members": (many_members, (0, 1)),
    "big-node-files": (big_node_files, (0, 1)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_hostile_input_stays_within_512_mib(case: str, tmp_path: Path) -> None:
    build, exits = CASES[case]
    path = build(tmp_path)
    proc, peak = peak_run("diagnose", "--from", str(path), "-o", "json")
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode in exits, proc.stderr[-2000:]
    if proc.returncode == 2:
        assert len(proc.stderr.strip().splitlines()) == 2, proc.stderr  # one line, then the peak
    else:
        assert json.loads(proc.stdout)["nodes"]
    assert peak <= LIMIT_MIB, f"{case}: peak {peak} MiB"


def test_explain_on_a_huge_line_stays_within_512_mib(tmp_path: Path) -> None:
    bundle = huge_line(tmp_path)
    proc, peak = peak_run("explain", str(bundle / LOG))
    assert "Traceback" not in proc.stderr and proc.returncode in (0, 1), proc.stderr[-2000:]
    assert "gpu_fallen_off_bus" in proc.stdout  # the signature at the start of the line is found
    assert peak <= LIMIT_MIB, f"explain: peak {peak} MiB"
