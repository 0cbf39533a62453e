"""`collbench import` syncs its output once (issue 37 item 8): every record is still one line written with one
write(2), as a run writes them, but the file is fsync'd after the last record instead of after each (a sync per
record made 10,000 rows take over a minute; docs/results-format.md). Counted with strace."""
import os
import shutil
import subprocess

import pytest

from conftest import BIN, SOURCE_DIR, read_jsonl

LOG = SOURCE_DIR / "tests" / "data" / "nccl-tests" / "all_reduce_8xH100.txt"  # 14 rows: 28 records


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_import_syncs_its_file_once_and_writes_a_line_per_record(tmp_path):
    out = tmp_path / "imported.jsonl"
    trace = tmp_path / "trace.txt"
    env = {k: v for k, v in os.environ.items() if k != "COLLBENCH_FAULT"}
    res = subprocess.run(["strace", "-f", "-e", "trace=fsync,fdatasync,write", "-o", str(trace), BIN, "import",
                          str(LOG), "--out", str(out)], capture_output=True, text=True, timeout=120, env=env)
    assert res.returncode == 0, res.stderr
    records = read_jsonl(out)
    assert [r["kind"] for r in records] == ["run_header"] + ["case"] * 28
    calls = trace.read_text().splitlines()
    fd = next(line.split("write(")[1].split(",")[0] for line in calls if '"{\\"argv\\"' in line)
    writes = [line for line in calls if f"write({fd}," in line]
    syncs = [line for line in calls if "fsync(" in line or "fdatasync(" in line]
    assert len(writes) == len(records)  # one write(2) per line
    # The file once, after its last line, and the folder of the new file (its directory entry).
    assert len(syncs) == 2, syncs
    assert sum(f"fsync({fd})" in line for line in syncs) == 1
    assert calls.index(next(line for line in calls if f"fsync({fd})" in line)) > calls.index(writes[-1])
