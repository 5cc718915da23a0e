"""The frontier report as a person sees it (issue 30): report.html rendered by headless Chromium
(Debian's ``chromium``; ``.ci/run`` installs it), its first section and the frontier plot above
the first table, and a screenshot (``BENCH_SCREENSHOT=FILE.png`` keeps it to look at)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bench.config.checks import compose
from bench.runner import run
from bench.study.assemble import write_report

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1400,2400"]

# Appended to a copy of the page: where each part starts, written into the DOM that --dump-dom prints.
PROBE = """<script>
(function () {
  function top(el) { return el ? el.getBoundingClientRect().top + window.scrollY : null; }
  var out = {answer: top(document.getElementById('answer')),
             plot: top(document.querySelector('#frontier svg')),
             table: top(document.querySelector('table')),
             answerBottom: (function (el) { return el ? el.getBoundingClientRect().bottom + window.scrollY : null; })(
               document.getElementById('answer'))};
  var pre = document.createElement('pre'); pre.id = 'positions'; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""


def _chromium() -> str:
    if Path(CHROMIUM).exists():
        return CHROMIUM
    if os.environ.get("BENCH_REQUIRE_CHROMIUM"):
        pytest.fail(f"no Chromium at {CHROMIUM} (.ci/run installs Debian's chromium)")
    pytest.skip("headless Chromium is not installed (apt-get install chromium)")


@pytest.mark.slow  # several offline jobs and a browser; .ci/run runs it
def test_the_first_section_and_the_frontier_plot_are_above_the_first_table(tmp_path):
    browser = _chromium()
    for job in ("full", "none", "nlatest_10pct", "mask_10pct", "compact_10pct", "nlatest_25pct", "mask_25pct",
                "compact_25pct"):
        run(compose([f"+experiment/arm={job}", f"output_dir={tmp_path / 'sweep' / job}", "cache.enabled=false"]))
    output = write_report([tmp_path / "sweep"], tmp_path / "report")["output"]
    page = Path(output) / "report.html"
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = subprocess.run([browser, *FLAGS, "--dump-dom", probe.as_uri()], capture_output=True, text=True,
                         timeout=180)
    found = re.search(r'<pre id="positions">(.*?)</pre>', dom.stdout)
    assert found, dom.stderr[-2000:]
    where = json.loads(found.group(1).replace("&quot;", '"'))
    assert None not in where.values(), where
    assert where["answer"] < where["answerBottom"] <= where["plot"] < where["table"], where
    assert where["plot"] < 1400, where  # the plot is on the first screen or close to it, not 2,900 px down
    shot = Path(os.environ.get("BENCH_SCREENSHOT") or tmp_path / "report.png")
    done = subprocess.run([browser, *FLAGS, f"--screenshot={shot}", page.as_uri()], capture_output=True, text=True,
                          timeout=180)
    assert shot.is_file() and shot.stat().st_size > 10_000, done.stderr[-2000:]
