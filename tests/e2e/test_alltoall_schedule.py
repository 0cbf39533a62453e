"""The MPI backend's all-to-all schedules side by side: the library's MPI_Alltoall(v) (`--algo auto`)
and collbench's posted one (`--algo linear`: MPI_Irecv/MPI_Isend to every peer at once, then one
wait). The record says which ran, the model bounds both as the direct exchange, and a collective
with no all-to-all is waived with the reason."""
from conftest import FAST, read_jsonl, run


def cases_of(path):
    return [r for r in read_jsonl(path) if r.get("kind") == "case"]


def test_record_names_the_schedule_and_both_verify_in_and_out_of_place(tmp_path, validator):
    out = tmp_path / "a2a.jsonl"
    p = run(["run", "alltoall", "-b", "1000", "-e", "64K", "-f", "64", "-d", "int32,bfloat16", "--in-place", "both",
             "--algo", "auto,linear", "--system", "gb300-nvl72", "--out", out, "--format", "none"] + FAST, np=3)
    assert p.returncode == 0, p.stderr
    cases = cases_of(out)
    assert len(cases) == 2 * 2 * 2 * 2  # sizes x dtypes x placement x schedules
    for c in cases:
        validator.validate(c)
        assert c["status"] == "ok" and c["checked"] and c["wrong"]["total"] == 0, c
    linear = [c for c in cases if c["algo_requested"] == "linear"]
    library = [c for c in cases if c["algo_requested"] == "auto"]
    assert len(linear) == len(library) == 8
    assert {c["algo_used"] for c in linear} == {"linear"}
    assert {c["algo_used"] for c in library} == {None}  # MPI does not say which algorithm it ran
    assert {c["in_place"] for c in linear} == {False, True}
    # The model bounds the posted schedule as the direct exchange, the library's `auto` the same.
    assert {c["model_algo"] for c in linear} == {"linear"}
    by_key = {(c["bytes"], c["dtype"], c["in_place"]): c["model"]["bound_time_us"] for c in library}
    for c in linear:
        assert c["model"]["bound_time_us"] == by_key[(c["bytes"], c["dtype"], c["in_place"])]


def test_moe_dispatch_runs_its_flat_exchange_on_the_posted_schedule(tmp_path):
    out = tmp_path / "moe.jsonl"
    p = run(["run", "moe-dispatch", "--tokens", "16", "--algo", "flat,linear", "--ranks-per-domain", "2",
             "--out", out, "--format", "none"] + FAST, np=4)
    assert p.returncode == 0, p.stderr
    cases = cases_of(out)
    assert [(c["algo_requested"], c["algo_used"]) for c in cases] == [("flat", None), ("linear", "linear")]
    assert all(c["status"] == "ok" and c["wrong"]["total"] == 0 for c in cases)
    assert cases[0]["bytes"] == cases[1]["bytes"]  # the same rows, another schedule


def test_linear_is_waived_where_no_all_to_all_runs(tmp_path):
    out = tmp_path / "ar.jsonl"
    p = run(["run", "allreduce", "-b", "4K", "-e", "4K", "--algo", "auto,linear", "--out", out] + FAST, np=2)
    assert p.returncode == 0, p.stderr
    cases = cases_of(out)
    assert [c["status"] for c in cases] == ["ok", "waived"]
    assert cases[1]["reason"] == ("algorithm 'linear' is an all-to-all schedule (alltoall, alltoallv, moe-dispatch, "
                                  "moe-combine, moe-roundtrip); allreduce runs none")
