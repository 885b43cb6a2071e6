"""Live evidence opens as the kubectl command that shows it (issue 22, item 6): a live
``validate`` (the command line's ``main`` in this process, tests/inprocess.py: its exit code
and JSON are what is read) against the test API server, in JSON (both reports' evidence) and
in the table."""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterator

from gpunode.apiserver import RunningServer
from inprocess import run_cli

OPENS = re.compile(
    r"^(kubectl (logs|describe|get|debug|cluster-info|version|config view)\b|gpunode diagnose\b)"
)


def _evidence(value: object) -> Iterator[dict[str, str | None]]:
    if isinstance(value, dict):
        if {"source", "excerpt"} <= value.keys():
            yield value
        for item in value.values():
            yield from _evidence(item)
    elif isinstance(value, list):
        for item in value:
            yield from _evidence(item)


def test_live_validate_evidence_is_a_kubectl_command(mini_server: RunningServer) -> None:
    ran = run_cli("validate", "--kubeconfig", str(mini_server.kubeconfig_path), "-q",
                  "--scrape-interval", "0", "-o", "json", env={**os.environ, "COLUMNS": "200"})
    assert ran.returncode in (0, 1), ran.stderr
    found = list(_evidence(json.loads(ran.stdout)))
    assert found
    for ev in found:
        assert ev["open"] is not None and OPENS.match(ev["open"]), ev
        assert "/tmp/" not in ev["open"] and tempfile.gettempdir() not in ev["open"]
