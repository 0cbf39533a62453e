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
    assert ("no ok record of moe-dispatch or alltoall on 2 ranks inside one domain, which the EP dispatch needs"
            in r.stderr)
    assert "--fallback model" in r.stderr
    r = run(STEP + ["--measured", jsonl, "--fallback", "model", "--format", "json"])
    assert r.returncode == 0, r.stderr
    sources = {p["name"]: p["source"] for p in json.loads(r.stdout)["points"][0]["phases"]}
    assert sources["EP dispatch"] == "model (fallback)"
    assert sources["DP all-gather"] == "measured"


def measure_moe(tmp_path, collective, *extra):
    """A MoE case of the tiny workload on 2 ranks: 256 tokens per rank, top-1 of 4 experts, 128 B rows."""
    out = tmp_path / (collective + "".join(extra[:1]).replace(":", "-") + ".jsonl")
    r = run(["run", collective, "--workload", DATA / "tiny-workload.yaml", "--tokens", "256", "--iters", "5",
             "--warmup", "1", *extra, "--out", out, "--format", "none"], np=2)
    assert r.returncode == 0, r.stderr
    return out


def test_ep_phases_from_moe_records_before_alltoall(tmp_path):
    """EP phases take moe-dispatch / moe-combine records, keyed by the mean bytes a rank sends
    (bytes_logical_total / ranks = 2 x 256 rows x 128 B / 2 = 32 KiB, the step's t U x row bytes,
    while bytes_max_rank is larger); the alltoall records in the same files are not used."""
    files = [measure_moe(tmp_path, "moe-dispatch"), measure_moe(tmp_path, "moe-combine")]
    files += measure(tmp_path, "alltoall,reducescatter,allgather")
    r = run(STEP + ["--measured"] + files + ["--format", "json"])
    assert r.returncode == 0, r.stderr
    phases = {p["name"]: p for p in json.loads(r.stdout)["points"][0]["phases"]}
    moe = {c["collective"]: c for f in files[:2] for c in read_jsonl(f) if c.get("kind") == "case"}
    assert moe["moe-dispatch"]["bytes_logical_total"] / 2 == 256 * 128
    for name, collective in (("EP dispatch", "moe-dispatch"), ("EP combine", "moe-combine"),
                             ("EP backward (dispatch and combine gradients)", "moe-combine")):
        p = phases[name]
        assert p["bytes"] == 256 * 128
        assert p["time_us"] == moe[collective]["time_us"]["p50"], (name, p)
        assert p["source_detail"] == (f"measured {files[0] if collective == 'moe-dispatch' else files[1]} "
                                      f"({collective} on 2 ranks inside one domain, 1 sizes 32KiB..32KiB per rank, "
                                      "exact at 32KiB)")
    assert "(reducescatter on 2 ranks" in phases["DP reduce-scatter"]["source_detail"]


def test_overlap_efficiency_from_overlap_records(tmp_path):
    """--overlap ep=FILE: the EP efficiency is the file's moe-dispatch overlap record's, clamped to
    [0, 1] and named in the output; a file without overlap records exits 2 naming it."""
    ov = measure_moe(tmp_path, "moe-dispatch", "--overlap", "sleep:time=2ms")
    record = next(c for c in read_jsonl(ov) if c.get("kind") == "case")
    efficiency = record["overlap"]["efficiency"]
    used = min(1.0, max(0.0, efficiency))
    r = run(STEP + ["--fallback", "model", "--overlap", f"ep={ov},dp=0.5", "--format", "json"])
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["overlap"]["ep"] == used and out["overlap"]["dp"] == 0.5 and out["overlap"]["tp"] == 0.0
    clamped = "" if used == efficiency else f" (used as {used:.3g})"
    assert out["overlap"]["detail"] == {
        "ep": f"{ov}: moe-dispatch {record['bytes'] / 1024:.3g}KiB on 2 ranks beside sleep:time=2ms, "
              f"efficiency {efficiency:.3g}{clamped}"}
    for p in out["points"][0]["phases"]:
        assert p["overlap"] == (used if p["group"] == "ep" else 0.5), p
    table = run(STEP + ["--fallback", "model", "--overlap", f"ep={ov}"])
    assert f"# overlap ep from {ov}: moe-dispatch" in table.stdout
    plain = measure_moe(tmp_path, "moe-combine")
    r = run(STEP + ["--overlap", f"tp=0.5,ep={plain}"])
    assert r.returncode == 2
    assert (f"--overlap ep={plain}: no ok record with an overlap efficiency of moe-roundtrip, moe-dispatch, "
            "moe-combine, alltoall, alltoallv (the collectives that serve ep)") in r.stderr
    r = run(STEP + ["--overlap", "ep=0.5,all-of-it"])
    assert r.returncode == 2
    assert "'all-of-it' is not an efficiency in [0, 1] (overlap records: KIND=FILE, KIND tp ep pp dp)" in r.stderr


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
