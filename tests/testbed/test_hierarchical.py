"""collbench's own hierarchical algorithms (reduce-scatter in the domain, all-reduce across
domains, all-gather in the domain; for all-to-all, aggregate in the domain then exchange across)
on 2 hosts x 2 ranks, where the domains are the hosts and the cross-domain step runs over the
bed's network: every element verified exactly, also over a degraded link, and a corrupted
element on the far host is caught and blamed on its rank."""
import pytest

from conftest import FAST, YIELD, cases, make_bed, read_jsonl


@pytest.fixture(scope="module")
def bed():
    yield from make_bed(hosts=2, per_host=2)


def check_exact(path, collective, expected_cases):
    found = cases(read_jsonl(path))
    assert len(found) == expected_cases
    for c in found:
        assert c["collective"] == collective
        assert c["status"] == "ok", c["reason"]
        assert c["checked"] and c["wrong"]["total"] == 0, c["wrong"]
        assert c["domain_sizes"] == [2, 2]
    return found


@pytest.mark.parametrize("collective, redops", [("allreduce", ["-o", "sum,max"]), ("alltoall", [])])
def test_hierarchical_and_flat_verify_exactly(bed, tmp_path, validator, collective, redops):
    out = tmp_path / f"{collective}.jsonl"
    p = bed.collbench(["run", collective, "-b", "1K", "-e", "1M", "-f", "32", "--algo", "hierarchical,flat",
                       "-d", "float32,bfloat16,int32"] + redops + ["--out", out, "--format", "none"] + FAST + YIELD,
                      timeout=240)
    assert p.returncode == 0, p.stderr
    n_redops = 2 if redops else 1
    found = check_exact(out, collective, 2 * 3 * 3 * n_redops)  # algos x dtypes x sizes x redops
    assert {c["algo_requested"] for c in found} == {"hierarchical", "flat"}
    assert all(c["algo_used"] == "hierarchical" for c in found if c["algo_requested"] == "hierarchical")
    for r in read_jsonl(out):
        validator.validate(r)


def test_hierarchical_exact_over_a_degraded_link(bed, tmp_path):
    out = tmp_path / "slow.jsonl"
    bed.degrade(bed.host_names[1], "100mbit")
    try:
        p = bed.collbench(["run", "allreduce", "-b", "256K", "-e", "256K", "--algo", "hierarchical",
                           "-d", "bfloat16", "--out", out, "--format", "none", "--min-time", "0",
                           "--max-time", "1s", "--min-iters", "3", "--max-iters", "5", "-w", "1"] + YIELD, timeout=180)
    finally:
        bed.restore()
    assert p.returncode == 0, p.stderr
    (c,) = check_exact(out, "allreduce", 1)
    # 256 KiB crosses the 100 Mbit/s link at least once each way: >= ~11 ms after the 64 KiB bucket.
    assert c["time_us"]["p50"] >= 0.9 * (256 - 64) * 1024 * 8 / 100e6 * 1e6


def test_corruption_on_the_far_host_is_caught_and_named(bed, tmp_path):
    out = tmp_path / "bad.jsonl"
    p = bed.collbench(["run", "allreduce", "-b", "64K", "-e", "64K", "--algo", "hierarchical", "--out", out,
                       "--format", "none"] + FAST + YIELD, env={"COLLBENCH_FAULT": "corrupt:rank=3"}, timeout=180)
    assert p.returncode == 1, (p.returncode, p.stderr)
    (c,) = cases(read_jsonl(out))
    assert c["status"] == "failed" and c["fault"] == "corrupt:rank=3"
    assert c["wrong"]["total"] > 0 and set(c["wrong"]["by_rank"]) == {"3"}, c["wrong"]
