"""The bounded reader and the bounded YAML loader (issue 23, item 2): what they keep, what
they refuse, and that a refusal is one line naming the input."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
import yaml

from gpunode import bounded
from gpunode.boundedyaml import YamlRefused
from gpunode.limits import MAX_YAML_DEPTH, bounded_yaml

SAME_AS_SAFE_LOAD = [
    "a: 1",
    "- a\n- 'b'\n- 2.5\n- null\n- true\n- 2024-01-01\n- 0o17\n- 0x1f\n- .inf\n- ~",
    "a: &x {b: 1}\nc: *x\nd:\n  <<: *x\n  e: 2",
    "m:\n  <<: [{a: 1}, {a: 2, b: 3}]\n  c: 4",
    "",
    "x: !!str 12\ny: !!binary aGVsbG8=\nz: !!int '7'",
    "s: |\n  multi\n  line\nt: >\n  folded\n  text\n",
    "creationTimestamp: 2024-05-01T10:00:00Z\nquoted: '2024-05-01T10:00:00Z'",
    "apiVersion: v1\nkind: List\nitems:\n- metadata: {name: a, labels: {x: 'y'}}\n"
    "  spec: {containers: [{name: c}]}",
]


@pytest.mark.parametrize("text", SAME_AS_SAFE_LOAD)
def test_values_are_what_safe_load_gives(text: str) -> None:
    assert repr(bounded_yaml(text, "t.yaml")) == repr(yaml.safe_load(text))


def test_aliases_share_the_object_they_name() -> None:
    doc = bounded_yaml("a: &x [1, 2]\nb: *x\n", "t.yaml")
    assert doc["a"] is doc["b"]


def _alias_bomb(levels: int = 9) -> str:
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


HOSTILE = {
    "alias bomb": (_alias_bomb(), "an alias bomb?"),
    "100,000 nested flow sequences": ("a: " + "[" * 100_000 + "]" * 100_000, "levels deep"),
    "100,000 nested flow mappings": ("a: " + "{a: " * 100_000 + "1" + "}" * 100_000, "levels deep"),
    "100,000 nested block sequences on one line": ("- " * 100_000 + "x\n", "levels deep"),
    "depth reached through an alias": (
        "a: &a " + "[" * 200 + "]" * 200 + "\nb: " + "[" * 100 + "*a" + "]" * 100, "once its aliases"),
    "an alias inside its own anchor": ("a: &a [1, *a]", "recursive"),
    "an alias to nothing": ("a: *nowhere", "names no anchor"),
    "an unknown tag": ("a: !python/object:os.system x", "unsupported YAML tag"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_yaml_is_refused_in_one_line_naming_the_file(name: str) -> None:
    text, words = HOSTILE[name]
    with pytest.raises(YamlRefused) as refused:
        bounded_yaml(text, "cluster_policy.yaml")
    message = str(refused.value)
    assert message.startswith("cluster_policy.yaml: ") and words in message
    assert "\n" not in message


def test_nesting_up_to_the_limit_loads() -> None:
    depth = MAX_YAML_DEPTH - 1
    doc = bounded_yaml("[" * depth + "1" + "]" * depth, "t.yaml")
    for _ in range(depth):
        doc = doc[0]
    assert doc == 1


def test_a_second_document_is_an_error_as_with_safe_load() -> None:
    with pytest.raises(yaml.YAMLError):
        bounded_yaml("a: 1\n---\nb: 2\n", "t.yaml")
    with pytest.raises(yaml.YAMLError):
        yaml.safe_load("a: 1\n---\nb: 2\n")


def test_capped_keeps_its_limit_and_names_the_cut() -> None:
    capped = bounded.Capped(10, "the answer to GET /metrics")
    assert capped.add(b"12345")
    assert not capped.add(b"6789012345")
    assert capped.cut and capped.value() == b"1234567890"
    assert capped.note() == "the answer to GET /metrics: cut at 10 bytes (its limit, docs/limits.md)"


def test_an_empty_chunk_at_the_limit_is_not_the_end() -> None:
    """Found by fuzzing: a reader full to its limit that was given an empty chunk stopped
    there and called the body whole; an empty chunk says nothing, the next one decides."""
    capped = bounded.Capped(1, "body")
    assert capped.add(b"x") and capped.add(b"")
    assert not capped.add(b"y") and capped.cut


def test_a_shared_pool_cuts_readers_that_find_it_empty() -> None:
    pool = bounded.BytePool(8)
    first, second = bounded.Capped(100, "a", pool), bounded.Capped(100, "b", pool)
    assert first.add(b"123456")
    assert not second.add(b"123")  # 6 + 3 > 8
    assert second.cut and "were being read at once" in second.note()
    first.release()
    assert pool.used == 0


def test_run_capped_stops_an_endless_command_at_its_limit() -> None:
    endless = [sys.executable, "-c", "import sys\nwhile True: sys.stdout.buffer.write(b'x' * 65536)"]
    ran = bounded.run_capped(endless, timeout=20, max_bytes=1 << 20, what="dmesg")
    assert len(ran.stdout) == 1 << 20
    assert ran.cut == "dmesg: cut at 1 MiB (its limit, docs/limits.md)"


def test_run_capped_keeps_stderr_and_the_exit_code() -> None:
    ran = bounded.run_capped([sys.executable, "-c", "import sys; print('out'); "
                              "print('err', file=sys.stderr); sys.exit(3)"],
                             timeout=20, max_bytes=1024)
    assert (ran.returncode, ran.stdout, ran.stderr, ran.cut) == (3, b"out\n", b"err\n", "")


def test_run_capped_kills_a_command_past_its_time() -> None:
    with pytest.raises(bounded.subprocess.TimeoutExpired):
        bounded.run_capped([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5,
                           max_bytes=1024)


def test_tail_lines_reads_only_the_end_and_cuts_long_lines(tmp_path: Path) -> None:
    log = tmp_path / "pod.log"
    log.write_bytes(b"old line\n" * 1000 + b"y" * 5000 + b"\nlast\n")
    lines, skipped = bounded.tail_lines(log, 6000, 100)
    kept = list(lines)
    assert skipped
    assert kept[-1] == b"last\n" and kept[-2] == b"y" * 100 + b"\n"
    assert all(len(line) <= 101 for line in kept)


def test_capped_lines_holds_one_piece_of_a_long_line() -> None:
    stream = io.BytesIO(b"a" * 10_000_000 + b"\nb\n")
    assert [len(line) for line in bounded.capped_lines(stream, 1000)] == [1001, 2]


def test_read_whole_refuses_a_file_past_its_limit_and_special_files(tmp_path: Path) -> None:
    big = tmp_path / "kubeconfig"
    big.write_bytes(b"x" * 101)
    with pytest.raises(bounded.TooLarge, match="larger than 100 bytes, the limit for a kubeconfig"):
        bounded.read_whole(big, 100, "a kubeconfig")
    assert bounded.read_whole(big, 101, "a kubeconfig") == b"x" * 101
    with pytest.raises(bounded.TooLarge, match="not a regular file"):
        bounded.read_whole(Path("/dev/zero"), 100, "a kubeconfig")


def test_held_output_counts_against_the_pool_until_its_job_releases_it() -> None:
    """An exec output read whole stays in the pool while its job stores it: a reader that
    finishes cannot hand its whole limit back and keep holding it (the endless exec case)."""
    pool = bounded.BytePool(100)
    first = bounded.Capped(80, "the output of dmesg", pool)
    assert first.add(b"x" * 60)
    assert first.held() == b"x" * 60
    first.release()  # the reader's own clean-up: its share was handed to the job
    assert pool.used == 60
    second = bounded.Capped(80, "the output of nvidia-smi", pool)
    assert not second.add(b"y" * 50) and second.pool_dry
    bounded.release_held()
    assert pool.used == 0
    assert second.add(b"y" * 50)
    second.release()
