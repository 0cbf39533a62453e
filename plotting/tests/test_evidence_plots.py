"""The README's evidence plots (python3 -m collbench_plot step-published | published-points): bar
heights, points and lines equal the input files' numbers, the model is labelled MODEL, the
published figures published, and bad input exits 2 naming the file and field."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from collbench_plot import InputError
from collbench_plot import evidence_plots as ev

PLOTTING_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def step_report(workload, system, gpus, tflops, published):
    point = {"gpus": gpus, "step_time_s": 1.0, "compute_us": 9e5, "bubble_us": 5e4, "dp_exposed_us": 5e4,
             "delivered_tflops_per_gpu": tflops, "retention": 1.0, "phases": [],
             "published": [{"release": rel, "tflops_per_gpu": v, "source": "s"} for rel, v in published]}
    return {"kind": "step", "workload": workload, "layout": "L", "system": {"name": system}, "points": [point]}


def reports():
    return [step_report("deepseek-v3-bf16", "gb300-nvl72", 256, 1736.2, [("26.06", 1648.0), ("26.08", 1635.0)]),
            step_report("qwen3-30b-a3b", "gb200-nvl72", 8, 1447.2, [("26.06", 936.0)]),
            step_report("other", "gb200-nvl72", 64, 900.0, [])]  # no published figure: not drawn


def test_step_published_bars_are_the_model_and_dots_the_published_figures():
    fig = ev.step_published_figure(reports())
    ax = fig.axes[0]
    (bars,) = ax.containers
    assert [round(r.get_height(), 6) for r in bars.patches] == [1736.2, 1447.2]
    assert bars.get_label().startswith("MODEL")
    dots = [list(line.get_ydata()) for line in ax.lines]
    assert dots == [[1648.0, 1635.0], [936.0]]
    assert ax.lines[0].get_label().startswith("published")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["deepseek-v3-bf16\ngb300-nvl72\n256 GPUs",
                                                            "qwen3-30b-a3b\ngb200-nvl72\n8 GPUs"]
    # model / published: 1736.2 / 1648 = 1.054, / 1635 = 1.062; 1447.2 / 936 = 1.546
    assert [t.get_text() for t in ax.texts] == ["x1.05-1.06", "x1.55"]


def test_step_published_label_is_one_ratio_when_both_ends_print_alike():
    # 1626.3 / 1648 = 0.9868 and / 1635 = 0.9947: both print 0.99, so one ratio, not "x0.99-0.99".
    fig = ev.step_published_figure([step_report("d", "gb300-nvl72", 256, 1626.3, [("a", 1648.0), ("b", 1635.0)])])
    assert [t.get_text() for t in fig.axes[0].texts] == ["x0.99"]


def test_step_published_needs_a_published_figure(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(reports()[2]))
    with pytest.raises(InputError, match="no point with published figures"):
        ev.load_step_reports([str(path)])
    bad = reports()[0]
    bad["points"][0]["published"][1]["tflops_per_gpu"] = "fast"
    path.write_text(json.dumps(bad))
    with pytest.raises(InputError, match=r"s.json: points\[0\].published\[1\].tflops_per_gpu: expected a number"):
        ev.load_step_reports([str(path)])


PUBLISHED = """system: gb200-nvl72
points:
  - {collective: allreduce, domain_sizes: [72], bytes: 4G, busbw: 839.16GB/s, source: "A PR #1 (2025), https://x: one"}
  - {collective: allreduce, domain_sizes: [72, 72], bytes: 2G, busbw: 286.5GB/s, source: "B PR #2 (2025): two"}
  - {collective: allgather, domain_sizes: [72], bytes: 1G, busbw: 100GB/s, source: "C"}
"""


def model_json():
    def row(sizes, nbytes, bound, expected, modelled=True):
        return {"domain_sizes": sizes, "bytes": nbytes, "bound_busbw_gbps": bound, "expected_busbw_gbps": expected,
                "algo_modelled": "nvls", "modelled": modelled}
    return {"kind": "model", "collective": "allreduce",
            "rows": [row([72], 2**31, 1750.0, 820.0), row([72], 2**32, 1750.0, 832.0),
                     row([72, 72], 2**31, 1770.0, 800.0), row([72, 72], 2**32, 1770.0, 810.0),
                     row([72, 72], 2**33, 0, 0, modelled=False)]}


def test_published_points_and_model_lines_are_the_files_numbers(tmp_path):
    yml = tmp_path / "p.yaml"
    yml.write_text(PUBLISHED)
    mj = tmp_path / "m.json"
    mj.write_text(json.dumps(model_json()))
    published = ev.load_published(str(yml))
    assert [(p["gpus"], p["domains"], p["bytes"], p["busbw"]) for p in published["points"]] == [
        (72, 1, 4 * 2**30, 839.16), (144, 2, 2 * 2**30, 286.5), (72, 1, 2**30, 100.0)]
    fig = ev.published_points_figure(published, ev.load_model_rows(str(mj)), "allreduce")
    ax = fig.axes[0]
    got = {line.get_label(): (list(line.get_xdata()), list(line.get_ydata())) for line in ax.lines}
    assert got == {
        "72 GPUs: MODEL bound": ([2**31, 2**32], [1750.0, 1750.0]),
        "72 GPUs: MODEL expected (nvls)": ([2**31, 2**32], [820.0, 832.0]),
        "72 GPUs (1 rack): published, measured by its source": ([4 * 2**30], [839.16]),
        "144 GPUs: MODEL bound": ([2**31, 2**32], [1770.0, 1770.0]),
        "144 GPUs: MODEL expected (nvls)": ([2**31, 2**32], [800.0, 810.0]),
        "144 GPUs (2 racks): published, measured by its source": ([2 * 2**30], [286.5]),
    }
    assert "measured: A PR #1, B PR #2" in fig._suptitle.get_text()


@pytest.mark.parametrize("text, message", [
    ("system: x\n", "expected 'system' and a list 'points'"),
    ("system: x\npoints:\n  - {domain_sizes: 72, bytes: 1G, busbw: 1GB/s}\n", r"points\[0\].domain_sizes"),
    ("system: x\npoints:\n  - {domain_sizes: [8], bytes: 1G, busbw: fast}\n", r"points\[0\].busbw: expected"),
    ("system: x\npoints:\n  - {domain_sizes: [8], bytes: lots, busbw: 1GB/s}\n", r"points\[0\].bytes: expected"),
])
def test_bad_published_file_names_the_field(tmp_path, text, message):
    yml = tmp_path / "p.yaml"
    yml.write_text(text)
    with pytest.raises(InputError, match=message):
        ev.load_published(str(yml))


def cli(*args):
    return subprocess.run([sys.executable, "-m", "collbench_plot", *map(str, args)], cwd=PLOTTING_DIR,
                          capture_output=True, text=True, check=False)


def test_cli_writes_both_figures_and_refuses_a_non_model_json(tmp_path):
    paths = []
    for i, r in enumerate(reports()[:2]):
        paths.append(tmp_path / f"s{i}.json")
        paths[-1].write_text(json.dumps(r))
    r = cli("step-published", *paths, "--out", tmp_path / "out", "--format", "png")
    assert r.returncode == 0, r.stderr
    assert [os.path.basename(p) for p in r.stdout.split()] == ["step_published.png"]
    yml = tmp_path / "p.yaml"
    yml.write_text(PUBLISHED)
    mj = tmp_path / "m.json"
    mj.write_text(json.dumps(model_json()))
    r = cli("published-points", yml, mj, "--out", tmp_path / "out", "--format", "png")
    assert r.returncode == 0, r.stderr
    assert [os.path.basename(p) for p in r.stdout.split()] == ["published_gb200-nvl72_allreduce.png"]
    mj.write_text(json.dumps({"kind": "step"}))
    r = cli("published-points", yml, mj, "--out", tmp_path / "out2")
    assert r.returncode == 2 and "expected collbench model --format json output" in r.stderr
