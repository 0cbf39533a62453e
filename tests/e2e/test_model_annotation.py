"""Bound-relative results: `collbench calibrate` writes cpu-local, after which CPU runs carry a
model block and print %bound; an explicit --system works the same way."""
from conftest import FAST, read_jsonl, run


def test_calibrated_cpu_local_gives_bounds(tmp_path, validator):
    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    p = run(["calibrate", "--repetitions", "2"], np=2, env=env)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "cfg" / "collbench" / "cpu-local.yaml").exists()
    out = tmp_path / "r.jsonl"
    p = run(["run", "allreduce", "-b", "64K", "-e", "1M", "-f", "16", "--out", out] + FAST, np=2, env=env)
    assert p.returncode == 0, p.stderr
    records = read_jsonl(out)
    assert records[0]["system"]["name"] == "cpu-local"
    assert len(records[0]["system"]["digest"]) == 16
    for c in records[1:]:
        validator.validate(c)
        m = c["model"]
        assert m["system"] == "cpu-local"
        assert m["bound_time_us"] > 0 and m["expected_time_us"] >= m["bound_time_us"]
        assert abs(m["efficiency"] - m["bound_time_us"] / c["time_us"]["p50"]) < 1e-9
    rows = [l.split() for l in p.stdout.splitlines() if l and not l.startswith("#")]
    assert all(r[-1] != "-" for r in rows)  # %bound printed


def test_explicit_system_profile(tmp_path, validator):
    out = tmp_path / "s.jsonl"
    p = run(["run", "alltoall", "-b", "1M", "-e", "1M", "--system", "gb300-nvl72", "--ranks-per-domain", "1",
             "--out", out] + FAST, np=2)
    assert p.returncode == 0, p.stderr
    c = read_jsonl(out)[1]
    validator.validate(c)
    assert c["model"]["system"] == "gb300-nvl72"
    # two domains of one GPU: all traffic leaves the domain; algbw bound = B_out / f with f = 1/2
    assert abs(c["model"]["bound_algbw_gbps"] - 200.0) < 1.0


def test_without_profile_a_hint_and_no_model(tmp_path):
    out = tmp_path / "n.jsonl"
    p = run(["run", "allreduce", "-b", "4K", "-e", "4K", "--out", out] + FAST, np=2)
    assert p.returncode == 0
    assert "calibrate" in p.stderr
    assert read_jsonl(out)[1]["model"] is None


def test_unknown_system_exits_2():
    p = run(["run", "allreduce", "-b", "8", "-e", "8", "--system", "gb300-nvl27"])
    assert p.returncode == 2
    assert "gb300-nvl27" in p.stderr
