"""The HTML report in a real browser (issue 52, item 9): a shipped study's report.html, opened in headless Chromium
at 1280 × 900, shows the summary and its figure (the answer as a picture) in the first viewport, and nothing on the
page fails to load or asks for anything outside the one file. Needs Debian's ``chromium`` package (.ci/run installs
it when missing and run as root); without it the test is skipped, naming the package."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1280,900", "--virtual-time-budget=15000", "--dump-dom"]
# added to a copy of the page: after load, where the summary and its first figure are, which images broke, what
# was fetched from outside the page, which errors were raised
PROBE = """<script>
window.__errors = [];
window.addEventListener('error',
  e => window.__errors.push(String(e.message || (e.target && (e.target.src || e.target.href)))), true);
window.addEventListener('load', () => {
  const h = [...document.querySelectorAll('h2')].find(x => x.textContent === 'Summary');
  let n = h ? h.nextElementSibling : null, fig = null;
  while (n && n.tagName !== 'H2' && !fig) {
    fig = n.tagName === 'FIGURE' ? n : n.querySelector('figure'); n = n.nextElementSibling; }
  const img = fig ? fig.querySelector('img') : null;
  const out = {viewport: innerHeight, summary: h ? h.getBoundingClientRect().top : null,
    figure: img ? img.getBoundingClientRect().top : null, width: img ? img.naturalWidth : 0,
    images: document.images.length, broken: [...document.images].filter(i => !i.complete || !i.naturalWidth).length,
    fetched: performance.getEntriesByType('resource').map(r => r.name).filter(u => !u.startsWith('data:')),
    errors: window.__errors};
  const pre = document.createElement('pre'); pre.id = 'probe'; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


@pytest.mark.slow  # a report of a shipped study (small committed run) and a browser start
def test_the_first_viewport_answers_with_the_summary_and_its_figure(tmp_path: Path):
    if BROWSER is None:
        pytest.skip("headless Chromium not found: install Debian's chromium package (apt-get install chromium)")
    from analysis.report import write_report

    page = write_report(ROOT / "tests" / "data" / "analysis_golden" / "huazhu", out=tmp_path / "report.html",
                        n_boot=0)
    probed = tmp_path / "probed.html"
    probed.write_text(page.read_text(encoding="utf-8").replace("<head>", "<head>" + PROBE, 1), encoding="utf-8")
    proc = subprocess.run([BROWSER, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", probed.as_uri()],
                          capture_output=True, text=True, timeout=300)
    found = re.search(r'<pre id="probe">(.*?)</pre>', proc.stdout, re.S)
    assert found, proc.stderr[-2000:]
    seen = json.loads(html.unescape(found.group(1)))
    assert seen["errors"] == [] and seen["fetched"] == [] and seen["broken"] == 0 and seen["images"] > 3, seen
    assert seen["summary"] is not None and 0 <= seen["summary"] < seen["viewport"], seen
    assert seen["figure"] is not None and seen["summary"] < seen["figure"] < seen["viewport"], seen
    assert seen["width"] > 300, seen  # a real picture, decoded
