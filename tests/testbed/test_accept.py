"""Acceptance on the bed (profiles/acceptance/testbed.yaml, 4 hosts x 1 rank): every check PASSes
on a clean bed; with one host's link rate-limited, the suite FAILs (exit 1) and the failing
pairwise check's reason names the degraded host."""
import json

import pytest

from conftest import SOURCE_DIR, make_bed

PROFILE = SOURCE_DIR / "profiles" / "acceptance" / "testbed.yaml"
SLOW = 1


@pytest.fixture(scope="module")
def bed():
    yield from make_bed(hosts=4, per_host=1)


def accept(bed, out_dir):
    p = bed.collbench(["accept", PROFILE, "--out-dir", out_dir, "--repetitions", "2"], timeout=280)
    verdict = json.loads((out_dir / "verdict.json").read_text())
    return p, verdict


def test_clean_bed_passes(bed, tmp_path):
    p, verdict = accept(bed, tmp_path / "clean")
    assert p.returncode == 0, p.stdout + p.stderr
    assert verdict["verdict"] == "PASS"
    assert [r["verdict"] for r in verdict["rows"]] == ["PASS"] * 3, verdict["rows"]
    assert (tmp_path / "clean" / "junit.xml").read_text().count("<failure") == 0


def test_degraded_link_fails_naming_the_host(bed, tmp_path):
    slow_host = bed.host_names[SLOW]
    bed.degrade(slow_host, "40mbit")
    try:
        p, verdict = accept(bed, tmp_path / "slow")
    finally:
        bed.restore()
    assert p.returncode == 1, p.stdout + p.stderr
    rows = {r["check"]: r for r in verdict["rows"]}
    pairs = rows["pairwise-links"]
    assert pairs["verdict"] == "FAIL"
    named = f"rank {SLOW} (host {slow_host}) is slow on 3 of its 3 links"
    assert named in pairs["reason"], pairs["reason"]
    assert any(named in e for e in pairs["evidence"]), pairs["evidence"]
    assert named in p.stdout
    # The other hosts are not blamed.
    for other in bed.host_names:
        if other != slow_host:
            assert f"(host {other}) is slow" not in pairs["reason"]
    prom = (tmp_path / "slow" / "collbench_accept.prom").read_text()
    assert any(line.startswith("collbench_accept_check_status{") and 'check="pairwise-links"' in line
               and line.endswith('verdict="FAIL"} 1') for line in prom.splitlines()), prom
