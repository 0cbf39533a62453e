"""The sweep file's `budget` key: the stopping budget of docs/measurement.md step 6 (`--budget` on
the command line), in `defaults` and per entry; the command line's --budget overrides it as it
does every stop key; a bad value is exit 2 naming file, line, key and value."""
from conftest import read_jsonl, run

SWEEP = """name: budget
defaults: {backend: mpi, max_noise: 0.000001, min_time: 0s, max_time: 20s, min_iters: 1,
           max_iters: 100000, warmup: 1, budget: 1ms}
cases:
  - {collective: allreduce, bytes: 1K}
  - {collective: allreduce, bytes: 2K, budget: 0, max_iters: 2000}
"""


def test_budget_from_the_file_stops_cases_and_zero_turns_it_off(tmp_path, validator):
    (tmp_path / "b.yaml").write_text(SWEEP)
    res = run(["sweep", tmp_path / "b.yaml", "--out", tmp_path / "b.jsonl"], np=2)
    assert res.returncode == 0, res.stderr
    header, first, second = read_jsonl(tmp_path / "b.jsonl")
    assert [c["budget_s"] for c in header["config"]["cases"]] == [0.001, 0.0]
    validator.validate(first)
    # the budget stops the case after its 100 iterations and 1 ms (at the end of a round), long
    # before the 100,000 iterations that would stop it otherwise
    assert first["stop_reason"] == "budget" and 100 <= first["iterations"] < 100000, first["iterations"]
    # off: nothing but max_iters stops a case that never reaches a 0.0001% interval
    assert (second["stop_reason"], second["iterations"]) == ("max_iters", 2000)


def test_command_line_budget_overrides_the_file(tmp_path):
    (tmp_path / "b.yaml").write_text(SWEEP)
    res = run(["sweep", "--dry-run", tmp_path / "b.yaml"])
    assert res.returncode == 0, res.stderr
    res = run(["sweep", tmp_path / "b.yaml", "--budget", "0", "--max-iters", "120", "--out", tmp_path / "o.jsonl"],
              np=2)
    assert res.returncode == 0, res.stderr
    header, *recs = read_jsonl(tmp_path / "o.jsonl")
    assert [c["budget_s"] for c in header["config"]["cases"]] == [0.0, 0.0]
    assert [c["max_iters"] for c in header["config"]["cases"]] == [120, 120]
    assert [(r["stop_reason"], r["iterations"]) for r in recs] == [("max_iters", 120)] * 2


def test_bad_budget_is_exit_2_naming_file_line_key_and_value(tmp_path):
    (tmp_path / "bad.yaml").write_text("name: x\ncases:\n  - collective: allreduce\n    bytes: 8\n    budget: soon\n")
    res = run(["sweep", tmp_path / "bad.yaml", "--out", tmp_path / "never.jsonl"])
    assert res.returncode == 2
    assert res.stderr.endswith(f"collbench: error: {tmp_path / 'bad.yaml'}:5: key 'budget': invalid duration 'soon': "
                               "expected a number with a unit, e.g. 2s, 500ms, 100us, 250ns, 1.5m, 1h (a bare "
                               "number is seconds)\n"), res.stderr
    assert not (tmp_path / "never.jsonl").exists()
