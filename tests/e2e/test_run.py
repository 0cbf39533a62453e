"""`collbench run`: records validate against the schema, rounding is recorded, output-file rules."""
import json
import os

from conftest import FAST, read_jsonl, run


def test_allreduce_jsonl_validates_against_schema(tmp_path, validator):
    out = tmp_path / "ar.jsonl"
    p = run(["run", "allreduce", "-b", "8", "-e", "64K", "-f", "8", "--format", "jsonl", "--out", out] + FAST, np=2)
    assert p.returncode == 0, p.stderr
    records = read_jsonl(out)
    assert records[0]["kind"] == "run_header"
    assert records[0]["launcher"] == "mpiexec"
    assert len(records[0]["hosts"]) == 2
    cases = records[1:]
    assert [c["bytes"] for c in cases] == [8, 64, 512, 4096, 32768]
    for rec in records:
        validator.validate(rec)
    for c in cases:
        assert c["checked"] and c["wrong"]["total"] == 0 and c["status"] == "ok"
        assert c["num_ranks"] == 2 and c["redop"] == "sum"
        assert c["time_us"]["p50"] > 0
        assert abs(c["busbw_gbps"] - c["algbw_gbps"] * 1.0) < 1e-12  # 2(n-1)/n = 1 at n = 2
        assert abs(c["algbw_gbps"] - c["bytes"] / (c["time_us"]["p50"] * 1e-6) / 1e9) < 1e-9
    # stdout carries the same records as JSONL
    stdout_cases = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    assert [c["case_key"] for c in stdout_cases] == [c["case_key"] for c in cases]


def test_alltoall_table_has_nccl_tests_columns():
    p = run(["run", "alltoall", "-b", "1K", "-e", "4K", "-f", "2", "-d", "bfloat16"] + FAST, np=2)
    assert p.returncode == 0, p.stderr
    header = [l for l in p.stdout.splitlines() if l.startswith("#") and "size" in l][0]
    for col in ["size", "count", "type", "redop", "time", "p99", "algbw", "busbw", "#wrong", "samples", "%bound"]:
        assert col in header
    rows = [l.split() for l in p.stdout.splitlines() if l and not l.startswith("#")]
    assert [int(r[0]) for r in rows] == [1024, 2048, 4096]
    assert all(r[2] == "bfloat16" and r[11] == "0" for r in rows)
    assert "# Out of bounds values : 0 OK" in p.stdout


def test_uneven_sizes_round_down_per_peer_and_record_bytes_moved(tmp_path, validator):
    out = tmp_path / "rs.jsonl"
    args = ["run", "reducescatter", "-b", "1000", "-e", "1000", "--out", out, "--format", "none"] + FAST
    p = run(args, np=3)
    assert p.returncode == 0, p.stderr
    case = read_jsonl(out)[1]
    validator.validate(case)
    # 250 float32 / 3 ranks = 83 -> 80 per rank (16-byte units) -> 960 B reduced
    assert (case["bytes"], case["count"], case["bytes_per_rank_recv"]) == (960, 80, 320)
    out2 = tmp_path / "a2a.jsonl"
    p = run(["run", "alltoall", "-b", "1000", "-e", "1000", "-d", "float64", "--out", out2, "--format", "none"] + FAST, np=3)
    assert p.returncode == 0, p.stderr
    case = read_jsonl(out2)[1]
    assert (case["bytes"], case["count"]) == (960, 120)


def test_every_dtype_and_redop_verifies_in_and_out_of_place(tmp_path):
    out = tmp_path / "all.jsonl"
    p = run(["run", "allreduce", "-b", "4K", "-e", "4K", "-d", "all", "-o", "all", "--in-place", "both",
             "--out", out, "--format", "none"] + FAST, np=2)
    assert p.returncode == 0, p.stderr
    cases = read_jsonl(out)[1:]
    assert len(cases) == 8 * 4 * 2
    assert all(c["wrong"]["total"] == 0 for c in cases)
    assert {c["in_place"] for c in cases} == {False, True}


def test_redop_all_gives_one_case_per_size_for_a_collective_without_reduction(tmp_path):
    out = tmp_path / "a2a.jsonl"
    p = run(["run", "alltoall", "-b", "1K", "-e", "4K", "-f", "4", "-o", "all", "--out", out, "--format", "none"]
            + FAST, np=2)
    assert p.returncode == 0, p.stderr
    keys = [c["case_key"] for c in read_jsonl(out)[1:]]
    assert len(keys) == 2 and len(set(keys)) == 2, keys


def test_corrupt_fault_fails_the_run_and_names_rank(tmp_path):
    out = tmp_path / "bad.jsonl"
    p = run(["run", "allreduce", "-b", "4K", "-e", "4K", "--out", out] + FAST, np=2,
            env={"COLLBENCH_FAULT": "corrupt:rank=1"})
    assert p.returncode == 1, p.stdout + p.stderr
    case = read_jsonl(out)[1]
    assert case["status"] == "failed"
    assert case["wrong"] == {"total": 1, "by_rank": {"1": 1}}
    assert case["fault"] == "corrupt:rank=1"
    assert read_jsonl(out)[0]["fault"] == "corrupt:rank=1"
    assert "FAILED" in p.stdout


def test_domain_scope_four_ranks_two_domains(tmp_path, validator):
    out = tmp_path / "dom.jsonl"
    p = run(["run", "allreduce", "-b", "64K", "-e", "64K", "--scope", "domain,global", "--ranks-per-domain", "2",
             "--out", out, "--format", "none"] + FAST, np=4)
    assert p.returncode == 0, p.stderr
    cases = read_jsonl(out)[1:]
    assert [c["scope"] for c in cases] == ["domain", "global"]
    for c in cases:
        validator.validate(c)
        assert c["domain_sizes"] == [2, 2] and c["num_domains"] == 2 and c["num_ranks"] == 4
        # auto: yield when the 4 ranks outnumber this host's cores (2 here), spin otherwise
        assert c["progress"] == ("yield" if len(os.sched_getaffinity(0)) < 4 else "spin")
    assert cases[0]["comm_ranks"] == 2 and cases[1]["comm_ranks"] == 4


def test_existing_output_needs_resume_or_force(tmp_path):
    out = tmp_path / "o.jsonl"
    base = ["run", "allreduce", "-b", "8", "-e", "64", "-f", "8", "--out", out, "--format", "none"] + FAST
    assert run(base, np=2).returncode == 0
    p = run(base, np=2)
    assert p.returncode == 2 and "--resume" in p.stderr and "--force" in p.stderr
    assert len(read_jsonl(out)) == 3  # untouched
    p = run(base + ["--resume"], np=2)
    assert p.returncode == 0, p.stderr
    assert len(read_jsonl(out)) == 3  # everything was already there
    p = run(["run", "allreduce", "-b", "8", "-e", "512", "-f", "8", "--out", out, "--format", "none", "--resume"] + FAST, np=2)
    assert p.returncode == 2 and "different configuration" in p.stderr
    p = run(base + ["--force"], np=2)
    assert p.returncode == 0 and len(read_jsonl(out)) == 3


def test_resume_continues_after_a_cut_file(tmp_path):
    out = tmp_path / "cut.jsonl"
    base = ["run", "alltoall", "-b", "64", "-e", "32K", "-f", "8", "--out", out, "--format", "none"] + FAST
    assert run(base, np=2).returncode == 0
    lines = out.read_text().splitlines(keepends=True)
    assert len(lines) == 5
    out.write_text("".join(lines[:3]) + lines[3][:25])  # header + 2 cases + a torn line
    p = run(base + ["--resume"], np=2)
    assert p.returncode == 0, p.stderr
    assert "truncated" in p.stderr
    lines = out.read_text().splitlines()
    records = [json.loads(line) for line in lines]  # every line is complete JSON again
    assert [r["bytes"] for r in records if r["kind"] == "case"] == [64, 512, 4096, 32768]


def test_list_names_everything():
    p = run(["run", "--list"])
    assert p.returncode == 0
    for word in ["allreduce", "alltoallv", "bfloat16", "float8e4m3", "mpi", "nccl", "hierarchical", "cb-multimem"]:
        assert word in p.stdout


def test_waived_algorithm_is_a_row_with_a_reason(tmp_path):
    out = tmp_path / "w.jsonl"
    p = run(["run", "allreduce", "-b", "4K", "-e", "4K", "--algo", "auto,nvls", "--out", out] + FAST, np=2)
    assert p.returncode == 0, p.stderr
    cases = read_jsonl(out)[1:]
    assert [c["status"] for c in cases] == ["ok", "waived"]
    assert "nvls" in cases[1]["reason"]
    assert "waived:" in p.stdout


def test_hierarchical_alltoall_verifies_on_every_domain_shape(tmp_path):
    # The two pack stages are block transpositions (backend/hierarchical.cpp transpose_blocks), one
    # strided copy per row of the shorter side: 4 ranks as 2 domains of 2 and as 4 domains of 1, 6
    # as 2 domains of 3 (fewer domains than ranks per domain: stage 1 copies each source row into a
    # destination column, pitch 2 blocks), in and out of place, every element checked.
    for np, per_domain, sizes in ((4, "2", [2, 2]), (4, "1", [1, 1, 1, 1]), (6, "3", [3, 3])):
        out = tmp_path / f"h{np}-{per_domain}.jsonl"
        p = run(["run", "alltoall", "--algo", "hierarchical", "-b", "96", "-e", "6K", "-f", "8", "--in-place", "both",
                 "--ranks-per-domain", per_domain, "--out", out, "--format", "none"] + FAST, np=np)
        assert p.returncode == 0, p.stderr
        cases = read_jsonl(out)[1:]
        assert len(cases) == 6, cases
        for c in cases:
            assert c["algo_used"] == "hierarchical" and c["domain_sizes"] == sizes
            assert c["status"] == "ok" and c["checked"] and c["wrong"]["total"] == 0, c
