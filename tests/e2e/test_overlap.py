"""Overlap mode end to end (docs/overlap.md): `collbench run ... --overlap COMPUTE` writes schema-valid
records whose overlap block is consistent, the console table and CSV render it, the reports carry
it (case Markdown, weak-scaling exposed communication per N), and bad --overlap input exits 2
naming the flag and the accepted values."""
import json
import re

import pytest

from conftest import FAST, read_jsonl, run


def overlap_run(tmp_path, np, extra, name="ov.jsonl"):
    out = tmp_path / name
    r = run(["run", "allreduce", "-b", "64K", "-e", "256K", "-f", "4", "-n", "3", "-w", "1",
             "--out", out, *extra], np=np)
    assert r.returncode == 0, r.stderr
    return r, read_jsonl(out)


@pytest.mark.parametrize("np", [2, 4])
def test_records_carry_consistent_overlap_fields(tmp_path, validator, np):
    r, lines = overlap_run(tmp_path, np, ["--overlap", "gemm:m=64,n=64,k=64"])
    cases = [c for c in lines if c["kind"] == "case"]
    assert len(cases) == 2
    for c in cases:
        validator.validate(c)
        o = c["overlap"]
        assert c["wrong"]["total"] == 0 and c["checked"]
        assert o["exposed_us"] == pytest.approx(o["t_both_us"] - o["t_compute_us"])
        lo = min(o["t_comm_us"], o["t_compute_us"])
        assert o["efficiency"] == pytest.approx((o["t_comm_us"] + o["t_compute_us"] - o["t_both_us"]) / lo)
        assert o["compute"]["name"] == "gemm" and o["compute"]["device"] == "cpu"
        assert o["compute"]["gemm"] == {"m": 64, "n": 64, "k": 64, "dtype": "float32"}
        assert o["progress"] == "yield" and o["compute_wrong"] == 0
        assert "overlap=gemm:m=64,n=64,k=64" in c["case_key"]
        # issue 37 item 11: 95% bootstrap intervals of efficiency and exposed time, shown with the
        # values in the console.
        for key in ("efficiency_ci", "exposed_ci_us"):
            low, high = o[key]
            assert low <= high, (key, o)
    # The console table shows the overlap line under each row, with the intervals.
    assert r.stdout.count("#   overlap gemm 64x64x64 fp32") == 2, r.stdout
    assert len(re.findall(r"-> exposed (?:within noise of 0 \()?-?[\d.]+ us \[-?[\d.]+, -?[\d.]+\]\)?, efficiency ",
                          r.stdout)) == 2, r.stdout
    # The run header keeps the overlap setting in its configuration (for --resume).
    assert lines[0]["config"]["cases"][0]["overlap"] == "gemm:m=64,n=64,k=64"


def test_pipeline_moe_roundtrip(tmp_path, validator):
    out = tmp_path / "moe.jsonl"
    r = run(["run", "moe-roundtrip", "--tokens", "64", "-n", "3", "-w", "1", "--overlap",
             "gemm:workload=deepseek-v3,tokens_per_expert=8", "--overlap-chunks", "2", "--out", out], np=2)
    assert r.returncode == 0, r.stderr
    (case,) = [c for c in read_jsonl(out) if c["kind"] == "case"]
    validator.validate(case)
    assert case["wrong"]["total"] == 0
    p = case["overlap"]["pipeline"]
    assert p["chunks"] == 2 and p["stages"] == 2 and len(p["stage_us"]) == 2
    assert p["ideal_us"] == pytest.approx(max(case["overlap"]["t_comm_us"], case["overlap"]["t_compute_us"]))
    # 8 tokens per expert for the micro-batch, 4 per chunk; DeepSeek-V3 expert FFN 7168 -> 2048.
    assert case["overlap"]["compute"]["gemm"] == {"m": 4, "n": 2048, "k": 7168, "dtype": "float32"}
    assert "pipeline 2 chunks" in r.stdout


def test_csv_and_markdown_reports(tmp_path):
    r, _ = overlap_run(tmp_path, 2, ["--overlap", "sleep:time=2ms", "--format", "csv"])
    header, *rows = [line for line in r.stdout.splitlines() if line]
    assert header.endswith("t_comm_us,t_compute_us,t_both_us,exposed_us,overlap_efficiency,root")
    assert all(len(row.split(",")) == len(header.split(",")) for row in rows)
    assert all(row.split(",")[-4] != "" for row in rows)
    rep = run(["report", tmp_path / "ov.jsonl", "--format", "markdown"])
    assert rep.returncode == 0, rep.stderr
    text = rep.stdout
    assert "Overlap (collective beside a compute load" in text
    assert "sleep 2000 us, 1 thread on cpu" in text


def test_weak_scaling_shows_exposed_communication_per_n(tmp_path):
    files = []
    for np in (1, 2):
        out = tmp_path / f"ws{np}.jsonl"
        r = run(["run", "allreduce", "-b", "64K", "-e", "64K", "-n", "3", "-w", "1", "--overlap", "sleep:time=2ms",
                 "--out", out], np=np)
        assert r.returncode == 0, r.stderr
        files.append(out)
    outdir = tmp_path / "ws"
    rep = run(["report", "weak-scaling", *files, "--out", outdir, "--no-plots", "--ranks", "none"])
    assert rep.returncode == 0, rep.stderr
    md = (outdir / "report.md").read_text()
    assert "Exposed communication beside compute (sleep:time=2ms)" in md
    data = json.loads((outdir / "report.json").read_text())
    group = data["groups"][0]
    assert group["key"]["overlap"] == "sleep:time=2ms"
    assert [p["overlap"] is not None for p in group["points"] if not p["projected"]] == [True, True]


@pytest.mark.parametrize("args, needle", [
    (["--overlap", "gemn"], "accepted: gemm, stream, sleep"),
    (["--overlap", "gemm:z=1"], "accepted: m, n, k, workload"),
    (["--overlap", "gemm:m=0"], "m=0"),
    (["--overlap", "sleep:time=soon"], "--overlap"),
    (["--overlap-chunks", "2"], "--overlap-chunks needs --overlap"),
])
def test_bad_overlap_input_exits_2(args, needle):
    r = run(["run", "allreduce", "-b", "1K", "-e", "1K", *FAST, *args], np=1)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert needle in r.stderr, r.stderr
    assert "--overlap" in r.stderr
