"""`collbench sweep`: dry run, and a real sweep of every collective on 2 and 4 ranks."""
from conftest import SOURCE_DIR, read_jsonl, run

SMOKE = SOURCE_DIR / "profiles" / "sweeps" / "cpu-smoke.yaml"


def test_dry_run_prints_cases_time_and_memory():
    p = run(["sweep", "--dry-run", SMOKE])
    assert p.returncode == 0, p.stderr
    assert "case(s)" in p.stdout
    assert "estimated run time" in p.stdout
    assert "buffer memory per rank" in p.stdout
    assert "alltoallv" in p.stdout


def test_smoke_sweep_on_four_ranks_in_two_domains(tmp_path, validator):
    out = tmp_path / "smoke.jsonl"
    p = run(["sweep", SMOKE, "--ranks-per-domain", "2", "--out", out, "--format", "none"], np=4)
    assert p.returncode == 0, p.stderr
    records = read_jsonl(out)
    for r in records:
        validator.validate(r)
    cases = records[1:]
    assert {c["collective"] for c in cases} == {"allreduce", "reducescatter", "allgather", "alltoall", "alltoallv",
                                                 "broadcast", "sendrecv"}
    assert all(c["wrong"]["total"] == 0 and c["status"] == "ok" for c in cases)
    assert any(c["timing"] == "pipelined" for c in cases)
    assert records[0]["config"]["name"] == "cpu-smoke"
