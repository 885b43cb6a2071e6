"""Start-up: which heavy modules each command leaves unloaded (timings are in bench/README.md,
never here): offline commands load no HTTP or Kubernetes client, nothing loads pydantic, and
``--help`` and ``probe`` load only what they use."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CLIENTS = {"lightkube", "httpx", "httpx2", "httpcore", "httpcore2", "wsproto", "prometheus_client"}
# typer 0.2x converts option values through pydantic; gpunode converts its own (gpunode.cliparams).
PYDANTIC = {"pydantic", "pydantic_core"}
PROBE = """
import contextlib, io, sys
sys.argv = ["gpunode", *sys.argv[1:]]
from gpunode.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    main()
print(" ".join(sorted(sys.modules)))
"""


def loaded(*args: str) -> set[str]:
    """Every module ``gpunode ARGS`` has imported by the time it exits (run in a fresh interpreter)."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stderr[-1000:]
    return set(proc.stdout.split())


def imported(*args: str) -> set[str]:
    """The top-level packages of ``loaded``."""
    return {m.split(".")[0] for m in loaded(*args)}


def under(modules: set[str], *prefixes: str) -> set[str]:
    return {m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)}


@pytest.fixture(scope="module")
def gpu_host(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("host")
    device = root / "sys/bus/pci/devices/0000:9a:00.0"
    device.mkdir(parents=True)
    (device / "vendor").write_text("0x10de\n")
    return root


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ("--help",),
        ("diagnose", "--help"),
        ("demo",),
        ("diagnose", "--from", "{handmade}"),
        ("stack", "--from", "{handmade}", "-o", "json"),
        ("validate", "--from", "{handmade}"),
        ("probe", "--host-root", "{host}"),
        ("causes",),
        ("version", "--client"),
    ],
)
def test_offline_commands_import_no_http_or_kubernetes_client(
    args: tuple[str, ...], handmade: Path, gpu_host: Path
) -> None:
    argv = [a.format(handmade=handmade, host=gpu_host) for a in args]
    assert imported(*argv) & CLIENTS == set()


def test_help_loads_no_engine_reader_or_parser_library() -> None:
    mods = loaded("--help")
    assert {m.split(".")[0] for m in mods} & (CLIENTS | PYDANTIC | {"yaml", "re2", "pynvml"}) == set()
    engine = ("gpunode.diagnose", "gpunode.bundle", "gpunode.checks", "gpunode.kb", "gpunode.probe",
              "gpunode.report", "gpunode.collect", "gpunode.catalog")
    assert under(mods, *engine) == set()


def test_probe_on_a_gpu_host_loads_only_what_judging_one_node_needs(gpu_host: Path) -> None:
    """``probe -o json``: NVML, the host readers and the node's judgement; no option parser
    library, no terminal renderer, no YAML (the host has no YAML CDI spec), no package metadata
    scan, nothing of live collection, validation, simulation or the other reporters."""
    mods = loaded("probe", "--host-root", str(gpu_host), "-o", "json")
    assert "gpunode.probe.nvml" in mods and "gpunode.diagnose" in mods  # it did probe and judge
    tops = {m.split(".")[0] for m in mods}
    assert tops & (CLIENTS | PYDANTIC | {"rich", "yaml", "cryptography"}) == set()
    assert mods & {"importlib.metadata", "logging", "multiprocessing", "concurrent.futures"} == set()
    assert under(mods, "gpunode.collect", "gpunode.apiserver", "gpunode.sim", "gpunode.agent",
                 "gpunode.report.table", "gpunode.report.html", "gpunode.report.markdown",
                 "gpunode.validate.checks") == set()


@pytest.mark.parametrize("args", [("diagnose", "--from", "{handmade}"), ("diagnose", "--from", "{handmade}",
                                                                            "-o", "json", "--interval", "5")])
def test_offline_diagnose_converts_options_without_pydantic(args: tuple[str, ...], handmade: Path) -> None:
    assert imported(*[a.format(handmade=handmade) for a in args]) & PYDANTIC == set()


def test_live_commands_do_load_the_client() -> None:
    """The check above can fail: a live command's import of the client is seen."""
    mods = imported("collect", "-d", "/nonexistent/b", "--kubeconfig", "/nonexistent/k")
    assert "lightkube" in mods
    assert mods >= PYDANTIC  # a ranged option (--concurrency, min 1) is still typer's to convert
