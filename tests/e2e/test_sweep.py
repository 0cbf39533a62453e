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


def _dry_run_memory(tmp_path, yaml_text, ranks=2):
    f = tmp_path / "s.yaml"
    f.write_text(yaml_text)
    p = run(["sweep", "--dry-run", f, "--assume-ranks", str(ranks)])
    assert p.returncode == 0, p.stderr
    line = next(l for l in p.stdout.splitlines() if "buffer memory per rank" in l)
    value = line.split("at most ")[1].split(" ")[0]
    units = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}
    for unit in sorted(units, key=len, reverse=True):
        if value.endswith(unit):
            return float(value[: -len(unit)]) * units[unit]
    raise AssertionError(line)


def test_dry_run_memory_follows_the_collectives_shape(tmp_path):
    # all-reduce 1 MiB: send + recv out of place, one buffer in place.
    assert _dry_run_memory(tmp_path, "name: a\ncases:\n  - {collective: allreduce, bytes: 1M}\n") == 2 * 1024**2
    assert _dry_run_memory(tmp_path, "name: a\ncases:\n  - {collective: allreduce, bytes: 1M, in_place: true}\n") == 1024**2
    # MoE dispatch, 32 tokens of 7392-byte rows on 2 ranks: a rank sends each token at least once
    # and at most to both ranks, and receives at most 2 x 32 rows: between 32 and 4 x 32 rows (the
    # size comes from the routed workload, not from `bytes`, which MoE cases do not have).
    moe = _dry_run_memory(tmp_path, "name: m\ncases:\n  - {collective: moe-dispatch, workload: deepseek-v3, tokens: 32}\n")
    assert 32 * 7392 <= moe <= 4 * 32 * 7392 + 64, moe


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
