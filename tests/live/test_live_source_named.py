"""No temporary paths in headers (issue 22, item 6): a live ``validate`` names the cluster and
context it read in every format, never the temporary bundle it collected into, through the
command line (its ``main`` in this process, tests/inprocess.py) against the test API server."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

from gpunode.apiserver import RunningServer
from inprocess import run_cli


def validate(server: RunningServer, *args: str) -> str:
    ran = run_cli("validate", "--kubeconfig", str(server.kubeconfig_path), "-q", "--scrape-interval", "0",
                  *args, env={**os.environ, "COLUMNS": "200"})
    assert ran.returncode in (0, 1), ran.stderr
    return ran.stdout


@pytest.mark.parametrize("output", ["table", "markdown", "junit", "html"])
def test_live_validate_names_the_cluster(mini_server: RunningServer, output: str) -> None:
    out = validate(mini_server, "-o", output)
    assert "gpunode-validate-" not in out and "/tmp/" not in out and tempfile.gettempdir() not in out
    if output in ("table", "html"):
        assert "cluster (context " in out


def test_live_validate_json_source(mini_server: RunningServer, tmp_path: Path) -> None:
    source = json.loads(validate(mini_server, "-o", "json"))["source"]
    assert source["location"].startswith("cluster (context ") and source["path"] is None
    kept = json.loads(validate(mini_server, "-o", "json", "--output-dir", str(tmp_path / "o")))["source"]
    assert kept["path"] == str(tmp_path / "o" / "bundle") and (tmp_path / "o" / "bundle").is_dir()
