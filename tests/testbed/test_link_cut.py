"""A link cut in the middle of a sweep (2 hosts x 2 ranks): the cut host's ranks stop answering,
the watchdog fires within its timeout, exits 3 and names them with their host; every case finished
before stays a complete, valid record; after `restore`, `--resume` finishes the sweep with each
case exactly once and the measured cases kept byte for byte."""
import json
import re
import time

import pytest

from conftest import YIELD, cases, make_bed, read_jsonl

SIZES = [8, 64, 512, 4096, 32768, 262144, 2097152]


@pytest.fixture(scope="module")
def bed():
    yield from make_bed(hosts=2, per_host=2)


def complete_cases(path):
    if not path.exists():
        return 0
    lines = path.read_text().split("\n")[:-1]  # newline-terminated lines only
    return sum(1 for line in lines if line.strip() and json.loads(line)["kind"] == "case")


def test_cut_fires_watchdog_and_resume_after_restore_finishes(bed, tmp_path, validator):
    out = tmp_path / "cut.jsonl"
    # Each case times for 500 ms, so a cut after the first case lands mid-sweep.
    args = ["run", "allreduce", "-b", SIZES[0], "-e", SIZES[-1], "-f", "8", "--min-time", "500ms", "--max-time",
            "500ms", "-w", "1", "--timeout", "3s", "--out", out, "--format", "none"] + YIELD
    proc = bed.popen(args)
    far = bed.host_names[1]
    try:
        deadline = time.monotonic() + 90
        while complete_cases(out) < 1 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert complete_cases(out) >= 1, "the sweep never finished a case"
        bed.cut(far)
        cut_at = time.monotonic()
        _, stderr = proc.communicate(timeout=90)
        elapsed = time.monotonic() - cut_at
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        bed.restore()
    assert proc.returncode == 3, (proc.returncode, stderr)
    assert elapsed < 45, elapsed  # 3 s timeout + the 3 s it waits for answers + teardown
    m = re.search(r"watchdog: case (\d+) .* exceeded the 3 s timeout; ranks that did not arrive: (.*); "
                  r"no answer from: (.*); aborting", stderr)
    assert m, stderr
    # The cut host's ranks cannot answer across the cut; the near host's rank 1 can.
    assert m.group(3) == f"2 (host {far}), 3 (host {far})", stderr
    stuck_case = int(m.group(1))

    records = read_jsonl(out)  # every line complete JSON
    done = cases(records)
    assert 1 <= len(done) == stuck_case < len(SIZES)
    assert [c["bytes"] for c in done] == SIZES[:len(done)]
    for r in records:
        validator.validate(r)
    for c in done:
        assert c["status"] == "ok" and c["checked"] and c["wrong"]["total"] == 0
    measured = out.read_text()

    # The far host's orphaned ranks learn of the abort once the link is back; then resume.
    bed.wait_idle(timeout=60)
    p = bed.collbench(args + ["--resume"], timeout=180)
    assert p.returncode == 0, p.stderr
    assert out.read_text().startswith(measured)
    records = read_jsonl(out)
    assert [r["kind"] for r in records].count("run_header") == 1
    assert [c["bytes"] for c in cases(records)] == SIZES
    for c in cases(records):
        assert c["status"] == "ok" and c["wrong"]["total"] == 0
