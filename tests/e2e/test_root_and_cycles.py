"""Broadcast records carry their root (an added field), so a run over several roots keeps a record
and a row per root: the nccl-tests layout prints each row's root, `collbench import` reads it back
and root 0 keeps the case key it always had; other collectives' records have no `root`. And
nccl-tests' -N K (run cycles) is --repeats K."""
import re

from conftest import read_jsonl, run

QUICK = ["-n", "5", "-w", "1"]


def cases(path):
    return [r for r in read_jsonl(path) if r["kind"] == "case"]


def rows(stdout):
    return [l.split() for l in stdout.splitlines() if l.strip() and not l.startswith("#")]


def test_mixed_root_sweep_keeps_a_record_and_a_row_per_root(tmp_path, validator):
    sweep = tmp_path / "roots.yaml"
    sweep.write_text("name: roots\ndefaults: {backend: mpi, iters: 5, warmup: 1}\n"
                     "cases:\n  - collective: broadcast\n    bytes: [1K, 4K]\n    root: [0, 1]\n")
    res = run(["sweep", sweep, "--layout", "nccl-tests", "--out", tmp_path / "r.jsonl"], np=2)
    assert res.returncode == 0, res.stderr
    assert "repeat an earlier case" not in res.stderr
    recs = cases(tmp_path / "r.jsonl")
    for r in recs:
        validator.validate(r)
    assert [(r["bytes"], r["root"]) for r in recs] == [(1024, 0), (1024, 1), (4096, 0), (4096, 1)]
    assert [r["case_key"] for r in recs] == [
        "broadcast|-|float32|mpi|auto|global|outofplace|1024|2|2",
        "broadcast|-|float32|mpi|auto|global|outofplace|1024@root=1|2|2",
        "broadcast|-|float32|mpi|auto|global|outofplace|4096|2|2",
        "broadcast|-|float32|mpi|auto|global|outofplace|4096@root=1|2|2"]
    assert [(row[0], row[4]) for row in rows(res.stdout)] == [("1024", "0"), ("1024", "1"), ("4096", "0"),
                                                               ("4096", "1")]
    (tmp_path / "r.log").write_text(res.stdout)
    imp = run(["import", tmp_path / "r.log", "--out", tmp_path / "i.jsonl"])
    assert imp.returncode == 0, imp.stderr
    got = cases(tmp_path / "i.jsonl")
    assert [(r["bytes"], r["root"], r["nccl_tests"]["root"]) for r in got] == [(1024, 0, 0), (1024, 1, 1),
                                                                              (4096, 0, 0), (4096, 1, 1)]
    assert [r["case_key"].replace("|nccl|", "|mpi|") for r in got] == [r["case_key"] for r in recs]
    # the report reads the records back, one row per root
    rep = run(["report", tmp_path / "r.jsonl", "--format", "csv"])
    assert rep.returncode == 0, rep.stderr
    lines = [l for l in rep.stdout.splitlines() if ",broadcast," in l]
    assert [l.rsplit(",", 7)[1] for l in lines] == [r["case_key"] for r in recs], rep.stdout
    assert [l.rsplit(",", 1)[1] for l in lines] == ["0", "1", "0", "1"]  # the root column, last


def test_other_collectives_have_no_root_field(tmp_path):
    res = run(["run", "allreduce", "-b", "1K", "-e", "1K", *QUICK, "--out", tmp_path / "a.jsonl"], np=2)
    assert res.returncode == 0, res.stderr
    (rec,) = cases(tmp_path / "a.jsonl")
    assert "root" not in rec


def test_run_cycles_are_repeats(tmp_path, validator):
    res = run(["run", "allreduce", "-b", "1K", "-e", "1K", *QUICK, "-N", "2", "--out", tmp_path / "n.jsonl"], np=2)
    assert res.returncode == 0, res.stderr
    header, rec = read_jsonl(tmp_path / "n.jsonl")
    validator.validate(rec)
    assert header["config"]["repeats"] == 2
    assert rec["repeats"]["k"] == 2 and len(rec["repeats"]["p50_us"]) == 2
    assert rec["repeats"]["iterations"] == [5, 5] and rec["iterations"] == 10
    assert re.search(r"repeats 2: p50", res.stdout), res.stdout
