"""The watchdog: an injected hang is detected within the timeout, the message names the rank
and the case, the run exits 3, and every case finished before stays valid JSONL."""
import re
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


def test_rank_delayed_before_entering_the_collective_is_named(tmp_path, validator):
    # Rank 1 passes iteration 2's barrier, then sleeps 60 s before the collective (an injected
    # delay): it has not arrived, and the watchdog says so instead of "did not arrive: none".
    out = tmp_path / "d.jsonl"
    p = run(["run", "allreduce", "-b", "8", "-e", "64", "-f", "8", "--timeout", "2s", "--out", out, "--format",
             "none"] + FAST, np=2, env={"COLLBENCH_FAULT": "delay:rank=1,us=60000000,case=1,iter=2"}, timeout=120)
    assert p.returncode == 3, p.stderr
    assert re.search(r"watchdog: case 1 \(allreduce 64 B float32\) iteration 2 exceeded the 2 s timeout; ranks that "
                     r"did not arrive: 1 \(host [^:]+: injected delay before entering the collective, case 1 "
                     r"iteration 2, \d+\.\d s\); no answer from: none; aborting \(exit 3\)", p.stderr), p.stderr
    records = read_jsonl(out)
    assert [r["kind"] for r in records] == ["run_header", "case"]
    for r in records:
        validator.validate(r)


def test_stop_in_warm_up_names_the_warm_up_iteration(tmp_path):
    # Rank 1 hangs in warm-up iteration 1 of case 1: the report says so, not "iteration -1".
    out = tmp_path / "w.jsonl"
    p = run(["run", "allreduce", "-b", "8", "-e", "64", "-f", "8", "--timeout", "2s", "--out", out, "--format",
             "none", "--max-time", "100ms", "--min-time", "0", "--max-iters", "20", "-w", "3"], np=2,
            env={"COLLBENCH_FAULT": "hang:rank=1,case=1,warmup=1"}, timeout=120)
    assert p.returncode == 3, p.stderr
    assert "collbench: injected hang on rank 1 at case 1 warm-up iteration 1" in p.stderr
    assert re.search(r"watchdog: case 1 \(allreduce 64 B float32\) warm-up iteration 1 exceeded the 2 s timeout; "
                     r"ranks that did not arrive: 1 \(host [^:]+: injected hang, case 1 warm-up iteration 1, "
                     r"\d+\.\d s\); no answer from: none", p.stderr), p.stderr
    assert "iteration -1" not in p.stderr
    assert [r["kind"] for r in read_jsonl(out)] == ["run_header", "case"]


def test_a_rank_held_at_the_runs_start_is_named_and_nothing_is_written(tmp_path):
    # A rank held before the first case (its first CUDA or NVML call on a broken GPU, a library
    # load from a hung file system; here COLLBENCH_FAULT's hang at the start) left the others in
    # their first collective for good: the watchdog now watches the run's start, step by step,
    # each step bounded by --timeout but never by less than 60 s (a slow start is not a hang).
    out = tmp_path / "s.jsonl"
    start = time.monotonic()
    p = run(["run", "allreduce", "-b", "8", "-e", "8", "--timeout", "2s", "--out", out], np=4,
            env={"COLLBENCH_FAULT": "hang:rank=1,start=1"}, timeout=300)
    elapsed = time.monotonic() - start
    assert p.returncode == 3, (p.returncode, p.stderr)
    assert 60 <= elapsed < 150, elapsed
    assert re.search(r"^collbench: error: watchdog: the run's start \(checking sizes against memory\) exceeded the 60 s "
                     r"timeout; ranks that did not arrive: 1 \(host [^:]+: injected hang, checking sizes against "
                     r"memory, [0-9.]+ s\); still starting: 0, 2-3 \(a rank held in a GPU, NVML or library call looks "
                     r"like those waiting for it\); no answer from: none; aborting \(exit 3\)$", p.stderr, re.M), p.stderr
    assert not out.exists()  # the results file is opened after the start's checks
