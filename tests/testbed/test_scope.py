"""2 hosts x 2 ranks on the test bed. With no domain flag the domains are the hosts
(docs/interfaces.md section 2, with its warning), so `--scope domain` runs inside each host and
`--scope global` crosses the bed's network. A token-bucket limit on one host's link must then
cost the global all-reduce and all-to-all at least the time the link needs for the bytes that
have to cross it, and cost the per-host (domain) runs nothing of the kind."""
import pytest

from conftest import FAST, YIELD, cases, make_bed, read_jsonl

RATE_BITS = 100e6  # the degraded link: 100 Mbit/s each way
# scripts/testbed's bucket (burst) at that rate: max(64 KiB, 10 ms of the rate); it passes at
# line rate, so the time bound counts the bytes beyond it.
BURST_BYTES = max(64 * 1024, RATE_BITS / 8 / 100)


@pytest.fixture(scope="module")
def bed():
    yield from make_bed(hosts=2, per_host=2)


def test_domains_fall_back_to_hosts(bed, tmp_path, validator):
    out = tmp_path / "hosts.jsonl"
    p = bed.collbench(["run", "allreduce", "-b", "1K", "-e", "64K", "-f", "8", "--scope", "domain,global",
                       "--out", out, "--format", "none"] + FAST + YIELD, timeout=180)
    assert p.returncode == 0, p.stderr
    assert "domains taken from hosts (2 domain(s) of [2,2] ranks): a host is not a rack" in p.stderr
    records = read_jsonl(out)
    header = records[0]
    assert [h["host"] for h in sorted(header["hosts"], key=lambda h: h["rank"])] == [
        bed.host_names[0], bed.host_names[0], bed.host_names[1], bed.host_names[1]]
    assert header["launcher"] == "mpiexec"
    assert header["env"].get("UCX_TLS") == "tcp,self"
    assert len(cases(records)) == 6
    for r in records:
        validator.validate(r)
    for c in cases(records):
        assert c["status"] == "ok", c["reason"]
        assert (c["num_ranks"], c["domain_sizes"], c["num_domains"]) == (4, [2, 2], 2)
        assert c["checked"] and c["wrong"]["total"] == 0


def p50_by_scope(path):
    return {c["scope"]: c["time_us"]["p50"] for c in cases(read_jsonl(path)) if c["status"] == "ok"}


@pytest.mark.parametrize("collective", ["allreduce", "alltoall"])
def test_degraded_link_costs_global_scope_only(bed, tmp_path, collective):
    size = 2 * 1024 * 1024
    # Lower bound with the link degraded: the ranks of the degraded host need, for every one of
    # `size` bytes, what the other host's ranks contribute (the all-reduce's partial sum; the
    # all-to-all's 2 senders x 2 receivers x size/4), so at least `size` bytes cross that link
    # each way, at RATE_BITS.
    bound_us = (size - BURST_BYTES) * 8 / RATE_BITS * 1e6
    args = ["run", collective, "-b", size, "-e", size, "--scope", "domain,global", "--format", "none",
            "--min-time", "0", "--max-time", "2s", "--min-iters", "3", "--max-iters", "5", "-w", "1"] + YIELD
    clean, slow = tmp_path / "clean.jsonl", tmp_path / "slow.jsonl"
    p = bed.collbench(args + ["--out", clean], timeout=180)
    assert p.returncode == 0, p.stderr
    bed.degrade(bed.host_names[1], f"{RATE_BITS / 1e6:g}mbit")
    try:
        p = bed.collbench(args + ["--out", slow], timeout=180)
    finally:
        bed.restore()
    assert p.returncode == 0, p.stderr
    for path in (clean, slow):
        for c in cases(read_jsonl(path)):
            assert c["status"] == "ok" and c["checked"] and c["wrong"]["total"] == 0, c
    before, after = p50_by_scope(clean), p50_by_scope(slow)
    table = f"{collective} {size} B, p50 us: clean {before}, degraded {after}, cross-host bound {bound_us:.0f}"
    print(table)
    # Across hosts, the degraded link's time is a floor no run can beat...
    assert after["global"] >= 0.9 * bound_us, table
    # ...which the clean bed is far from, so the link is what made the difference;
    assert before["global"] < 0.6 * bound_us, table
    # inside each host nothing crosses the link: the domain scope never pays it.
    assert after["domain"] < 0.5 * bound_us, table
    assert after["global"] > 3 * after["domain"], table
