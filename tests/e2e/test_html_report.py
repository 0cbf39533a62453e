"""HTML reports end to end, checked in a real browser: real CPU runs (mpiexec -n 1 and -n 2) and a
real acceptance run become `collbench report --html`, `collbench report weak-scaling --html` and
`collbench report accept --html` pages (and accept's own verdict.html); headless Chromium loads each
page from disk, takes a screenshot that must not be blank, and dumps the DOM, whose text must hold
the verdicts, the case sizes and the "projected" labels. Chromium is required: scripts/setup
installs it, and a machine without it fails this test rather than skipping it. Bad input exits 2
naming the file, with nothing written."""
import html as htmllib
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import FAST, run

CHROMIUM_TIMEOUT_S = 180
PROFILE = """\
name: html-e2e
description: one check that passes and one that cannot <pass> & "fails"
defaults:
  backend: mpi
  dtype: float32
  repetitions: 1
  warmup: 1
  max_time: 100ms
checks:
  - name: latency-ok
    description: 8-byte all-reduce under a generous ceiling
    collective: allreduce
    bytes: 8
    threshold:
      max_time_us: 1000000
  - name: impossible-bandwidth
    description: 64 KiB all-reduce asked for 1 PB/s
    collective: allreduce
    bytes: 64K
    threshold:
      min_busbw_gbps: 1000000
"""


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("headless Chromium is required for the HTML report test and was not found: install the Debian "
                "package 'chromium' (scripts/setup installs it)")


def browse(page, out_dir):
    """Renders `page` from disk: (screenshot path, DOM text)."""
    exe = chromium()
    # One profile folder per launch: a browser process still exiting may hold the previous one's lock.
    common = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
              "--disable-dev-shm-usage"]
    url = Path(page).resolve().as_uri()
    shot = out_dir / (Path(page).stem + ".png")
    p = subprocess.run(common + [f"--user-data-dir={out_dir / 'chromium-profile-shot'}", f"--screenshot={shot}",
                                 "--window-size=1280,2000", url], capture_output=True,
                       text=True, timeout=CHROMIUM_TIMEOUT_S)
    assert shot.exists(), f"chromium wrote no screenshot (exit {p.returncode}): {p.stderr[-2000:]}"
    p = subprocess.run(common + [f"--user-data-dir={out_dir / 'chromium-profile-dom'}", "--dump-dom", url], capture_output=True, text=True, timeout=CHROMIUM_TIMEOUT_S)
    assert p.returncode == 0 and "<html" in p.stdout, p.stderr[-2000:]
    return shot, p.stdout


def dom_text(dom):
    """The visible text of a DOM dump: tags removed, entities decoded, <style> dropped."""
    dom = re.sub(r"<style.*?</style>", " ", dom, flags=re.S)
    return re.sub(r"\s+", " ", htmllib.unescape(re.sub(r"<[^>]+>", " ", dom)))


def check_not_blank(png):
    import matplotlib.image as mpimg
    import numpy as np

    img = mpimg.imread(str(png))
    assert img.ndim == 3 and img.shape[0] >= 1000 and img.shape[1] == 1280, img.shape
    rgb = img[:, :, :3]
    non_white = (rgb < 0.94).any(axis=2).mean()
    colours = len(np.unique((rgb * 255).astype(np.uint8).reshape(-1, 3), axis=0))
    assert non_white > 0.03, f"screenshot {png} is blank ({non_white:.2%} non-white pixels)"
    assert colours > 50, f"screenshot {png} has only {colours} colours"
    assert float(rgb.std()) > 0.05


def check_page_file(page):
    text = Path(page).read_text()
    assert text.startswith("<!DOCTYPE html>")
    assert "<script" not in text.lower(), "the page must need no JavaScript"
    assert not re.search(r"""(src|href)=["']?https?:""", text), "the page must load nothing from the network"
    assert not list(Path(page).parent.glob(Path(page).name + ".tmp*")), "temporary file left behind"
    return text


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """allreduce 1K..64K at 1 and 2 ranks, and an acceptance run with a PASS and a FAIL."""
    d = tmp_path_factory.mktemp("html")
    files = []
    for n in (1, 2):
        out = d / f"ar{n}.jsonl"
        p = run(["run", "allreduce", "-b", "1K", "-e", "64K", "-f", "8", "--format", "none", "--out", out] + FAST, np=n)
        assert p.returncode == 0, p.stderr
        files.append(out)
    profile = d / "html-e2e.yaml"
    profile.write_text(PROFILE)
    accept_dir = d / "accept"
    p = run(["accept", profile, "--out-dir", accept_dir, "--format", "none"], np=2, timeout=300)
    assert p.returncode == 1, p.stdout + p.stderr  # one check fails by design
    return {"dir": d, "files": files, "accept": accept_dir}


def test_sweep_page_renders_with_cases_and_checks(results, tmp_path):
    page = tmp_path / "sweep.html"
    p = run(["report", results["files"][1], "--html", page])
    assert p.returncode == 0, p.stderr
    assert "# file:" in p.stdout  # the console table is still printed
    source = check_page_file(page)
    assert source.count('<tr class="case">') == 3  # 1K, 8K, 64K: one row per case
    assert source.count('<svg class="chart"') == 1
    shot, dom = browse(page, tmp_path)
    check_not_blank(shot)
    text = dom_text(dom)
    for size in ("1KiB", "8KiB", "64KiB"):
        assert size in text, size
    assert "PASS" in text  # every element verified
    assert "allreduce" in text and "busbw" in text
    assert "Provenance" in text
    assert "command line" in text and "allreduce -b 1K -e 64K" in text


def test_comparison_page(results, tmp_path):
    page = tmp_path / "compare.html"
    a = results["files"][1]
    b = tmp_path / "b.jsonl"
    shutil.copy(a, b)
    p = run(["report", a, b, "--html", page])
    assert p.returncode == 0, p.stderr
    source = check_page_file(page)
    assert source.count('<tr class="comparison-row">') == 3
    assert "Comparison by run" in source


def test_weak_scaling_page_labels_projections(results, tmp_path):
    page = tmp_path / "ws.html"
    out = tmp_path / "ws"
    p = run(["report", "weak-scaling"] + results["files"] +
            ["--system", "gb300-nvl72", "--ranks", "8,16", "--no-plots", "--out", out, "--html", page])
    assert p.returncode == 0, p.stderr
    assert str(page) in p.stdout
    assert (out / "report.md").exists() and (out / "report.json").exists()
    source = check_page_file(page)
    assert source.count('<tr class="projected">') == 3 * 2  # 3 groups (1K, 8K, 64K) x N = 8, 16
    assert 'class="marker hollow"' in source
    shot, dom = browse(page, tmp_path)
    check_not_blank(shot)
    text = dom_text(dom)
    assert "Projected (model, not measured)" in text
    assert "projected" in text
    assert "E(N)" in text and "gb300-nvl72" in text


def test_acceptance_pages_show_pass_and_fail(results, tmp_path):
    accept_dir = results["accept"]
    own = accept_dir / "verdict.html"  # written by accept --out-dir itself
    assert own.exists()
    page = tmp_path / "accept.html"
    p = run(["report", "accept", accept_dir, "--html", page])
    assert p.returncode == 0, p.stderr
    assert "impossible-bandwidth" in p.stdout and "FAIL" in p.stdout
    for path in (own, page):
        source = check_page_file(path)
        assert source.count('<tr class="verdict-row pass">') == 1
        assert source.count('<tr class="verdict-row fail">') == 1
        assert "&lt;pass&gt; &amp; &quot;fails&quot;" in source  # the YAML description, escaped
    shot, dom = browse(page, tmp_path)
    check_not_blank(shot)
    text = dom_text(dom)
    assert "Acceptance html-e2e: FAIL" in text
    assert "PASS" in text and "FAIL" in text
    assert "latency-ok" in text and "impossible-bandwidth" in text
    assert "8B" in text and "64KiB" in text
    assert "cannot <pass>" in text  # shown as text, not parsed as markup
    assert "Provenance" in text and "MPI" in text
    # A verdict whose record files are gone still renders, saying provenance is missing.
    lone = tmp_path / "lone"
    lone.mkdir()
    v = json.loads((accept_dir / "verdict.json").read_text())
    v["record_files"] = [str(tmp_path / "gone" / "records-default.jsonl")]
    (lone / "verdict.json").write_text(json.dumps(v))
    p = run(["report", "accept", lone / "verdict.json", "--format", "none", "--html", lone / "v.html"],
            cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "provenance is missing" in (lone / "v.html").read_text()


def test_bad_input_exits_2_naming_the_file_and_writes_nothing(results, tmp_path):
    page = tmp_path / "out.html"
    # A results file is not an acceptance verdict.
    p = run(["report", "accept", results["files"][0], "--html", page])
    assert p.returncode == 2, p.stderr
    assert str(results["files"][0]) in p.stderr
    assert "not JSON" in p.stderr or "collbench.accept/1" in p.stderr
    # JSON of another kind.
    other = tmp_path / "other.json"
    other.write_text('{"schema": "collbench.weak_scaling/1", "groups": []}')
    p = run(["report", "accept", other, "--html", page])
    assert p.returncode == 2 and str(other) in p.stderr and "collbench.accept/1" in p.stderr, p.stderr
    # A missing file or folder.
    p = run(["report", "accept", tmp_path / "nowhere", "--html", page])
    assert p.returncode == 2 and "nowhere" in p.stderr, p.stderr
    p = run(["report", tmp_path / "missing.jsonl", "--html", page])
    assert p.returncode == 2 and "missing.jsonl" in p.stderr, p.stderr
    # An --html path in a folder that does not exist: refused before anything is written.
    out = tmp_path / "ws"
    p = run(["report", "weak-scaling"] + results["files"] + ["--no-plots", "--out", out, "--html",
                                                               tmp_path / "no" / "such" / "r.html"])
    assert p.returncode == 2 and "does not exist" in p.stderr, p.stderr
    assert not out.exists()
    assert not page.exists()
    assert not list(tmp_path.rglob("*.tmp*"))
