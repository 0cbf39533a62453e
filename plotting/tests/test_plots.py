"""Each plot on small synthetic data: PNG and SVG written and non-empty; the CLI end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from collbench_plot import CollbenchPlotWarning, InputError, read_jsonl
from collbench_plot import plots
from collbench_plot.records import all_cases
from conftest import case, header, write_jsonl

PLOTTING_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def check_outputs(paths, formats=("png", "svg")):
    assert paths, "no file written"
    for p in paths:
        assert os.path.isfile(p), p
        assert os.path.getsize(p) > 1000, p
    exts = {os.path.splitext(p)[1][1:] for p in paths}
    assert exts == set(formats)
    for p in paths:
        with open(p, "rb") as f:
            head = f.read(400)
        if p.endswith(".png"):
            assert head.startswith(PNG_MAGIC)
        else:
            assert b"<svg" in head


def weak_scaling_report():
    return {
        "schema": "collbench.weak_scaling/1",
        "system": "gb300-nvl72",
        "groups": [
            {
                "key": {"collective": "allreduce", "algo": "hierarchical", "dtype": "bfloat16",
                        "bytes_per_rank": 67108864, "scope": "global"},
                "points": [
                    {"num_ranks": 1, "efficiency": 1.0, "efficiency_ci": [1.0, 1.0], "pct_bound": 92.0,
                     "projected": False, "pi": None},
                    {"num_ranks": 2, "efficiency": 0.95, "efficiency_ci": [0.93, 0.97], "pct_bound": 88.0,
                     "projected": False, "pi": None},
                    {"num_ranks": 4, "efficiency": 0.9, "efficiency_ci": [0.86, 0.93], "pct_bound": 84.5,
                     "projected": False, "pi": None},
                    {"num_ranks": 256, "efficiency": 0.8, "efficiency_ci": None, "pct_bound": 75.0,
                     "projected": True, "pi": [0.7, 0.88]},
                    {"num_ranks": 1024, "efficiency": 0.74, "efficiency_ci": None, "pct_bound": 70.0,
                     "projected": True, "pi": [0.6, 0.85]},
                ],
            },
            {
                "key": {"collective": "alltoall", "algo": "flat", "dtype": "float32", "scope": "global"},
                "points": [
                    {"num_ranks": 2, "efficiency": 1.0, "efficiency_ci": [0.98, 1.02], "pct_bound": None,
                     "projected": False, "pi": None},
                    {"num_ranks": 4, "efficiency": 0.7, "efficiency_ci": [0.65, 0.75], "pct_bound": None,
                     "projected": False, "pi": None},
                ],
            },
        ],
    }


def test_busbw_plot_per_group_with_model_lines(sweep_file, tmp_path):
    out = tmp_path / "out"
    paths = plots.plot_busbw(all_cases([read_jsonl(sweep_file)]), str(out))
    check_outputs(paths)
    names = sorted(os.path.basename(p) for p in paths)
    # Two groups (auto, ring) x two formats; the in-place series joins the auto group.
    assert len(paths) == 4, names
    assert "busbw_allreduce_auto_float32_mpi_global_n4.png" in names


def test_busbw_leaves_out_failed_and_zero_byte_cases(tmp_path):
    records = [header(), case(nbytes=0), case(status="failed"), case(nbytes=2048, busbw=3.0), case(nbytes=4096)]
    f = read_jsonl(write_jsonl(tmp_path / "r.jsonl", records))
    with pytest.warns(CollbenchPlotWarning):
        paths = plots.plot_busbw(f.cases, str(tmp_path / "o"), ["png"])
    check_outputs(paths, ["png"])


def test_busbw_compares_two_runs(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", [header("a")] + [case(nbytes=b, run_id="a") for b in (1024, 4096)])
    b = write_jsonl(tmp_path / "b.jsonl", [header("b")] + [case(nbytes=b, busbw=12.0, run_id="b") for b in (1024, 4096)])
    paths = plots.plot_busbw(all_cases([read_jsonl(a), read_jsonl(b)]), str(tmp_path / "o"))
    check_outputs(paths)
    assert len(paths) == 2  # one group, both runs in it


def test_weak_scaling_plot(tmp_path):
    report_path = tmp_path / "weak.json"
    report_path.write_text(json.dumps(weak_scaling_report()))
    paths = plots.plot_weak_scaling(plots.load_weak_scaling(str(report_path)), str(tmp_path / "o"))
    check_outputs(paths)
    assert len(paths) == 4


def test_weak_scaling_labels_simulated_and_model_only(tmp_path):
    report = weak_scaling_report()
    points = report["groups"][0]["points"]
    assert plots.measured_kind([p for p in points if not p["projected"]]) == "measured"
    for p in points:
        p["simulated"] = not p["projected"]
    points[-1]["model_only"] = True
    assert plots.measured_kind([p for p in points if not p["projected"]]) == "simulated (SimGrid SMPI)"
    near, far = plots.split_projected(points)
    assert [p["num_ranks"] for p in near] == [256] and [p["num_ranks"] for p in far] == [1024]
    report_path = tmp_path / "weak.json"
    report_path.write_text(json.dumps(report))
    check_outputs(plots.plot_weak_scaling(plots.load_weak_scaling(str(report_path)), str(tmp_path / "o")))


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda r: r["groups"][0]["points"][1].update(num_ranks=0), r"groups\[0\]\.points\[1\]\.num_ranks"),
        (lambda r: r["groups"][0]["points"][0].update(efficiency_ci=[1.0, 0.9]), "low <= high"),
        (lambda r: r["groups"][1].pop("key"), r"groups\[1\]\.key"),
        (lambda r: r.update(groups=[]), "non-empty"),
        (lambda r: r.update(schema="collbench.weak_scaling/2"), "not supported"),
        (lambda r: r["groups"][0]["points"][0].update(projected="yes"), "projected"),
    ],
)
def test_weak_scaling_report_is_checked(mutate, message):
    report = weak_scaling_report()
    mutate(report)
    with pytest.raises(InputError, match=message):
        plots.check_weak_scaling(report, "weak.json")


def test_rank_heatmap_shows_the_straggler(tmp_path):
    records = [header(num_ranks=8)]
    for nbytes in (1024, 4096, 16384):
        times = [10.0 + 0.1 * r for r in range(8)]
        times[5] = 30.0  # the straggler
        records.append(case(nbytes=nbytes, num_ranks=8, per_rank=times))
    records.append(case(nbytes=1024, num_ranks=2))  # another rank count: its own figure
    f = read_jsonl(write_jsonl(tmp_path / "straggler.jsonl", records))
    paths = plots.plot_rank_heatmap([f], str(tmp_path / "o"))
    check_outputs(paths)
    assert len(paths) == 4
    svg = open([p for p in paths if p.endswith("n8.svg")][0], encoding="utf-8").read()
    assert "rank 5" in svg  # named in the title
    assert "node2" in svg   # with its host from the run header


def test_traffic_matrix(tmp_path):
    n = 8
    matrix = [[(0 if i == j else (4096 if i // 4 == j // 4 else 512)) for j in range(n)] for i in range(n)]
    workload = {"name": "deepseek-v3", "tokens_per_rank": 128, "routing": "lognormal", "imbalance": 1.3,
                "gini": 0.2, "bytes_in_domain": 1, "bytes_off_domain": 1, "hottest_rank": 3,
                "traffic_matrix": matrix}
    c = case(collective="moe-dispatch", num_ranks=n, workload=workload)
    c["domain_sizes"], c["num_domains"] = [4, 4], 2
    f = read_jsonl(write_jsonl(tmp_path / "moe.jsonl", [header(num_ranks=n), c, case(num_ranks=n)]))
    paths = plots.plot_traffic_matrices(f.cases, str(tmp_path / "o"))
    check_outputs(paths)
    svg = open([p for p in paths if p.endswith(".svg")][0], encoding="utf-8").read()
    assert "off-domain" in svg


def test_traffic_matrix_must_be_square(tmp_path):
    c = case(collective="moe-dispatch", num_ranks=2, workload={"name": "w", "traffic_matrix": [[0, 1], [1]]})
    f = read_jsonl(write_jsonl(tmp_path / "bad.jsonl", [header(), c]))
    with pytest.raises(InputError, match=r"bad\.jsonl:2: workload\.traffic_matrix row 1"):
        plots.plot_traffic_matrices(f.cases, str(tmp_path / "o"))


def run_cli(*args, cwd=PLOTTING_DIR):
    return subprocess.run([sys.executable, "-m", "collbench_plot", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def test_cli_busbw_and_weak_scaling(sweep_file, tmp_path):
    out = tmp_path / "cli"
    r = run_cli("busbw", sweep_file, "--out", str(out))
    assert r.returncode == 0, r.stderr
    written = r.stdout.split()
    assert len(written) == 4
    check_outputs(written)
    report = tmp_path / "weak.json"
    report.write_text(json.dumps(weak_scaling_report()))
    r = run_cli("weak-scaling", str(report), "--out", str(out), "--format", "png")
    assert r.returncode == 0, r.stderr
    check_outputs(r.stdout.split(), ["png"])


def test_cli_refuses_another_schema_with_exit_code_2(tmp_path):
    h = header()
    h["schema"] = "collbench.result/2"
    path = write_jsonl(tmp_path / "v2.jsonl", [h])
    r = run_cli("busbw", path, "--out", str(tmp_path / "o"))
    assert r.returncode == 2
    assert "collbench.result/2" in r.stderr and "v2.jsonl:1" in r.stderr
    assert not (tmp_path / "o").exists()


def test_cli_reports_truncated_line_and_nothing_to_plot(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", [header(), case()], trailing='{"kind": "case", "sch')
    r = run_cli("traffic-matrix", path, "--out", str(tmp_path / "o"))
    assert r.returncode == 2
    assert "t.jsonl:3: truncated last line skipped" in r.stderr
    assert "nothing to plot" in r.stderr
