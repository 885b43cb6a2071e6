"""Every class of hostile input stays within 512 MiB of memory (docs/limits.md).

Each case builds one hostile bundle or file from the small fixture cluster and runs
the CLI on it in a child process whose peak resident memory (``ru_maxrss``) is
printed last on stderr. Sizes are chosen to run in seconds while well past what a
real cluster produces in that shape.
"""

from __future__ import annotations

import gzip
import io
import json
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gpunode.bundle.load import RESOURCES
from gpunode.bundle.pieces import MAX_ITEM_BYTES, PIECE_BYTES
from gpunode.limits import MAX_FILE_BYTES, MAX_FILES

pytestmark = pytest.mark.slow

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
    or the largest of its worker processes).

    The child's own peak is its ``VmHWM``: Linux carries a process's ``ru_maxrss`` across
    ``exec``, so that figure would start at the test process's own size."""
    code = ("import resource, sys\nfrom gpunode.cli import main\ntry:\n    main()\nfinally:\n"
            "    hwm = [int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:')]\n"
            "    print(max(hwm + [resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]),"
            " file=sys.stderr)")
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


def too_many_members(tmp: Path) -> Path:
    """An archive of MAX_FILES + 1 tiny node files: refused once indexing passes the limit."""
    path = tmp / "many.tar.gz"
    names = (f"b/nodes/n{i // 4:06d}/cmd/f{i % 4}.txt" for i in range(MAX_FILES + 1))
    return _tiny_members(path, names, b"nvidia 1 0\n")


def _tiny_members(path: Path, names: Iterator[str], data: bytes) -> Path:
    """A .tar.gz holding ``data`` under each of ``names`` (all of one length), its headers made
    from one template, the name and checksum put in: ``tarfile.addfile`` took 7 s of CPU for
    250,001 members, this 0.7 s. The archive is what tarfile writes (ustar headers)."""
    first = next(names)
    info = tarfile.TarInfo(first)
    info.size = len(data)
    template = info.tobuf(tarfile.USTAR_FORMAT, "utf-8", "strict")
    body = data + b"\0" * (-len(data) % tarfile.BLOCKSIZE)
    base = int(template[148:155].rstrip(b"\0 "), 8) - sum(first.encode())  # the checksum, less the name
    chunk: list[bytes] = []
    with gzip.open(path, "wb", compresslevel=1) as out:
        for name in (first, *names):
            raw = name.encode()
            assert len(raw) == len(first), name
            chunk += (raw, template[len(raw):148], b"%06o\0" % (base + sum(raw)), template[155:], body)
            if len(chunk) > 50_000:
                out.write(b"".join(chunk))
                chunk.clear()
        out.write(b"".join(chunk) + b"\0" * 2 * tarfile.BLOCKSIZE)  # the end of the archive
    return path


def many_node_folders(tmp: Path) -> Path:
    """12,000 node folders holding one tiny nvidia-smi file each: every one is a GPU node to
    judge, and its report is written (90 MB of JSON)."""
    bundle = _copy(tmp / "b")
    for i in range(12_000):
        folder = bundle / "nodes" / f"n{i:05d}" / "cmd"
        folder.mkdir(parents=True)
        (folder / "nvidia-smi-q.xml").write_bytes(b"x\n")
    return bundle


def big_node_files(tmp: Path) -> Path:
    """300 MB nvidia-smi XML, dmesg, metrics and containerd config (sparse files)."""
    bundle = _copy(tmp / "b")
    for rel in ("cmd/nvidia-smi-q.xml", "cmd/dmesg.txt", "metrics/dcgm-exporter.prom",
                "files/etc/containerd/config.toml"):
        with (bundle / NODE / rel).open("wb") as handle:
            handle.truncate(300_000_000)
    return bundle


def tiny_items(tmp: Path) -> Path:
    """1,000,000 empty items (``{}``, three bytes, about 100 decoded) in every cluster list:
    read whole, the lists took 1.5 GiB; reading stops at MAX_LIST_MEMORY, naming the file."""
    bundle = _copy(tmp / "b")
    body = b'{"kind":"List","items":[' + b",".join([b"{}"] * 1_000_000) + b"]}"
    for name in RESOURCES:
        (bundle / "cluster" / f"{name}.json").write_bytes(body)
    return bundle


def tiny_items_in_small_lists(tmp: Path) -> Path:
    """Every cluster list just under a piece (1 MiB, read whole) of ``{}`` items: each decoded
    at once without a check took 701 MiB together and was judged (exit 1); a list is now
    decoded only when what it can decode into fits."""
    bundle = _copy(tmp / "b")
    body = b'{"kind":"List","items":[' + b",".join([b"{}"] * ((PIECE_BYTES - 40) // 3)) + b"]}"
    for name in RESOURCES:
        (bundle / "cluster" / f"{name}.json").write_bytes(body)
    return bundle


def tiny_values_in_big_items(tmp: Path) -> Path:
    """ClusterPolicies of 4 MiB each (an item may be larger than a piece), each a spec array of
    1,400,000 ``{}``: a piece decoded into 168 MiB past the check (517 MiB peak)."""
    bundle = _copy(tmp / "b")
    item = b'{"spec":{"a":[' + b",".join([b"{}"] * (MAX_ITEM_BYTES // 3 - 20)) + b"]}}"
    with (bundle / "cluster" / "clusterpolicies.json").open("wb") as out:
        out.write(b'{"kind":"List","items":[' + b",".join([item] * 40) + b"]}")
    return bundle


def tiny_items_up_to_the_file_limit(tmp: Path) -> Path:
    """A pod list of MAX_FILE_BYTES: 64 MB of ``{}`` items, then a hole (sparse), then its end."""
    bundle = _copy(tmp / "b")
    with (bundle / "cluster" / "pods.json").open("wb") as out:
        out.write(b'{"kind":"PodList","items":[' + b"{}," * (64_000_000 // 3))
        out.seek(MAX_FILE_BYTES - 4)
        out.write(b"{}]}")
    return bundle


def tiny_items_archive(tmp: Path) -> Path:
    return _pack(tiny_items(tmp), tmp / "tiny.tar.gz")


def huge_strings(tmp: Path) -> Path:
    """100 pods whose names are 3 MB each (names are kept): read whole, bytes and names
    together passed 512 MiB; in pieces only the names are held."""
    bundle = _copy(tmp / "b")
    pod = '{"metadata":{"name":"%s","namespace":"default"},"spec":{},"status":{"phase":"Running"}}'
    name = "x" * 3_000_000
    with (bundle / "cluster" / "pods.json").open("w") as out:
        out.write('{"apiVersion":"v1","items":[')
        for i in range(100):
            out.write(("," if i else "") + pod % f"p{i}-{name}")
        out.write('],"kind":"List"}')
    return bundle


def deep_item_in_large_list(tmp: Path) -> Path:
    """A 2 MB list (read in pieces) with one item nested 200,000 deep."""
    bundle = _copy(tmp / "b")
    event = EVENT % 0
    deep = '{"x":' + "[" * 200_000 + "]" * 200_000 + "}"
    items = [event] * 3_000 + [deep] + [event] * 3_000
    (bundle / "cluster" / "events.json").write_text('{"kind":"EventList","items":[' + ",".join(items) + "]}")
    return bundle


def big_log(tmp: Path) -> Path:
    """A 1 GB container log (sparse): only its last 4 MiB are read."""
    bundle = _copy(tmp / "b")
    with (bundle / LOG).open("ab") as handle:
        handle.truncate(1_000_000_000)
    return bundle


def big_log_archive(tmp: Path) -> Path:
    """The same log, 600 MB, inside a .tar.gz."""
    bundle = _copy(tmp / "b")
    with (bundle / LOG).open("ab") as handle:
        handle.truncate(600_000_000)
    return _pack(bundle, tmp / "log.tar.gz")


def short_line_logs(tmp: Path) -> Path:
    """Eight 4 MiB logs of one stack pod in two-character lines: 1,400,000 lines each (about
    80 MiB held per log); the node's logs share a budget of bytes and lines."""
    bundle = _copy(tmp / "b")
    folder = (bundle / LOG).parent
    for i in range(8):
        (folder / f"c{i}.log").write_bytes(b"ab\n" * (4 * 1024 * 1024 // 3))
    return bundle


def _pack(bundle: Path, path: Path) -> Path:
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        tar.add(bundle, "b")
    shutil.rmtree(bundle)
    return path


def many_big_node_files(tmp: Path) -> Path:
    """Sixteen 300 MB files (sparse) in one node folder: cut at 32 MiB each they were 512 MiB
    held at once; the node's files share a budget."""
    bundle = _copy(tmp / "b")
    folder = bundle / NODE / "files" / "etc" / "big"
    folder.mkdir(parents=True)
    for i in range(16):
        with (folder / f"f{i}.conf").open("wb") as handle:
            handle.truncate(300_000_000)
    return bundle


CASES: dict[str, tuple[Callable[[Path], Path], tuple[int, ...]]] = {
    "large-json-list": (large_list, (0, 1)),
    "deep-nesting-node-files": (deep_node_files, (0, 1)),
    "deep-nesting-cluster-list": (deep_cluster_list, (2,)),
    "huge-line": (huge_line, (0, 1)),
    "many-tar-members": (many_members, (0, 1)),
    "big-node-files": (big_node_files, (0, 1)),
    "many-big-node-files": (many_big_node_files, (0, 1)),
    "too-many-members": (too_many_members, (2,)),
    "many-node-folders": (many_node_folders, (0, 1)),
    "tiny-items-in-every-list": (tiny_items, (2,)),
    "tiny-items-in-every-list-archive": (tiny_items_archive, (2,)),
    "tiny-items-in-small-lists": (tiny_items_in_small_lists, (2,)),
    "tiny-values-in-big-items": (tiny_values_in_big_items, (2,)),
    "tiny-items-up-to-the-file-limit": (tiny_items_up_to_the_file_limit, (2,)),
    "huge-strings": (huge_strings, (0, 1)),
    "deep-item-in-large-list": (deep_item_in_large_list, (0, 1, 2)),
    "big-log": (big_log, (0, 1)),
    "big-log-archive": (big_log_archive, (0, 1)),
    "short-line-logs": (short_line_logs, (0, 1)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_hostile_input_stays_within_512_mib(case: str, tmp_path: Path) -> None:
    build, exits = CASES[case]
    path = build(tmp_path)
    proc, peak = peak_run("diagnose", "--from", str(path), "-o", "json")
    print(f"{case}: exit {proc.returncode}, peak {peak} MiB")
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode in exits, proc.stderr[-2000:]
    if proc.returncode == 2:
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 2, proc.stderr  # one line, then the peak
        assert str(path) in lines[0], lines[0]  # naming the file (or the archive)
    else:
        assert json.loads(proc.stdout)["nodes"]
    assert peak <= LIMIT_MIB, f"{case}: peak {peak} MiB"


def test_explain_on_a_huge_line_stays_within_512_mib(tmp_path: Path) -> None:
    bundle = huge_line(tmp_path)
    proc, peak = peak_run("explain", str(bundle / LOG))
    assert "Traceback" not in proc.stderr and proc.returncode in (0, 1), proc.stderr[-2000:]
    assert "gpu_fallen_off_bus" in proc.stdout  # the signature at the start of the line is found
    assert peak <= LIMIT_MIB, f"explain: peak {peak} MiB"
