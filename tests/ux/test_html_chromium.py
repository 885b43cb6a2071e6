"""The HTML report rendered by headless Chromium: the demo report and a 500-node fleet.

Screenshots are kept as build artefacts under out/screenshots/ (git-ignored). Without
a browser (`make test` installs Debian's chromium when it can) these tests are skipped
with a loud reason rather than passing silently.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from fleetgen import fleet_report

from gpunode.report.html import render_html

ROOT = Path(__file__).parents[2]
SHOTS = ROOT / "out" / "screenshots"
BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
GPUNODE = str(Path(sys.executable).parent / "gpunode")

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    BROWSER is None,
    reason="!!! HTML REPORT NOT RENDERED: chromium is not installed (apt-get install -y chromium) !!!",
)]


def chromium(*args: str) -> subprocess.CompletedProcess[str]:
    """One headless run with a profile (a HOME) of its own: browsers that parallel test
    workers start at once never share one."""
    assert BROWSER is not None
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run"]
    with tempfile.TemporaryDirectory(prefix="chromium-home-") as home:
        return subprocess.run([BROWSER, *flags, *args], capture_output=True, text=True, timeout=120,
                              check=False, env={**os.environ, "HOME": home})


def render(page: Path, shot: Path) -> str:
    """Screenshot the page, then dump its DOM after the scripts ran; returns the DOM."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot.unlink(missing_ok=True)
    proc = chromium("--window-size=1400,1800", f"--screenshot={shot}", page.as_uri())
    assert shot.is_file() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", proc.stderr[-2000:]
    assert shot.stat().st_size > 20_000  # a blank page is a few kB
    dom = chromium("--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    return dom.stdout


def render_ms(dom: str) -> int:
    """Milliseconds from navigation start until the page's script finished (filters, arrows)."""
    match = re.search(r'data-render-ms="(\d+)"', dom)
    assert match, "the page script did not run"
    return int(match.group(1))


def test_demo_report_in_chromium(tmp_path: Path) -> None:
    page = SHOTS / "demo.html"
    SHOTS.mkdir(parents=True, exist_ok=True)
    with page.open("w") as handle:
        proc = subprocess.run([GPUNODE, "demo", "-o", "html"], stdout=handle, text=True, check=False)
    assert proc.returncode == 1
    text = page.read_text()
    assert not re.search(r'(src|href)="(https?:)?//', text), "the report must not load external assets"
    dom = render(page, SHOTS / "demo.png")
    article = re.search(
        r'<article class="rc s-failed"[^>]*data-cause="kernel_headers_missing".*?</article>', dom, re.S
    )
    assert article and 'data-nodes="gpu-wk-02"' in article.group(0)
    assert "Could not resolve Linux kernel version" in article.group(0)
    # seven components blocked by the driver on gpu-wk-02, each listing it (no lines drawn)
    assert dom.count('<li><a href="#gpu-wk-02--driver">driver</a></li>') == 7
    assert "<svg" not in dom and 'class="arrow"' not in dom
    assert 'id="gpu-wk-02--driver"' in dom and "7 nodes shown" not in dom and "2 nodes shown" in dom
    assert render_ms(dom) < 2000


def test_pointing_at_a_component_lights_up_its_blockers_and_what_it_blocks(tmp_path: Path) -> None:
    page = tmp_path / "hover.html"
    html = subprocess.run([GPUNODE, "demo", "-o", "html"], capture_output=True, text=True, check=False).stdout
    over = ("<script>document.getElementById('gpu-wk-02--driver').dispatchEvent("
            "new MouseEvent('mouseover', {bubbles: true}));</script></body>")
    page.write_text(html.replace("</body>", over))
    dom = chromium("--dump-dom", page.as_uri()).stdout
    lit = re.findall(r'<div class="comp [^"]*\bhl-blocked\b[^"]*" id="([^"]+)"', dom)
    assert len(lit) == 7 and all(i.startswith("gpu-wk-02--") for i in lit), lit
    assert re.search(r'<div class="comp [^"]*\bhl-self\b[^"]*" id="gpu-wk-02--driver"', dom)
    below = html.replace("</body>", over.replace("gpu-wk-02--driver", "gpu-wk-02--device-plugin"))
    page.write_text(below)
    dom = chromium("--dump-dom", page.as_uri()).stdout
    assert re.search(r'<div class="comp [^"]*\bhl-blocker\b[^"]*" id="gpu-wk-02--driver"', dom)


def test_fleet_of_500_nodes_in_chromium(tmp_path: Path) -> None:
    report = fleet_report(500, tmp_path)
    page = SHOTS / "fleet-500.html"
    started = time.perf_counter()
    page.write_text(render_html(report))
    assert time.perf_counter() - started < 10
    dom = render(page, SHOTS / "fleet-500.png")
    causes = re.findall(r'<article class="rc [^"]*"[^>]*data-cause="([a-z_0-9]+)"', dom)
    assert causes == ["gpu_fallen_off_bus", "kernel_headers_missing", "device_plugin_zero_gpus"]
    assert dom.count('class="fleet-row') == 3 and "40 nodes" in dom and "500 nodes shown" in dom
    assert dom.count('class="node s-') == 500
    assert render_ms(dom) < 2000


def test_validate_html_has_six_categories(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    subprocess.run([GPUNODE, "sim", "falcon-ai-broken", "-o", str(bundle)], check=True, capture_output=True)
    out = tmp_path / "validate-out"
    proc = subprocess.run(
        [GPUNODE, "validate", "--from", str(bundle), "--output-dir", str(out), "-q"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    page = SHOTS / "validate.html"
    shutil.copy(out / "report.html", page)
    dom = render(page, SHOTS / "validate.png")
    assert dom.index('id="validate"') < dom.index('id="fleet"')  # the readiness table leads
    section = dom[dom.index('id="validate"') :]
    for category in ("infrastructure", "gpu-health", "network", "storage", "scheduling", "observability"):
        assert f"<td>{category}</td>" in section
    assert 'data-cause="kernel_headers_missing"' in dom
