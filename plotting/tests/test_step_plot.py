"""The step plot (python3 -m collbench_plot step): bar heights and labels equal the step JSON's
values, the data source is labelled, bad input exits 2 naming the file and field."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from collbench_plot import InputError
from collbench_plot import step_plot

PLOTTING_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def phase(name, group, exposed_us, source="measured"):
    return {"name": name, "group": group, "exposed_per_step_us": exposed_us, "source": source}


def point(gpus, compute_us, bubble_us, dp_us, phases, tflops, retention):
    """step = compute + exposed (EP, TP, PP) + bubble + exposed DP, as collbench step writes it."""
    exposed = sum(p["exposed_per_step_us"] for p in phases if p["group"] not in ("dp", "edp"))
    return {"gpus": gpus, "step_time_s": (compute_us + exposed + bubble_us + dp_us) / 1e6,
            "compute_us": compute_us, "bubble_us": bubble_us, "dp_exposed_us": dp_us,
            "delivered_tflops_per_gpu": tflops, "retention": retention, "phases": phases}


def report(source="measured"):
    # 256 GPUs: EP 300 000 + 100 000 us (two EP phases add), TP 50 000, PP 0; 512: EP 420 000.
    p256 = point(256, 2_000_000, 250_000, 30_000,
                 [phase("EP dispatch", "ep", 300_000), phase("EP combine", "ep", 100_000),
                  phase("TP all-gather", "tp", 50_000), phase("PP send/recv", "pp", 0.0),
                  phase("DP reduce-scatter", "dp", 30_000, source)], 500.0, 1.0)
    p512 = point(512, 2_000_000, 250_000, 40_000,
                 [phase("EP dispatch", "ep", 420_000), phase("TP all-gather", "tp", 50_000),
                  phase("PP send/recv", "pp", 10_000), phase("expert-DP all-gather", "edp", 40_000)], 480.0, 0.96)
    return {"kind": "step", "workload": "deepseek-v3-bf16", "layout": "L", "system": {"name": "gb200-nvl72"},
            "points": [p512, p256]}


def bars(ax):
    return {c.get_label(): [round(r.get_height(), 9) for r in c.patches] for c in ax.containers}


def test_stacked_bars_equal_the_json_values():
    fig = step_plot.step_figure(report())
    ax_t, ax_f = fig.axes[0], fig.axes[1]
    got = bars(ax_t)
    # Sorted by GPU count: 256 then 512; seconds.
    assert got == {"compute": [2.0, 2.0], "exposed EP": [0.4, 0.42], "exposed TP": [0.05, 0.05],
                   "exposed PP": [0.0, 0.01], "pipeline bubble": [0.25, 0.25], "exposed DP": [0.03, 0.04]}
    tops = [round(r.get_y() + r.get_height(), 9) for r in ax_t.containers[-1].patches]
    assert tops == [2.73, 2.77]  # the stack reaches the step time
    assert [t.get_text() for t in ax_t.get_xticklabels()] == ["256", "512"]
    assert bars(ax_f) == {"delivered TFLOP/s per GPU": [500.0, 480.0]}
    retention = fig.axes[2].lines[0]
    assert list(retention.get_ydata()) == [100.0, 96.0]
    assert ax_t.get_ylabel() == "time per step (s)"
    assert "collective times: measured" in fig._suptitle.get_text()


def test_any_model_phase_labels_the_plot_model():
    fig = step_plot.step_figure(report(source="model (fallback)"))
    assert "MODEL (analytic, not measured)" in fig._suptitle.get_text()
    assert step_plot.data_source(report("model")) == "model"
    assert step_plot.data_source(report()) == "measured"


@pytest.mark.parametrize("mutate, message", [
    (lambda r: r.update(kind="weak_scaling"), 'kind: expected "step" (collbench step --format json), got "weak_scaling"'),
    (lambda r: r.update(points=[]), "points: expected a non-empty list"),
    (lambda r: r["points"][1].update(gpus=0), "points[1].gpus: expected a positive integer, got 0"),
    (lambda r: r["points"][0].pop("bubble_us"), "points[0].bubble_us: expected a number, got null"),
    (lambda r: r["points"][0]["phases"][2].update(group=None), "points[0].phases[2].group: expected a string"),
])
def test_bad_step_json_names_the_field(tmp_path, mutate, message):
    r = report()
    mutate(r)
    with pytest.raises(InputError) as e:
        step_plot.check_step(r, "s.json")
    assert str(e.value).startswith("s.json: ")
    assert message in str(e.value)


def cli(*args, cwd=PLOTTING_DIR):
    return subprocess.run([sys.executable, "-m", "collbench_plot", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, check=False)


def test_cli_writes_png_and_svg(tmp_path):
    path = tmp_path / "step.json"
    path.write_text(json.dumps(report()))
    r = cli("step", path, "--out", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    written = r.stdout.split()
    assert [os.path.basename(p) for p in written] == ["step_deepseek-v3-bf16_L_gb200-nvl72.png",
                                                      "step_deepseek-v3-bf16_L_gb200-nvl72.svg"]
    with open(written[1], encoding="utf-8") as f:
        svg = f.read()
    assert "exposed EP" in svg and "pipeline bubble" in svg


def test_cli_bad_input_exits_2_naming_the_file(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps({"kind": "run_header"}))
    r = cli("step", path, "--out", tmp_path / "out")
    assert r.returncode == 2
    assert f"{path}: kind: expected \"step\"" in r.stderr
    assert not (tmp_path / "out").exists()
