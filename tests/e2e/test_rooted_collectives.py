"""reduce, gather and scatter (issue 36): verified exactly on 2 and 3 ranks with the root from -r, in
and out of place, every dtype (and every reduction for reduce); busbw as nccl-tests defines it; a
model bound and expected value in every record; the nccl-tests layout names nccl-tests' program
and `collbench import` reads it back as the same collective."""
import pytest

from conftest import FAST, read_jsonl, run

# collective -> (busbw factor at n ranks, extra flags)
ROOTED = {
    "reduce": (lambda n: 1.0, ["-o", "all"]),
    "gather": (lambda n: (n - 1) / n, []),
    "scatter": (lambda n: (n - 1) / n, []),
}
PROGRAM = {"reduce": "reduce_perf", "gather": "gather_perf", "scatter": "scatter_perf"}


def cases(path):
    return [r for r in read_jsonl(path) if r["kind"] == "case"]


@pytest.mark.parametrize("np", [2, 3])
@pytest.mark.parametrize("name", sorted(ROOTED))
def test_verified_with_root_1_in_and_out_of_place(tmp_path, validator, name, np):
    factor, extra = ROOTED[name]
    out = tmp_path / "r.jsonl"
    p = run(["run", name, "-b", "96", "-e", "12K", "-f", "8", "-r", "1", "-d", "all", "--in-place", "both",
             "--out", out, "--format", "none", "--system", "gb300-nvl72"] + extra + FAST, np=np)
    assert p.returncode == 0, p.stdout + p.stderr
    recs = cases(out)
    assert recs, p.stderr
    for r in recs:
        validator.validate(r)
        assert r["status"] == "ok" and r["checked"], r
        assert r["wrong"]["total"] == 0, r
        assert r["root"] == 1 and r["collective"] == name and r["num_ranks"] == np
        assert r["busbw_gbps"] == pytest.approx(r["algbw_gbps"] * factor(np), rel=1e-9), r
        assert r["model"]["bound_busbw_gbps"] > 0 and r["model"]["expected_busbw_gbps"] > 0, r
    assert {r["in_place"] for r in recs} == {True, False}
    assert len({r["dtype"] for r in recs}) >= 8
    if name == "reduce":
        assert {r["redop"] for r in recs} == {"sum", "prod", "min", "max"}


@pytest.mark.parametrize("name", sorted(ROOTED))
def test_nccl_tests_layout_imports_back_as_the_same_collective(tmp_path, name):
    p = run(["run", name, "-b", "1K", "-e", "4K", "-f", "4", "-r", "1", "--layout", "nccl-tests",
             "--out", tmp_path / "r.jsonl"] + FAST, np=2)
    assert p.returncode == 0, p.stderr
    assert f"# Collective test starting: {PROGRAM[name]}" in p.stdout, p.stdout
    (tmp_path / "r.log").write_text(p.stdout)
    imp = run(["import", tmp_path / "r.log", "--out", tmp_path / "i.jsonl"])
    assert imp.returncode == 0, imp.stderr
    got = cases(tmp_path / "i.jsonl")
    assert [(r["collective"], r["bytes"], r.get("root")) for r in got if not r["in_place"]] == [
        (name, 1024, 1), (name, 4096, 1)]


def test_model_prints_gather_bounds_on_a_system_profile():
    p = run(["model", "gather", "--system", "gb300-nvl72", "-b", "1M", "-e", "1M", "--ranks", "144"])
    assert p.returncode == 0, p.stderr
    assert "gather" in p.stdout
