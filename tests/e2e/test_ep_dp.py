"""`ep-dp-concurrent`: EP all-to-all inside every domain concurrently with DP all-reduce across
domains. At 4 ranks in 2 domains of 2 it verifies exactly and its records carry each part alone,
both at once and the interference ratio (schema-valid); with a system profile the bound is the
slower part's; one domain is waived with the reason; bad flags exit 2; `accept` lists and judges
the check (max_interference). Correctness only: no timing assertions (ranks share cores)."""
import json

from conftest import FAST, read_jsonl, run

RPD2 = ["--ranks-per-domain", "2"]


def cases(path):
    return [r for r in read_jsonl(path) if r["kind"] == "case"]


def test_run_verifies_and_records_side_timings(tmp_path, validator):
    out = tmp_path / "epdp.jsonl"
    p = run(["run", "ep-dp-concurrent", *RPD2, "-b", "64K", "-e", "1M", *FAST, "--out", out], np=4)
    assert p.returncode == 0, p.stderr
    recs = cases(out)
    assert [r["bytes"] for r in recs] == [65536, 131072, 262144, 524288, 1048576]
    for line in read_jsonl(out):
        validator.validate(line)
    for r in recs:
        assert r["status"] == "ok", r["reason"]
        assert r["checked"] and r["wrong"]["total"] == 0
        assert r["domain_sizes"] == [2, 2] and r["comm_ranks"] == 4
        assert r["algo_used"] is None  # the library's own all-to-all and all-reduce
        assert r["busbw_gbps"] == 0
        c = r["concurrent"]
        assert c["ep_bytes"] == r["bytes"] and c["dp_bytes"] == r["bytes"]  # dp_bytes defaults to -b
        assert c["ep_ranks"] == 2 and c["dp_ranks"] == 2
        assert c["ep_alone_us"] > 0 and c["dp_alone_us"] > 0
        assert c["both_us"] == r["time_us"]["p50"]
        assert abs(c["interference"] - c["both_us"] / max(c["ep_alone_us"], c["dp_alone_us"])) < 1e-9
        assert r["bytes_per_rank_send"] == 2 * r["bytes"]
        assert f"{r['bytes']}@dp_bytes={r['bytes']}|" in r["case_key"]


def test_in_place_dp_bytes_and_model(tmp_path, validator):
    out = tmp_path / "epdp.jsonl"
    p = run(["run", "ep-dp-concurrent", *RPD2, "-b", "256K", "-e", "256K", "--dp-bytes", "1M", "--in-place", "both", "-d", "bfloat16",
             "-o", "max", "--system", "gb300-nvl72", *FAST, "--out", out], np=4)
    assert p.returncode == 0, p.stderr
    recs = cases(out)
    assert [r["in_place"] for r in recs] == [False, True]
    for r in recs:
        validator.validate(r)
        assert r["status"] == "ok" and r["wrong"]["total"] == 0
        c = r["concurrent"]
        assert c["dp_bytes"] == 1 << 20 and c["ep_bytes"] == 256 << 10
        # Disjoint links: the bound is the slower part's (docs/model.md, "Concurrent parts").
        m = r["model"]
        assert m["bound_time_us"] == max(c["ep_bound_us"], c["dp_bound_us"])
        assert m["expected_time_us"] == max(c["ep_expected_us"], c["dp_expected_us"])
        assert m["bound_busbw_gbps"] == 0
        assert r["model_algo"] == "concurrent"
        assert "bound = the slowest part" in r["model_note"]


def test_one_domain_is_waived(tmp_path):
    out = tmp_path / "epdp.jsonl"
    p = run(["run", "ep-dp-concurrent", "--ranks-per-domain", "2", "-b", "64K", "-e", "64K", *FAST, "--out", out], np=2)
    assert p.returncode == 0, p.stderr
    (r,) = cases(out)
    assert r["status"] == "waived"
    assert "needs at least 2 domains" in r["reason"]
    p = run(["run", "ep-dp-concurrent", *RPD2, "-b", "64K", "-e", "64K", "--scope", "domain", *FAST, "--format", "jsonl"], np=4)
    assert p.returncode == 0, p.stderr
    (r,) = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    assert r["status"] == "waived" and "use --scope global" in r["reason"]


def test_bad_flags_exit_2():
    p = run(["run", "allreduce", "--dp-bytes", "1M"])
    assert p.returncode == 2 and "--dp-bytes applies only to ep-dp-concurrent, not allreduce" in p.stderr
    p = run(["run", "ep-dp-concurrent", "--dp-bytes", "12Q"])
    assert p.returncode == 2 and "--dp-bytes" in p.stderr and "'12Q'" in p.stderr
    p = run(["run", "ep-dp-concurrent", "--dp-bytes", "0"])
    assert p.returncode == 2 and "must be at least one element" in p.stderr


def test_accept_dry_run_lists_the_check():
    for name in ("gb300-nvl72", "gb200-nvl72"):
        p = run(["accept", name, "--dry-run", "--assume-ranks", "144"])
        assert p.returncode == 0, p.stderr
        lines = [l for l in p.stdout.splitlines() if "fabric-ep-dp-concurrent" in l]
        assert len(lines) == 2 * 3, p.stdout  # 2 sizes x 3 repetitions
        assert all("ep-dp-concurrent" in l and "global" in l for l in lines)


PROFILE = """name: epdp-test
checks:
  - name: epdp
    collective: ep-dp-concurrent
    ranks_per_domain: 2
    bytes: 64K
    dp_bytes: 128K
    repetitions: 1
    max_time: 100ms
    threshold:
      max_interference: {limit}
"""


def test_accept_judges_interference(tmp_path):
    prof = tmp_path / "epdp.yaml"
    prof.write_text(PROFILE.format(limit=100))
    out = tmp_path / "acc"
    p = run(["accept", prof, "--out-dir", out], np=4)
    assert p.returncode == 0, p.stdout + p.stderr
    (row,) = json.loads((out / "verdict.json").read_text())["rows"]
    assert row["verdict"] == "PASS", row["reason"]
    assert row["interference"] > 0
    assert row["limits"][0]["kind"] == "max_interference" and row["limits"][0]["metric"] == "interference"
    assert "(ceiling)" in row["reason"]
    prof.write_text(PROFILE.format(limit=0.5))
    p = run(["accept", prof, "--dry-run", "--assume-ranks", "4"])
    assert p.returncode == 2
    assert "threshold.max_interference" in p.stderr and "must be at least 1" in p.stderr
