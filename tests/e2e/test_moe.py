"""MoE harness end to end: `collbench run moe-*` and the CPU MoE sweep write schema-valid records
whose workload block (per-class bytes, counts exchange, imbalance) matches the traffic matrix and
whose results verify; bad MoE flags exit 2 naming the value; `collbench model moe-*` prints the
DeepSeek-V3 message-size table of docs/hardware-context.md section 6."""
import json
import time

import pytest

from conftest import FAST, SOURCE_DIR, read_jsonl, run

CPU_SWEEP = SOURCE_DIR / "profiles" / "sweeps" / "moe-deepseek-v3-cpu.yaml"
EP_SWEEP = SOURCE_DIR / "profiles" / "sweeps" / "moe-deepseek-v3-ep.yaml"

# A cpu-local profile with round figures (1 GB/s per direction, 10 us per hop), so that runs carry
# a bound without calibrating.
CPU_LOCAL = """name: cpu-local
description: test profile
kind: cpu
scale_up: {bandwidth: 1GB/s per-direction, hop_latency: 10us}
scale_out: {nics_per_gpu: 1, nic_bandwidth: 1GB/s per-direction, hop_latency: 10us, fabric: shared-memory}
in_switch: {supported: false}
efficiency: {scale_up: 1.0, scale_out: 1.0}
sources: ["test"]
"""


def check_workload(case, domain_of):
    """The record's per-class bytes and totals agree with its own traffic matrix and placement.

    traffic_matrix[s][d] is in the dispatch direction (rows from token owner s to expert rank d,
    times the bytes per row of the operation); combine rows travel the other way."""
    w = case["workload"]
    n = case["num_ranks"]
    tm = w["traffic_matrix"]
    assert len(tm) == n and all(len(row) == n for row in tm)
    d_row, c_row = w["bytes_per_row"]["dispatch"], w["bytes_per_row"]["combine"]
    d_row = d_row if case["collective"] != "moe-combine" else 0
    c_row = c_row if case["collective"] != "moe-dispatch" else 0
    assert all(v % (d_row + c_row) == 0 for row in tm for v in row)
    rows = [[v // (d_row + c_row) for v in row] for row in tm]
    assert sum(map(sum, rows)) == w["rows_total"]
    # bytes each rank sends each other rank, in the direction they travel
    m = [[d_row * rows[s][d] + c_row * rows[d][s] for d in range(n)] for s in range(n)]
    in_domain = sum(m[s][d] for s in range(n) for d in range(n) if s != d and domain_of(s) == domain_of(d))
    off_domain = sum(m[s][d] for s in range(n) for d in range(n) if domain_of(s) != domain_of(d))
    total = sum(map(sum, m))
    assert w["bytes_in_domain"] == in_domain
    assert w["bytes_off_domain"] == off_domain
    assert case["bytes_logical_total"] == total
    sends = [sum(row) for row in m]
    recvs = [sum(m[s][d] for s in range(n)) for d in range(n)]
    assert case["bytes_max_rank"] == max(sends + recvs) == case["bytes"]
    per_rank = w["link_bytes_per_rank"]
    for r in range(n):
        off_send = sum(m[r][d] for d in range(n) if domain_of(d) != domain_of(r))
        off_recv = sum(m[s][r] for s in range(n) if domain_of(s) != domain_of(r))
        assert per_rank["send_off_domain"][r] == off_send
        assert per_rank["recv_off_domain"][r] == off_recv
    assert 0 <= w["hottest_rank"] < n
    assert w["imbalance"] >= 1.0 and 0.0 <= w["gini"] < 1.0


def test_run_moe_dispatch_flags_expand_and_verify(tmp_path, validator):
    out = tmp_path / "moe.jsonl"
    p = run(["run", "moe-dispatch", "--tokens", "16", "--routing", "uniform", "--routing", "lognormal,sigma=1.0",
             "--ranks-per-domain", "1", "--algo", "flat,hierarchical", "--out", out] + FAST, np=2)
    assert p.returncode == 0, p.stdout + p.stderr
    records = read_jsonl(out)
    for rec in records:
        validator.validate(rec)
    cases = records[1:]
    assert len(cases) == 4  # 2 algorithms x 2 routings
    assert [c["algo_requested"] for c in cases] == ["flat", "flat", "hierarchical", "hierarchical"]
    assert len({c["case_key"] for c in cases}) == 4
    assert records[0]["config"]["cases"][1]["params"] == {"tokens": "16", "routing": "{popularity: lognormal, sigma: 1.0}"}
    for c in cases:
        assert c["status"] == "ok" and c["checked"] and c["wrong"]["total"] == 0
        assert c["dtype"] == "float8e4m3"  # the workload's wire format
        w = c["workload"]
        assert w["name"] == "deepseek-v3" and w["tokens_per_rank"] == 16
        assert w["counts_exchange"] == "timed"
        assert isinstance(w["counts_exchange_us"], (int, float)) and w["counts_exchange_us"] > 0
        assert w["bytes_per_row"] == {"dispatch": 7392, "combine": 14336}
        # two domains of one rank: every byte between ranks leaves the domain
        assert w["bytes_in_domain"] == 0 and w["bytes_off_domain"] > 0
        check_workload(c, lambda r: r)
    assert cases[0]["workload"]["routing"].startswith("uniform")
    assert cases[1]["workload"]["routing"].startswith("lognormal(sigma=1)")
    # The console table names what ran.
    assert "moe-dispatch" in p.stdout or "float8e4m3" in p.stdout


def test_run_moe_combine_untimed_counts_copy_rows(tmp_path, validator):
    out = tmp_path / "rt.jsonl"
    p = run(["run", "moe-roundtrip", "--tokens", "8", "--rows", "copy", "--counts-exchange", "untimed,timed",
             "--workload", "deepseek-v3-bf16", "--format", "none", "--out", out] + FAST, np=2)
    assert p.returncode == 0, p.stdout + p.stderr
    cases = read_jsonl(out)[1:]
    assert [c["workload"]["counts_exchange"] for c in cases] == ["untimed", "timed"]
    for c in cases:
        validator.validate(c)
        assert c["wrong"]["total"] == 0
        assert c["dtype"] == "bfloat16"
        w = c["workload"]
        assert w["row_convention"] == "copy"
        assert w["rows_total"] == 2 * 8 * 8  # copy rows: T x k per rank
        assert w["counts_exchange_us"] > 0  # timed apart from the exchange in both modes
        check_workload(c, lambda r: 0)  # no placement given: one domain of 2


def test_cpu_sweep_four_ranks_two_domains_with_bounds(tmp_path, validator):
    cfg = tmp_path / "cfg" / "collbench"
    cfg.mkdir(parents=True)
    (cfg / "cpu-local.yaml").write_text(CPU_LOCAL)
    out = tmp_path / "sweep.jsonl"
    start = time.monotonic()
    p = run(["sweep", CPU_SWEEP, "--ranks-per-domain", "2", "--out", out, "--max-time", "100ms", "--max-iters", "10"],
            np=4, env={"XDG_CONFIG_HOME": str(tmp_path / "cfg")})
    elapsed = time.monotonic() - start
    assert p.returncode == 0, p.stdout + p.stderr
    records = read_jsonl(out)
    assert records[0]["system"]["name"] == "cpu-local"
    assert records[0]["config"]["cases"][0]["params"] == {"workload": "deepseek-v3", "tokens": "32",
                                                          "routing": "{popularity: uniform}"}
    cases = records[1:]
    assert len(cases) == 2 * 2 * 2 * 2 + 2 * 2
    for c in cases:
        validator.validate(c)
        assert c["status"] == "ok" and c["wrong"]["total"] == 0, c["reason"]
        assert c["domain_sizes"] == [2, 2]
        w = c["workload"]
        assert w["bytes_in_domain"] > 0 and w["bytes_off_domain"] > 0
        check_workload(c, lambda r: r // 2)
        m = c["model"]
        assert m["system"] == "cpu-local" and m["bound_time_us"] > 0
        # Bound of the traffic matrix at 1 GB/s: the busiest rank's busier link class and direction.
        lb = w["link_bytes_per_rank"]
        worst = max(max(lb[k][r] for k in lb) for r in range(4))
        assert abs(m["bound_time_us"] - worst / 1e9 * 1e6) < 1e-6 * m["bound_time_us"] + 1e-9
    assert {c["algo_requested"] for c in cases} == {"flat", "hierarchical"}
    assert {c["collective"] for c in cases} == {"moe-dispatch", "moe-combine", "moe-roundtrip"}
    skewed = [c for c in cases if c["workload"]["routing"].startswith("lognormal")]
    uniform = [c for c in cases if c["workload"]["routing"].startswith("uniform")]
    assert skewed and uniform
    assert {c["workload"]["counts_exchange"] for c in cases if c["collective"] == "moe-roundtrip"} == {"timed", "untimed"}
    # The table prints %bound for every row, and under it what ran and the per-class bytes.
    rows = [l.split() for l in p.stdout.splitlines() if l.strip() and not l.startswith("#")]
    assert len(rows) == len(cases)
    assert all(r[-1] != "-" for r in rows)
    notes = [l for l in p.stdout.splitlines() if l.startswith("#   deepseek-v3 T=")]
    assert len(notes) == len(cases)
    for note, c in zip(notes, cases, strict=True):
        assert f"T={c['workload']['tokens_per_rank']} " in note
        assert f"in-domain {c['workload']['bytes_in_domain'] / 1e6:.3g} off-domain" in note
        assert f"off-domain {c['workload']['bytes_off_domain'] / 1e6:.3g} " in note
    assert elapsed < 300, elapsed  # minutes would mean the routed estimate or the runs went quadratic


def test_ep_sweep_parses_and_scales():
    p = run(["sweep", "--dry-run", EP_SWEEP, "--assume-ranks", "1024"])
    assert p.returncode == 0, p.stderr
    assert "system gb300-nvl72" in p.stdout
    lines = [l for l in p.stdout.splitlines() if l.strip() and not l.startswith("#")]
    # 2 x 2 x 2 x 2 uniform + 2 x 2 x 2 x 3 skewed + 2 x 2 x 2 roundtrip
    assert len(lines) == 16 + 24 + 8
    assert all(l.split()[1].startswith("moe-") for l in lines)
    # The workload's wire format is the dtype, and the MoE parameters show per case.
    assert all(l.split()[3] == ("bfloat16" if l.split()[1] == "moe-combine" else "float8e4m3") for l in lines)
    assert sum("ep_size=256" in l for l in lines) == 24 and sum("imbalance=1.25" in l for l in lines) == 8
    assert sum("counts_exchange=untimed" in l for l in lines) == 4
    # Buffer memory of routed cases is estimated only up to 64 ranks (it routes every token).
    assert "48 case(s) sized by routing not included" in p.stdout, p.stdout


BAD = [
    (["run", "moe-dispatch", "--counts-exchange", "sometimes"], ["--counts-exchange", "'sometimes'", "timed", "untimed"]),
    (["run", "moe-dispatch", "--tokens", "12x"], ["--tokens", "'12x'"]),
    (["run", "moe-dispatch", "--rows", "triple"], ["--rows", "'triple'", "copy", "dedup"]),
    (["run", "moe-dispatch", "--routing", "bimodal"], ["--routing", "'bimodal'", "lognormal"]),
    (["run", "moe-dispatch", "--routing", "popularity=lognormal,sigmaa=1"], ["'sigmaa'", "did you mean 'sigma'"]),
    (["run", "moe-dispatch", "--routing", "lognormal,sigma"], ["'sigma'", "key=value"]),
    (["run", "moe-dispatch", "--workload", "deepseek-v9"], ["'deepseek-v9'", "deepseek-v3"]),
    (["run", "moe-dispatch", "--ep-size", "0"], ["--ep-size", "'0'"]),
    (["run", "moe-dispatch", "--imbalance", "lots"], ["--imbalance", "'lots'"]),
    (["run", "moe-combine", "--seed", "x1"], ["--seed", "'x1'"]),
    (["run", "allreduce", "--tokens", "128"], ["--tokens", "moe-dispatch", "allreduce"]),
    (["run", "alltoall", "--routing", "uniform"], ["--routing", "alltoall"]),
    (["run", "moe-dispatch", "-b", "1M"], ["-b/--minbytes", "--tokens"]),
    (["run", "moe-dispatch", "-e", "1G"], ["-e/--maxbytes", "--tokens"]),
    (["run", "moe-combine", "-d", "bfloat16"], ["-d/--dtype", "deepseek-v3-bf16"]),
    (["model", "moe-dispatch", "--ep-size", "7"], ["--ep-size 7", "256"]),
    (["model", "moe-dispatch", "-b", "1M"], ["-b/--minbytes", "--tokens"]),
    (["model", "moe-dispatch", "--ranks", "1024"], ["--ranks", "--ep-size"]),
    (["model", "moe-dispatch", "--rows", "triple"], ["'triple'", "copy", "dedup"]),
    (["model", "allreduce", "--ep-size", "8", "--system", "gb300-nvl72"], ["--ep-size", "allreduce"]),
]


@pytest.mark.parametrize("args,needles", BAD, ids=[" ".join(c[0]) for c in BAD])
def test_bad_moe_flags_exit_2_naming_the_value(args, needles):
    p = run(args)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    for n in needles:
        assert n in p.stderr, (n, p.stderr)


# docs/hardware-context.md section 6: DeepSeek-V3 at T = 4096, FP8 dispatch (7392 B rows), dedup, uniform routing
# without a group limit. U: EP8 5.30, EP64 7.68; per-GPU dispatch MB; per-peer MB at EP64 and EP256.
CONTEXT_U = {8: 5.30, 64: 7.68}
CONTEXT_DISPATCH_MB = {8: 160, 16: 198, 32: 220, 64: 232, 256: 242}
CONTEXT_PEER_MB = {64: 3.6, 256: 0.95}


def test_model_prints_deepseek_v3_message_sizes():
    p = run(["model", "moe-dispatch", "--format", "json"])
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["kind"] == "moe_model" and out["tokens_per_rank"] == 4096 and out["row_convention"] == "dedup"
    table = {r["ep_size"]: r for r in out["table"]}
    assert sorted(table) == [8, 16, 32, 64, 256]
    for ep, u in CONTEXT_U.items():
        assert abs(table[ep]["dest_ranks_per_token"] - u) < 0.01
    for ep, mb in CONTEXT_DISPATCH_MB.items():
        assert abs(table[ep]["dispatch_bytes_per_rank"] / 1e6 - mb) <= 0.5, (ep, table[ep])
        # combine: BF16 rows, 14336 / 7392 = 1.94 x ("roughly double")
        assert abs(table[ep]["combine_bytes_per_rank"] / table[ep]["dispatch_bytes_per_rank"] - 14336 / 7392) < 1e-9
    for ep, mb in CONTEXT_PEER_MB.items():
        assert abs(table[ep]["dispatch_bytes_per_peer"] / 1e6 - mb) < 0.05
    # With the profile's 4-group limit, a group is one rank at EP8: at most 4 destinations.
    assert 3.8 < table[8]["routed"]["dest_ranks_per_token"] <= 4.0
    assert table[256]["routed"]["dest_ranks_per_token"] == 8.0
    assert all(r["model"] is None for r in out["table"])  # no system, no bound

    p = run(["model", "moe-dispatch", "--ep-size", "8,64,256", "--tokens", "4096"])
    assert p.returncode == 0, p.stderr
    rows = [l.split() for l in p.stdout.splitlines() if l.strip() and not l.startswith("#") and not l.startswith("ep_size")]
    assert [r[0] for r in rows] == ["8", "64", "256"]
    assert rows[1][1] == "7.676"  # U at EP64
    assert rows[2][4] == "242.2"  # dispatch MB per GPU at EP256


def test_model_moe_bounds_on_gb300():
    p = run(["model", "moe-dispatch", "--system", "gb300-nvl72", "--ep-size", "64,256", "--format", "json"])
    assert p.returncode == 0, p.stderr
    table = {r["ep_size"]: r for r in json.loads(p.stdout)["table"]}
    # EP64 fits one NVL72 rack: every peer is in the domain; the bound is 63/64 of the per-GPU bytes
    # over NVLink at 900 GB/s per direction.
    m64 = table[64]["model"]
    assert m64["packing"] == "64" and m64["bytes_off_domain"] == 0
    assert abs(m64["bound_time_us"] - table[64]["dispatch_bytes_per_rank"] * 63 / 64 / 900e9 * 1e6) < 0.01
    # EP256 packs 72+72+72+40: a rank of the 40-GPU rack sends 216/256 of its bytes over its
    # 800 Gb/s (100 GB/s) NIC.
    m256 = table[256]["model"]
    assert m256["domain_sizes"] == [72, 72, 72, 40]
    expected_us = table[256]["dispatch_bytes_per_rank"] * 216 / 256 / 100e9 * 1e6
    assert abs(m256["bound_time_us"] - expected_us) < 0.001 * expected_us
