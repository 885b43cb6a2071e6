"""``gpunode validate`` on the command line: exit codes, formats, --output-dir, live mode."""

from __future__ import annotations

import json
import socket
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from fake_workloads import serve_with_workloads
from vhelpers import edit_items

from gpunode.cli import main


def cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["gpunode", "validate", *args])
    with pytest.raises(SystemExit) as stop:
        main()
    out, err = capsys.readouterr()
    return int(stop.value.code or 0), out, err


@pytest.fixture
def single_control_plane(falcon: Path) -> Path:
    """Healthy except for a warning: one control-plane node."""
    edit_items(
        falcon, "nodes", lambda ns: [n for n in ns if n["metadata"]["name"] not in ("mgmt-02", "mgmt-03")]
    )
    return falcon


def test_healthy_bundle_is_ready_exit_0(falcon_healthy: Path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = cli(capsys, monkeypatch, "--from", str(falcon_healthy))
    assert code == 0
    assert "Verdict: Ready" in out and "gpu.stack-diagnosis" in out


def test_json_report(falcon_healthy: Path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = cli(capsys, monkeypatch, "--from", str(falcon_healthy), "-o", "json")
    report = json.loads(out)
    assert code == 0 and report["schema"] == "gpunode.validate/v1" and report["verdict"] == "ready"
    assert [c["name"] for c in report["categories"]] == [
        "infrastructure",
        "gpu-health",
        "network",
        "storage",
        "scheduling",
        "observability",
    ]
    first = report["categories"][0]["checks"][0]
    assert {"id", "category", "title", "verdict", "summary", "evidence", "fix"} <= set(first)


def test_warnings_exit_0_unless_fail_on_warn(single_control_plane: Path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = cli(capsys, monkeypatch, "--from", str(single_control_plane))
    assert code == 0 and "Ready with warnings" in out
    code, _, _ = cli(capsys, monkeypatch, "--from", str(single_control_plane), "--fail-on", "warn")
    assert code == 1


def test_junit_one_suite_per_category_one_case_per_check(
    single_control_plane: Path, capsys, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = cli(
        capsys, monkeypatch, "--from", str(single_control_plane), "-o", "junit", "--fail-on", "warn"
    )
    root = ET.fromstring(out)
    suites = root.findall("testsuite")
    assert code == 1 and [s.get("name") for s in suites][:2] == ["infrastructure", "gpu-health"]
    assert len(suites) == 6
    cases = {c.get("name", "").split(":")[0]: c for s in suites for c in s.findall("testcase")}
    failure = cases["infra.control-plane-ha"].find("failure")
    assert failure is not None and failure.get("type") == "warn" and "only 1" in failure.get("message", "")
    assert cases["infra.api-reachable"].find("skipped") is not None
    assert root.get("failures") == "1" and int(root.get("tests", "0")) == len(cases)


def test_junit_warning_passes_under_fail_on_fail(single_control_plane: Path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _, out, _ = cli(capsys, monkeypatch, "--from", str(single_control_plane), "-o", "junit")
    case = next(
        c
        for c in ET.fromstring(out).iter("testcase")
        if c.get("name", "").startswith("infra.control-plane-ha")
    )
    assert case.find("failure") is None and "WARN: only 1" in (case.findtext("system-out") or "")


def test_failure_exit_1_and_markdown(falcon: Path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    edit_items(falcon, "storageclasses", lambda classes: [])
    code, out, _ = cli(capsys, monkeypatch, "--from", str(falcon), "-o", "markdown")
    assert code == 1
    assert "**Verdict: Not ready**" in out and "### `storage.default-class`" in out and "Fix: " in out


def test_category_filter(falcon_healthy: Path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _, out, _ = cli(capsys, monkeypatch, "--from", str(falcon_healthy), "--category", "storage", "-o", "json")
    report = json.loads(out)
    assert [c["name"] for c in report["categories"]] == ["storage"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--category", "gpus"], "unknown category gpus"),
        (["--active"], "--active runs pods on a live cluster"),
        (["--expect-gpus", "0"], "--expect-gpus must be at least 1"),
    ],
)
def test_bad_usage_is_one_line_exit_2(
    falcon_healthy: Path, capsys, monkeypatch, args: list[str], message: str
) -> None:  # type: ignore[no-untyped-def]
    code, _, err = cli(capsys, monkeypatch, "--from", str(falcon_healthy), *args)
    assert code == 2 and message in err and err.count("\n") == 1


def test_missing_bundle_exit_2(tmp_path: Path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    code, _, err = cli(capsys, monkeypatch, "--from", str(tmp_path / "nope"))
    assert code == 2 and "no such bundle" in err


def test_output_dir_has_every_format_and_the_bundle(
    falcon_healthy: Path, tmp_path: Path, capsys, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    out_dir = tmp_path / "out"
    code, _, _ = cli(capsys, monkeypatch, "--from", str(falcon_healthy), "--output-dir", str(out_dir))
    assert code == 0
    names = {p.name for p in out_dir.iterdir()}
    formats = {"validate.txt", "validate.json", "validate.md", "validate.junit.xml", "report.html"}
    assert names == {*formats, "bundle"}
    assert 'id="validate"' in (out_dir / "report.html").read_text()
    assert json.loads((out_dir / "validate.json").read_text())["verdict"] == "ready"
    assert ET.parse(out_dir / "validate.junit.xml").getroot().tag == "testsuites"
    assert (out_dir / "bundle/manifest.json").read_bytes() == (falcon_healthy / "manifest.json").read_bytes()
    assert (out_dir / "bundle/cluster/nodes.json").read_bytes() == (
        falcon_healthy / "cluster/nodes.json"
    ).read_bytes()


def test_list_checks_names_passive_and_active(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = cli(capsys, monkeypatch, "--list-checks")
    assert code == 0
    assert "infra.kubelet-skew" in out and "gpu.workload-smoke" in out and "active" in out


def test_live_cluster_with_active_checks(falcon_healthy: Path, tmp_path: Path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    with serve_with_workloads(falcon_healthy) as server:
        kubeconfig = str(server.running.kubeconfig_path)
        args = [
            "--kubeconfig",
            kubeconfig,
            "--active",
            "--timeout",  # the pods' wait and, given, the whole run's deadline: room on a busy machine
            "60",
            "--scrape-interval",
            "0",
            "-q",
            "-o",
            "json",
        ]
        code, out, err = cli(capsys, monkeypatch, *args, "--output-dir", str(tmp_path / "out"))
        left = server.overlay.our_objects()
    report = json.loads(out)
    checks = {c["id"]: c for cat in report["categories"] for c in cat["checks"]}
    not_passing = {k: v["verdict"] for k, v in checks.items() if v["verdict"] != "pass"}
    assert code == 0, err
    # the test server listens on loopback: whether the API is load-balanced cannot be told
    assert not_passing == {"infra.api-load-balanced": "unknown"}
    assert report["source"]["kind"] == "live"
    assert checks["infra.api-reachable"]["verdict"] == "pass"
    assert "values moving" in checks["obs.dcgm-exporter"]["summary"]
    assert checks["gpu.workload-smoke"]["active"] and checks["storage.pvc-write"]["verdict"] == "pass"
    assert left == []
    manifest = json.loads((tmp_path / "out/bundle/manifest.json").read_text())
    # A readiness checklist fetches every GPU node's evidence without being asked (--deep).
    assert manifest["extras_policy"] == "deep"
    assert sorted(manifest["extras_nodes"]) == ["gpu-wk-01", "gpu-wk-02"]


def test_live_lists_first_leaves_healthy_nodes_unvisited(  # type: ignore[no-untyped-def]
    falcon_healthy: Path, tmp_path: Path, capsys, monkeypatch
) -> None:
    sys.path.insert(0, str(Path(__file__).parents[1] / "live" / "fixtures"))
    from fleet import Fleet, build

    # single-GPU nodes without RDMA: the lists settle them (no links only node files show);
    # the hand-built fleet has no logging agent and GFD labels of its own: some checks fail
    fleet = build(tmp_path / "fleet", Fleet(3))
    with serve_with_workloads(fleet) as server:
        kubeconfig = str(server.running.kubeconfig_path)
        args = ["--kubeconfig", kubeconfig, "--lists-first", "--scrape-interval", "0", "-q", "-o", "json"]
        code, out, err = cli(capsys, monkeypatch, *args, "--output-dir", str(tmp_path / "out"))
        both, _, both_err = cli(capsys, monkeypatch, "--kubeconfig", kubeconfig, "--lists-first", "--deep")
    manifest = json.loads((tmp_path / "out/bundle/manifest.json").read_text())
    assert manifest["extras_policy"] == "suspect" and manifest["extras_nodes"] == []
    report = json.loads(out)
    verdicts = {c["verdict"] for cat in report["categories"] for c in cat["checks"]}
    assert "unknown" in verdicts, (code, err)  # what reads node files, for the nodes not visited
    assert both == 2 and "--lists-first" in both_err and len(both_err.strip().splitlines()) == 1
    # falcon-ai's 8-GPU RDMA nodes are read for their links, which no list shows
    with serve_with_workloads(falcon_healthy) as server:
        args = ["--kubeconfig", str(server.running.kubeconfig_path), "--lists-first",
                "--scrape-interval", "0", "-q", "-o", "json", "--output-dir", str(tmp_path / "falcon")]
        code, out, err = cli(capsys, monkeypatch, *args)
    reasons = json.loads((tmp_path / "falcon/bundle/manifest.json").read_text())["extras_reasons"]
    assert sorted(reasons) == ["gpu-wk-01", "gpu-wk-02"], reasons
    assert all(why.startswith("links only its node files show") for why in reasons.values()), reasons
    assert code == 0, err


def test_unreachable_cluster_exit_3(tmp_path: Path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # The port stays bound, never listening, for the whole test: connections to it are refused,
    # and no other test's fake API server can take it meanwhile (released first, one did).
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        _expect_unreachable(tmp_path, port, capsys, monkeypatch)


def _expect_unreachable(tmp_path: Path, port: int, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "c",
                "cluster": {"server": f"https://127.0.0.1:{port}", "insecure-skip-tls-verify": True},
            }
        ],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "c",
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    code, _, err = cli(capsys, monkeypatch, "--kubeconfig", str(path), "-q")
    assert code == 3 and "cannot reach" in err


def test_tarball_bundle_is_judged_and_copied(
    falcon_healthy: Path, tmp_path: Path, capsys, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    import tarfile

    archive = tmp_path / "falcon.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(falcon_healthy, arcname="falcon-bundle")
    code, out, _ = cli(
        capsys, monkeypatch, "--from", str(archive), "-o", "json", "--output-dir", str(tmp_path / "o")
    )
    assert code == 0 and json.loads(out)["verdict"] == "ready"
    assert (tmp_path / "o/bundle.tar.gz").read_bytes() == archive.read_bytes()


def test_bundle_for_passive_checks_and_live_cluster_for_active(
    falcon_healthy: Path, capsys, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    with serve_with_workloads(falcon_healthy) as server:
        args = ["--from", str(falcon_healthy), "--kubeconfig", str(server.running.kubeconfig_path)]
        code, out, _ = cli(capsys, monkeypatch, *args, "--active", "--category", "storage", "-o", "json")
    report = json.loads(out)
    checks = {c["id"]: c for cat in report["categories"] for c in cat["checks"]}
    assert code == 0 and report["source"]["kind"] == "sim"
    assert checks["storage.pvc-write"]["active"] and checks["storage.pvc-write"]["verdict"] == "pass"
    assert "gpu.workload-smoke" not in checks  # outside the chosen category
