"""The watchdog: an injected hang is detected within the timeout, the message names the rank
and the case, the run exits 3, and every case finished before stays valid JSONL."""
import time

from conftest import FAST, read_jsonl, run


def test_hang_fires_watchdog_names_rank_and_case_and_keeps_results(tmp_path, validator):
    out = tmp_path / "h.jsonl"
    start = time.monotonic()
    p = run(["run", "allreduce", "-b", "8", "-e", "64K", "-f", "8", "--timeout", "3s", "--out", out,
             "--format", "none"] + FAST, np=4, env={"COLLBENCH_FAULT": "hang:rank=1,case=2,iter=3"}, timeout=120)
    elapsed = time.monotonic() - start
    assert p.returncode == 3, (p.returncode, p.stderr)
    assert elapsed < 60
    assert "watchdog: case 2" in p.stderr and "iteration 3" in p.stderr
    assert "did not arrive: 1 (host" in p.stderr and "injected hang" in p.stderr
    records = read_jsonl(out)  # every line complete
    assert [r["kind"] for r in records] == ["run_header", "case", "case"]
    for r in records:
        validator.validate(r)


def test_no_false_alarm_with_a_short_timeout(tmp_path):
    out = tmp_path / "ok.jsonl"
    p = run(["run", "alltoall", "-b", "1K", "-e", "64K", "-f", "8", "--timeout", "5s", "--out", out,
             "--format", "none"] + FAST, np=2)
    assert p.returncode == 0, p.stderr
    assert len(read_jsonl(out)) == 4


def test_bad_timeout_exits_2():
    p = run(["run", "allreduce", "--timeout", "soon"])
    assert p.returncode == 2 and "soon" in p.stderr
