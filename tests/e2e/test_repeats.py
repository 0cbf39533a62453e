"""--repeats k (docs/measurement.md "Repeats"): every case measured k times in k passes over the
cases, one record per case key carrying each repeat's median and the spread between them; records
are written after a case's last repeat; --resume continues only the same k; the gate tests the
repeat medians when both files have them (docs/gate.md "Between repeats")."""
import json
import statistics

from conftest import read_jsonl, run

TIMED = ["-n", "30", "-w", "2"]


def cases(path):
    return [r for r in read_jsonl(path) if r["kind"] == "case"]


def test_repeats_give_one_record_per_key_with_three_repeat_medians(tmp_path, validator):
    out = tmp_path / "r.jsonl"
    p = run(["run", "allreduce", "-b", "1K", "-e", "4K", "-f", "4", "--repeats", "3", "--out", out] + TIMED, np=2)
    assert p.returncode == 0, p.stderr
    records = read_jsonl(out)
    for r in records:
        validator.validate(r)
    assert records[0]["config"]["repeats"] == 3
    recs = cases(out)
    assert [r["bytes"] for r in recs] == [1024, 4096]
    assert len({r["case_key"] for r in recs}) == 2
    for r in recs:
        rep = r["repeats"]
        assert rep["k"] == 3
        assert len(rep["p50_us"]) == 3 and len(rep["ci95_low_us"]) == 3 and len(rep["ci95_high_us"]) == 3
        assert rep["iterations"] == [30, 30, 30] and rep["samples_kept"] == [30, 30, 30]
        assert rep["stop_reason"] == ["max_iters"] * 3
        assert r["iterations"] == 90 and len(r["samples_us"]) == 90 and r["samples_dropped"] == 0
        # The headline is the median of the repeat medians; the spread is their range over it.
        median = statistics.median(rep["p50_us"])
        assert r["time_us"]["p50"] == median
        assert abs(rep["spread_pct"] - 100 * (max(rep["p50_us"]) - min(rep["p50_us"])) / median) < 1e-9
        assert rep["between_low_us"] == min(rep["p50_us"]) and rep["between_high_us"] == max(rep["p50_us"])
        assert rep["between_confidence"] == 0.75
        assert abs(r["algbw_gbps"] - r["bytes"] / median / 1e3) < 1e-9
        # Each repeat's own statistics come from its own block of samples_us.
        for i in range(3):
            block = r["samples_us"][30 * i:30 * (i + 1)]
            assert abs(statistics.median(block) - rep["p50_us"][i]) < 1e-9
    assert p.stdout.count("#   repeats 3: p50 ") == 2, p.stdout
    assert "between repeats: spread" in p.stdout and "within a run: +-" in p.stdout
    p = run(["report", out])
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("#   repeats 3: p50 ") == 2, p.stdout


def test_single_runs_are_unchanged(tmp_path):
    out = tmp_path / "one.jsonl"
    p = run(["run", "allreduce", "-b", "1K", "-e", "1K", "--out", out] + TIMED, np=2)
    assert p.returncode == 0, p.stderr
    header, rec = read_jsonl(out)
    assert "repeats" not in header["config"] and "repeats" not in rec
    assert "#   repeats" not in p.stdout


def test_records_wait_for_the_last_repeat_and_cases_interleave(tmp_path):
    # Case 1 hangs in the first pass: case 0 has had one repeat of three, so nothing is written.
    out = tmp_path / "h.jsonl"
    p = run(["run", "allreduce", "-b", "1K", "-e", "4K", "-f", "4", "--repeats", "3", "--timeout", "3s", "--out",
             out, "--format", "none"] + TIMED, np=2, env={"COLLBENCH_FAULT": "hang:rank=1,case=1,iter=3"}, timeout=120)
    assert p.returncode == 3, p.stderr
    assert [r["kind"] for r in read_jsonl(out)] == ["run_header"]


def test_resume_continues_the_same_repeats_and_refuses_others(tmp_path):
    out = tmp_path / "r.jsonl"
    base = ["run", "allreduce", "-b", "1K", "-e", "4K", "-f", "4", "--out", out, "--format", "none"] + TIMED
    p = run(base + ["--repeats", "3"], np=2)
    assert p.returncode == 0, p.stderr
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:2]))  # as if the run had stopped before the last case was written
    for other, why in ((["--repeats", "2"], "repeats 3 vs 2"), ([], "'repeats' is only in the file")):
        p = run(base + other + ["--resume"], np=2)
        assert p.returncode == 2, p.stderr
        assert why in p.stderr, p.stderr
        assert out.read_text() == "".join(lines[:2])
    p = run(base + ["--repeats", "3", "--resume"], np=2)
    assert p.returncode == 0, p.stderr
    records = read_jsonl(out)
    assert out.read_text().startswith("".join(lines[:2]))
    assert [r["kind"] for r in records] == ["run_header", "case", "case"]
    assert records[2]["bytes"] == 4096 and records[2]["repeats"]["k"] == 3


def test_sweep_takes_repeats(tmp_path):
    suite = tmp_path / "s.yaml"
    suite.write_text("name: tiny\ncases:\n  - collective: [allreduce, allgather]\n    bytes: 4K\n")
    out = tmp_path / "s.jsonl"
    p = run(["sweep", suite, "--repeats", "2", "--iters", "20", "--out", out, "--format", "none"], np=2)
    assert p.returncode == 0, p.stderr
    recs = cases(out)
    assert [r["collective"] for r in recs] == ["allreduce", "allgather"]
    assert all(r["repeats"]["k"] == 2 and len(r["repeats"]["p50_us"]) == 2 for r in recs)
    assert all(r["time_us"]["p50"] == sum(r["repeats"]["p50_us"]) / 2 for r in recs)
    # The dry run's time estimate counts every repeat: 2 cases x k x the default budget's 10 ms
    # (about), 2 cases x k x the default --max-time's 2 s (at most).
    for k, about, most in ((1, "0.02", "4.0"), (3, "0.06", "12.0")):
        p = run(["sweep", "--dry-run", suite, "--repeats", str(k)])
        assert p.returncode == 0, p.stderr
        assert f"# estimated run time: about {about} s, at most {most} s\n" in p.stdout, p.stdout


def test_bad_repeats_are_refused(tmp_path):
    p = run(["run", "allreduce", "-b", "1K", "-e", "1K", "--repeats", "0"], np=2)
    assert p.returncode == 2
    assert "--repeats 0: must be at least 1 (1 = measure each case once)" in p.stderr, p.stderr
    p = run(["run", "allreduce", "-b", "1K", "-e", "1K", "--repeats", "2", "--overlap", "sleep:time=1ms"], np=2)
    assert p.returncode == 2
    assert "--repeats 2 with --overlap sleep:time=1ms: overlap mode is measured once per case" in p.stderr, p.stderr


def with_repeat_medians(source, target, medians):
    """A copy of a results file whose one case has the given repeat medians (hand-made inputs)."""
    header, rec = read_jsonl(source)
    rec["repeats"]["p50_us"] = medians
    rec["time_us"]["p50"] = statistics.median(medians)
    target.write_text(json.dumps(header) + "\n" + json.dumps(rec) + "\n")


def test_gate_tests_the_repeat_medians(tmp_path):
    base = ["run", "allreduce", "-b", "64K", "-e", "64K", "--repeats", "3", "--format", "none", "-n", "100", "-w", "5"]
    first, slow = tmp_path / "a.jsonl", tmp_path / "slow.jsonl"
    assert run(base + ["--out", first], np=2).returncode == 0
    # A file against itself: identical repeat medians, no shift.
    p = run(["gate", "--baseline", first, "--current", first, "--format", "json"])
    assert p.returncode == 0, p.stderr
    case = json.loads(p.stdout)["cases"][0]
    assert case["verdict"] == "PASS" and case["test"]["method"] == "repeats"
    assert case["test"]["ratio"] == 1.0 and case["test"]["u"] is None and case["test"]["df"] == 4
    assert len(case["test"]["current_blocks_us"]) == 3
    # Hand-made repeat medians (docs/gate.md's worked example): 10, 11, 12.1 us against x1.5 gives
    # t = 5.210 on 4 degrees of freedom, p = 0.0032, a 21% minimum effect: REGRESSION, exit 1.
    b, c = tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    with_repeat_medians(first, b, [10.0, 11.0, 12.1])
    with_repeat_medians(first, c, [15.0, 16.5, 18.15])
    p = run(["gate", "--baseline", b, "--current", c, "--format", "json"])
    assert p.returncode == 1, p.stdout + p.stderr
    case = json.loads(p.stdout)["cases"][0]
    assert case["verdict"] == "REGRESSION" and "3 vs 3 repeats" in case["reason"], case["reason"]
    assert abs(case["test"]["t"] - 5.210265) < 1e-5 and abs(case["test"]["p_slower"] - 0.003235) < 1e-5
    assert abs(case["test"]["min_effect"] - 0.21) < 1e-12
    # Measured 20x slower (every time multiplied): a regression wherever the repeats of each file
    # agree within a factor of about 1.6 (sd of log medians < 0.5); on a machine so loaded that its
    # own repeats differ more, the gate rightly cannot tell, and that is all it may say.
    p = run(base + ["--out", slow], np=2, env={"COLLBENCH_FAULT": "slow:factor=20"})
    assert p.returncode == 0, p.stderr
    p = run(["gate", "--baseline", first, "--current", slow, "--format", "json", "--allow-faults"])
    case = json.loads(p.stdout)["cases"][0]
    assert case["test"]["method"] == "repeats", case
    quiet = max(r["repeats"]["sd_log"] for r in cases(first) + cases(slow)) < 0.5
    if quiet:
        assert p.returncode == 1 and case["verdict"] == "REGRESSION", case["reason"]
    else:
        assert case["verdict"] in ("REGRESSION", "WARN", "PASS"), case["reason"]
