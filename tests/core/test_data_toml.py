"""``load_data_toml`` decodes what ``tomllib.loads`` decodes, value for value and error for error."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from gpunode.datatoml import _QUOTED, _as_literal, load_data_toml

_ROOT = Path(__file__).resolve().parents[2]


def _repo_toml() -> list[Path]:
    return sorted(p for folder in ("src", "tests") for p in (_ROOT / folder).rglob("*.toml"))


def test_every_toml_file_of_the_repository_decodes_the_same() -> None:
    files = _repo_toml()
    assert len(files) > 30
    for path in files:
        text = path.read_text("utf-8")
        try:
            expected = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            continue
        assert load_data_toml(text) == expected, path


def test_the_shipped_data_reads_most_strings_as_literal() -> None:
    text = (_ROOT / "src/gpunode/data/components.toml").read_text("utf-8")
    assert _QUOTED.sub(_as_literal, text).count('"') < text.count('"') / 2


@pytest.mark.parametrize("text", [
    'a = "plain"\nb = "it\'s"\nc = "tab\\there"\nd = ""\n',
    '"quoted key" = "v"\n[t."sub key"]\nx = ["a", "b", # "c"\n "d"]\n',
    '# a "comment" with \'quotes\'\na = "#not a comment"\nb = \'lit "x"\'\n',
    'a = """\nline "one"\n""two"" here\nend""""\nb = "after"\n',
    'a = """x \\""" y"""\nb = "z"\n',
    "a = '''\nsaid 'so' and ''twice''\n'''''\nb = \"after\"\n",
    'a = {x = "1", y = ["2", "3"]}\nb = 1979-05-27T07:32:00Z\nc = "é ü 字"\n',
    'a = "x" "y"\n',
    'a = "unterminated\n',
    'a = """never closed\n',
    'a = "ctl\x01"\n',
    '"a" = 1\n\'a\' = 2\n',
])
def test_tricky_documents_decode_the_same(text: str) -> None:
    try:
        expected = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        with pytest.raises(tomllib.TOMLDecodeError) as raised:
            load_data_toml(text)
        assert str(raised.value) == str(exc)
    else:
        assert load_data_toml(text) == expected
