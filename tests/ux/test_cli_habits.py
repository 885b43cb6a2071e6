"""kubectl habits: selectors, -o wide/yaml, watch, version, completion, python -m gpunode, help
without <bool>. What a command prints and the code it exits with are asked of the command line
in this process (``cli``, tests/inprocess.py); the console script itself runs every command and
the live ones end to end (the slow tests)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from inprocess import run_cli

GPUNODE = str(Path(sys.executable).parent / "gpunode")


def gpunode(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [GPUNODE, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "COLUMNS": "80", **(env or {})},
    )


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``gpunode ARGS`` in this process, in the environment ``gpunode`` gives the console script:
    for the tests of what a command prints and the code it exits with (the console script
    itself: ``test_every_command_through_the_console_script`` and the live one below)."""
    return run_cli(*args, env={**os.environ, "COLUMNS": "80", **(env or {})})


def test_help_has_no_bool_metavar() -> None:
    for command in ("diagnose", "demo", "validate", "probe", "collect"):
        proc = cli(command, "--help")
        assert proc.returncode == 0 and "--help" in proc.stdout
        assert "<bool>" not in proc.stdout, command


def test_help_shows_repeatable_values_as_items_not_python_lists() -> None:
    repeatables = (("serve-bundle", "--forbid"), ("validate", "--category"), ("diagnose", "nodes..."))
    for command, repeatable in repeatables:
        proc = cli(command, "--help")
        assert proc.returncode == 0, command
        assert "<list[" not in proc.stdout, command
        line = next(line for line in proc.stdout.splitlines() if repeatable in line)
        assert "<str>..." in line, (command, line)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--interval", "abc"), "Invalid value for '--interval': 'abc' is not a number."),
        (("--count", "1.5"), "Invalid value for '--count': '1.5' is not an integer."),
        (("-o", "jsn"), "Invalid value for '-o' / '--output': 'jsn' is not one of 'table', 'wide', 'json', "
                        "'yaml', 'markdown', 'html'."),
    ],
)
def test_a_bad_option_value_is_one_line_naming_the_option(
    handmade: Path, args: tuple[str, ...], message: str
) -> None:
    proc = cli("diagnose", "--from", str(handmade), *args)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", f"gpunode: {message}\n")


def test_option_values_are_converted_as_typer_would(handmade: Path) -> None:
    """Choices, paths, node lists, numbers and flags reach the command as typer would pass them."""
    proc = cli("diagnose", "gpu-a1", "--from", str(handmade), "-o", "json", "--interval", "2.5",
                   "--count", "3", "--all")
    assert proc.returncode == 1 and [n["name"] for n in json.loads(proc.stdout)["nodes"]] == ["gpu-a1"]
    assert cli("probe", "--host-root", "/nonexistent").stderr == (
        "gpunode: --host-root /nonexistent: no such directory\n"
    )


def test_python_dash_m_gpunode() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "gpunode", "--version"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0 and proc.stdout.startswith("gpunode ")


def test_version_client() -> None:
    from gpunode import __version__

    proc = cli("version", "--client")
    assert proc.returncode == 0 and proc.stdout == f"Client Version: gpunode {__version__}\n"
    data = json.loads(cli("version", "--client", "-o", "json").stdout)
    assert data == {"client": {"gpunode": __version__}}


def test_selector_and_node_args(handmade: Path) -> None:
    hit = cli(
        "diagnose", "--from", str(handmade), "-l", "kubernetes.io/hostname in (gpu-a1,x)", "-o", "json"
    )
    assert hit.returncode == 1 and [n["name"] for n in json.loads(hit.stdout)["nodes"]] == ["gpu-a1"]
    miss = cli(
        "stack", "--from", str(handmade), "--selector", "nvidia.com/gpu.present!=true,!kubernetes.io/hostname"
    )
    assert miss.returncode == 2 and "no node matches" in miss.stderr
    bad = cli("diagnose", "--from", str(handmade), "-l", "a in b")
    assert bad.returncode == 2 and "cannot parse" in bad.stderr and "Traceback" not in bad.stderr


def test_yaml_is_the_json_tree_and_names_its_source(handmade: Path) -> None:
    as_json = json.loads(cli("diagnose", "--from", str(handmade), "-o", "json").stdout)
    as_yaml = yaml.safe_load(cli("diagnose", "--from", str(handmade), "-o", "yaml").stdout)
    assert as_yaml == as_json
    assert as_json["source"]["path"] == str(handmade) and as_json["gpunode_version"]


def test_wide_lists_every_node(handmade: Path) -> None:
    proc = cli("diagnose", "--from", str(handmade), "-o", "wide")
    lines = proc.stdout.splitlines()
    head = next(x for x in lines if x.startswith("NODE"))
    assert head.split() == ["NODE", "GPUS", "COMPONENT", "LAYER", "CAUSE", "AGE", "SINCE", "BLOCKED"]
    first = lines[lines.index(head) + 1].split()
    assert proc.returncode == 1 and first[:2] == ["✗", "gpu-a1"] and first[3] == "driver"


def test_watch_shows_what_changed(tmp_path: Path, handmade: Path) -> None:
    bundle = tmp_path / "b"
    shutil.copytree(handmade, bundle)
    proc = cli("diagnose", "--from", str(bundle), "--watch", "--interval", "0", "--count", "2")
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.count("kernel_headers_missing  (L1") == 1
    assert proc.stdout.rstrip().splitlines()[-1] == "no change (1 root causes)"


def test_completion_scripts_and_node_names(handmade: Path) -> None:
    for shell in ("bash", "zsh", "fish"):
        proc = cli("completion", shell)
        assert proc.returncode == 0 and "_GPUNODE_COMPLETE" in proc.stdout, shell
    env = {
        "_GPUNODE_COMPLETE": "complete_bash",
        "COMP_WORDS": f"gpunode diagnose --from {handmade} gpu-",
        "COMP_CWORD": "4",
    }
    proc = cli(env=env)
    assert "gpu-a1" in proc.stdout.split()


def test_warnings_go_to_stderr_before_the_report(tmp_path: Path, handmade: Path) -> None:
    bundle = tmp_path / "b"
    shutil.copytree(handmade, bundle)
    manifest = {"format": "gpunode-bundle/v1", "source": "live", "warnings": ["logs: 403 forbidden"]}
    (bundle / "manifest.json").write_text(json.dumps(manifest))
    proc = cli("diagnose", "--from", str(bundle))
    assert proc.stderr.startswith("warning: logs: 403 forbidden")
    assert "403 forbidden" not in proc.stdout


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_stack_option_puts_root_cause_first(fmt: str) -> None:
    proc = cli("demo", "--stack", "-o", fmt)
    assert proc.returncode == 1
    assert proc.stdout.index("kernel_headers_missing") < proc.stdout.index(
        "fabric-manager  unknown" if fmt == "table" else "| 1 | fabric-manager"
    )


@pytest.mark.slow
def test_collect_refuses_a_format_word_after_dash_o(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # where a folder named json would be written
    proc = cli("collect", "-o", "json", "--kubeconfig", str(tmp_path / "none"))
    assert proc.returncode == 2 and "-d json" in proc.stderr
    assert not (tmp_path / "json").exists()
    neither = cli("collect")
    assert neither.returncode == 2 and "--output-dir" in neither.stderr


@pytest.mark.slow
def test_every_command_through_the_console_script(tmp_path: Path, handmade: Path) -> None:
    """Each command answers --help (asked of the command line in this process: the text is the
    same either way), and a real run of it through the console script has the expected shape
    and exit code."""
    from gpunode.cli import app

    names = sorted(c.name or c.callback.__name__ for c in app.registered_commands if c.callback)
    for name in names:
        proc = run_cli(name, "--help", env={**os.environ, "COLUMNS": "80"})
        assert proc.returncode == 0 and f"gpunode {name}" in proc.stdout, name
    runs = {
        ("sim", "falcon-ai", "-o", str(tmp_path / "ok")): (0, "wrote "),
        ("diagnose", "--from", str(tmp_path / "ok")): (0, "No root cause found on 2 GPU nodes."),
        ("stack", "--from", str(handmade), "-o", "markdown"): (1, "# GPU stack"),
        ("validate", "--from", str(tmp_path / "ok"), "-o", "json"): (0, '"verdict": "ready"'),
        ("explain", str(handmade / "logs")): (2, ""),
        ("causes", "--layer", "0", "-o", "json"): (0, '"code"'),
        ("version", "--client"): (0, "Client Version: gpunode"),
        ("completion", "fish"): (0, "complete"),
        ("collect", "-d", str(tmp_path / "b"), "--kubeconfig", str(tmp_path / "missing")): (2, ""),
        ("diagnose", "--kubeconfig", str(tmp_path / "missing")): (2, ""),
    }
    for args, (code, shape) in runs.items():
        proc = gpunode(*args)
        assert proc.returncode == code, (args, proc.stdout[-300:], proc.stderr[-300:])
        assert shape in proc.stdout, (args, proc.stdout[:300])
        assert "Traceback" not in proc.stderr
        if code == 2:
            assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("gpunode: "), proc.stderr


def test_validate_leads_with_verdict_and_failures_grouped_by_root_cause(tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    assert cli("sim", "falcon-ai-broken", "-o", str(bundle)).returncode == 0
    proc = cli("validate", "--from", str(bundle))
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("Verdict: Not ready (")
    headline = next(line for line in lines if "because" in line)
    assert headline.endswith("because driver kernel_headers_missing on gpu-wk-02:")
    # the readiness table leads (issue 22), then the failures under their root cause
    assert lines.index(headline) > next(i for i, line in enumerate(lines) if line.startswith("Categories"))
    assert not set(proc.stdout) & set("│┃━─╭╮╰╯")  # piped: no box drawing


@pytest.mark.slow
def test_validate_takes_node_names_and_selector(tmp_path: Path) -> None:
    """validate judges only the chosen nodes: gpu-wk-02 carries the failure, gpu-wk-01 does not."""
    bundle = tmp_path / "b"
    assert cli("sim", "falcon-ai-broken", "-o", str(bundle)).returncode == 0
    broken = cli("validate", "--from", str(bundle), "-l", "kubernetes.io/hostname=gpu-wk-02")
    assert broken.returncode == 1 and broken.stdout.startswith("Verdict: Not ready")
    healthy = cli("validate", "--from", str(bundle), "gpu-wk-01", "-o", "json")
    assert healthy.returncode == 0 and json.loads(healthy.stdout)["verdict"] != "not-ready"
    assert "gpu-wk-02" not in healthy.stdout
    unknown = cli("validate", "--from", str(bundle), "gpu-wk-99")
    assert unknown.returncode == 2 and "no node named gpu-wk-99" in unknown.stderr
    none = cli("validate", "--from", str(bundle), "gpu-wk-01", "-l", "kubernetes.io/hostname=gpu-wk-02")
    assert none.returncode == 2 and "no node matches" in none.stderr


@pytest.mark.slow
def test_live_and_node_commands_through_the_console_script(tmp_path: Path) -> None:
    """The commands the unit tests reach in-process, run as a user runs them: a scenario served
    by ``serve-bundle`` and read live by diagnose/stack/validate/collect/version (the context
    named in the header, ``--context`` and a ``KUBECONFIG`` list as kubectl reads them, the
    bundle's path in the JSON), ``serve-bundle`` cleaning up on SIGTERM,
    ``demo`` and ``python -m gpunode``, and ``probe`` on a host with and without an NVIDIA GPU."""
    import signal
    import time

    bundle, kubeconfig, temp = tmp_path / "falcon", tmp_path / "kubeconfig", tmp_path / "tmp"
    temp.mkdir()
    assert gpunode("sim", "falcon-ai-broken", "-o", str(bundle)).returncode == 0
    server = subprocess.Popen([GPUNODE, "serve-bundle", str(bundle), "--kubeconfig", str(kubeconfig)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "TMPDIR": str(temp)})
    try:
        deadline = time.monotonic() + 60
        while not kubeconfig.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        live = ("--kubeconfig", str(kubeconfig), "-q")
        diag = gpunode("diagnose", *live)
        assert diag.returncode == 1 and "context" in diag.stdout.splitlines()[0], diag.stdout[:300]
        assert "kernel_headers_missing" in diag.stdout and "Traceback" not in diag.stderr
        one = gpunode("stack", "gpu-wk-02", *live)
        assert one.returncode == 1 and "L1 hardware enablement" in one.stdout
        val = gpunode("validate", *live, "--scrape-interval", "0", "-o", "json")
        assert val.returncode == 1 and json.loads(val.stdout)["verdict"] == "not-ready"
        saved = gpunode("collect", "-d", str(tmp_path / "saved"), "--kubeconfig", str(kubeconfig), "-q")
        assert saved.returncode == 0 and (tmp_path / "saved" / "manifest.json").is_file(), saved.stderr
        version = gpunode("version", "--kubeconfig", str(kubeconfig))
        assert version.returncode == 0 and "Server Version" in version.stdout, version.stdout
        context = yaml.safe_load(kubeconfig.read_text())["current-context"]
        named = gpunode("diagnose", "--kubeconfig", str(kubeconfig), "--context", context, "-q", "-o", "json")
        assert named.returncode == 1 and json.loads(named.stdout)["source"]["context"] == context
        wrong = gpunode("diagnose", "--kubeconfig", str(kubeconfig), "--context", "no-such-context", "-q")
        assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1 and "no-such-context" in wrong.stderr
        merged = gpunode("stack", "-q", "-o", "json",
                         env={"KUBECONFIG": os.pathsep.join([str(tmp_path / "absent"), str(kubeconfig)])})
        assert merged.returncode == 1 and json.loads(merged.stdout)["source"]["context"] == context
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0
    assert list(temp.iterdir()) == []  # its certificate directory is gone
    again = gpunode("diagnose", "--from", str(tmp_path / "saved"), "-o", "json")
    assert again.returncode == 1 and json.loads(again.stdout)["source"]["path"] == str(tmp_path / "saved")

    demo = gpunode("demo")
    header = ["NODE", "GPUS", "COMPONENT", "CAUSE", "AGE", "BLOCKED"]  # the fleet summary comes first
    lines = [line.split() for line in demo.stdout.splitlines()]
    assert demo.returncode == 1 and header in lines and lines.index(header) < 6
    module = subprocess.run([sys.executable, "-m", "gpunode", "demo", "-o", "json"],
                            capture_output=True, text=True, timeout=120, check=False)
    assert module.returncode == 1 and json.loads(module.stdout)["schema"] == "gpunode.report/v1"

    for vendor, code, shape in (("0x8086", 0, "not a GPU node"), ("0x10de", 1, '"component": "driver"')):
        host = tmp_path / f"host-{vendor}"
        (host / "sys/bus/pci/devices/0000:00:02.0").mkdir(parents=True)
        (host / "sys/bus/pci/devices/0000:00:02.0/vendor").write_text(vendor + "\n")
        args = ("probe", "--host-root", str(host), *(("-o", "json") if code else ()))
        probe = gpunode(*args)
        assert (probe.returncode, shape in probe.stdout) == (code, True), (args, probe.stdout[:400])
