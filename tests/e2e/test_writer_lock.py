"""One writer per results file (issue 37 item 2): a run holds a lock on its --out file for its
whole life; a second run given the same file, with --force, --resume or neither, exits 2 naming
the holder's pid and host, and leaves the file alone; readers (report) ignore the lock."""
import os
import socket
import subprocess
import time

from conftest import BIN, read_jsonl, run

# Four sizes of 11 iterations delayed 0.1 s each (about 5 s in all): long enough for the second
# run to meet the first.
SLOW = ["run", "allreduce", "-b", "8", "-e", "64", "-f", "2", "-n", "10", "-w", "1", "--format", "none"]
DELAY = {"COLLBENCH_FAULT": "delay:rank=0,us=100000"}
FAST = ["run", "allreduce", "-b", "8", "-e", "64", "-f", "2", "--max-time", "50ms", "--min-time", "0",
        "--min-iters", "2", "--max-iters", "5", "-w", "1", "--format", "none"]


def start_holder(out):
    holder = subprocess.Popen([BIN] + SLOW + ["--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env={**os.environ, **DELAY})
    deadline = time.monotonic() + 60
    while not (out.exists() and out.stat().st_size > 0):  # its run header is written once it holds the lock
        assert holder.poll() is None, holder.communicate()
        assert time.monotonic() < deadline, "the first run wrote no header in 60 s"
        time.sleep(0.05)
    return holder


def test_a_second_writer_is_refused_naming_the_holder_and_readers_go_on(tmp_path):
    out = tmp_path / "r.jsonl"
    holder = start_holder(out)
    try:
        expected = (f"output file '{out}' is being written by another collbench run (pid {holder.pid} on host "
                    f"{socket.gethostname()}); wait for it to finish or choose another --out file")
        # --resume with the holder's own configuration, so that only the lock can refuse it.
        for args, flag in ((FAST, "--force"), (SLOW, "--resume")):
            p = run(args + ["--out", out, flag], env=DELAY)
            assert p.returncode == 2, (flag, p.returncode, p.stderr)
            assert expected in p.stderr, (flag, p.stderr)
        assert run(["report", out]).returncode == 0  # a reader takes no lock
        assert holder.poll() is None, "the first run ended before the second writers were refused"
    finally:
        stdout, stderr = holder.communicate(timeout=120)
    assert holder.returncode == 0, stderr
    records = read_jsonl(out)
    assert [r.get("kind") for r in records].count("run_header") == 1  # the refused --force truncated nothing
    assert sorted(r["bytes"] for r in records if "bytes" in r) == [8, 16, 32, 64]  # and wrote no record
    assert not (tmp_path / "r.jsonl.lock").exists()  # the holder's record goes with it
    p = run(SLOW + ["--out", out, "--resume"], env=DELAY)  # the lock went with the first run; every case is done
    assert p.returncode == 0, p.stderr
