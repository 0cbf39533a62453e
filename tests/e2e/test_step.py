"""`collbench step` end to end (docs/step.md): a step built from a real 2-rank CPU run's JSONL, the
collective times interpolated from its records; a measured file lacking a collective the step needs
exits 2 unless --fallback model."""
import json
import math

from conftest import SOURCE_DIR, read_jsonl, run

DATA = SOURCE_DIR / "tests" / "data" / "step"
STEP = ["step", "--workload", DATA / "tiny-workload.yaml", "--layout", DATA / "tiny-layout.yaml",
        "--system", DATA / "tiny-cpu.yaml", "--gpus", "2"]


def measure(tmp_path, collectives):
    """One JSONL file per collective, measured on 2 ranks from 4 KiB to 1 MiB."""
    files = []
    for collective in collectives.split(","):
        out = tmp_path / (collective + ".jsonl")
        r = run(["run", collective, "-b", "4K", "-e", "1M", "-f", "4", "--iters", "5", "--warmup", "1",
                 "--out", out, "--format", "none"], np=2)
        assert r.returncode == 0, r.stderr
        files.append(out)
    return files


def loglog(points, x):
    """The p50 at x bytes from (bytes, p50) points, as docs/step.md interpolates."""
    points = sorted(points)
    if x >= points[-1][0]:
        return points[-1][1] * x / points[-1][0]
    for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
        if x0 <= x <= x1:
            w = math.log(x / x0) / math.log(x1 / x0)
            return math.exp(math.log(y0) + w * (math.log(y1) - math.log(y0)))
    return points[0][1]


def test_step_from_a_measured_cpu_run(tmp_path):
    files = measure(tmp_path, "alltoall,reducescatter,allgather")
    r = run(STEP + ["--measured"] + files + ["--format", "json"])
    assert r.returncode == 0, r.stderr
    point = json.loads(r.stdout)["points"][0]
    cases = [c for f in files for c in read_jsonl(f) if "collective" in c and "time_us" in c]
    for phase in point["phases"]:
        assert phase["source"] == "measured", phase
        series = [(c["bytes"], c["time_us"]["p50"]) for c in cases if c["collective"] == phase["collective"]]
        assert math.isclose(phase["time_us"], loglog(series, phase["bytes"]), rel_tol=1e-9), phase
    # EP 2 of 4 experts top-1: U = 2 x (1 - (1 - 1/2)^1) ... = 1 destination per token; 256 tokens x 128 B rows.
    assert [p["name"] for p in point["phases"]][:3] == ["EP dispatch", "EP combine",
                                                          "EP backward (dispatch and combine gradients)"]
    assert point["phases"][0]["bytes"] == 256 * 128
    # The step is the pipeline (2 micro-batches x (fwd + bwd), PP 1) plus the exposed DP exchanges.
    assert math.isclose(point["step_time_s"] * 1e6,
                        point["pipeline_us"] + point["dp_exposed_us"], rel_tol=1e-12)
    assert math.isclose(point["pipeline_us"], 2 * (point["microbatch_fwd_us"] + point["microbatch_bwd_us"]),
                        rel_tol=1e-12)
    md = run(STEP + ["--measured"] + files + ["--format", "markdown"])
    assert md.returncode == 0, md.stderr
    dispatch = point["phases"][0]
    assert (f"| EP dispatch | ep 2 | scale-up | {dispatch['time_us']:.1f} | {dispatch['slack_us']:.1f} |"
            in md.stdout), md.stdout


def test_missing_collective_exits_2_unless_fallback(tmp_path):
    jsonl = measure(tmp_path, "allgather")[0]
    r = run(STEP + ["--measured", jsonl])
    assert r.returncode == 2
    assert "no ok record of alltoall on 2 ranks inside one domain, which the EP dispatch needs" in r.stderr
    assert "--fallback model" in r.stderr
    r = run(STEP + ["--measured", jsonl, "--fallback", "model", "--format", "json"])
    assert r.returncode == 0, r.stderr
    sources = {p["name"]: p["source"] for p in json.loads(r.stdout)["points"][0]["phases"]}
    assert sources["EP dispatch"] == "model (fallback)"
    assert sources["DP all-gather"] == "measured"


def test_layout_that_does_not_divide_exits_2():
    r = run(STEP[:-1] + ["3"])
    assert r.returncode == 2
    assert "do not split into EP groups of 2" in r.stderr


def test_default_step_phase_accounting_is_consistent():
    """The default DeepSeek-V3 layout (PP 8, VPP 4, uneven stages): per phase, exposed time never
    exceeds the time spent (hidden >= 0), time = calls x time per call, and the critical rank's
    compute plus its exposed communication over m micro-batches, plus the bubble and the exposed DP
    time, is the step."""
    r = run(["step", "--format", "json"])
    assert r.returncode == 0, r.stderr
    for point in json.loads(r.stdout)["points"]:
        for p in point["phases"]:
            assert p["hidden_per_step_us"] >= -1e-6 * p["time_per_step_us"], (point["gpus"], p["name"], p)
            assert p["time_per_step_us"] == pytest_approx(p["calls_per_step"] * p["time_us"])
        pipeline_exposed = sum(p["exposed_per_step_us"] for p in point["phases"] if p["group"] not in ("dp", "edp"))
        total = point["compute_us"] + pipeline_exposed + point["bubble_us"] + point["dp_exposed_us"]
        assert total == pytest_approx(point["step_time_s"] * 1e6), point["gpus"]


def pytest_approx(x):
    import pytest

    return pytest.approx(x, rel=1e-9)
