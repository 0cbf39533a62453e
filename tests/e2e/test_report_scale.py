"""`collbench report` over a generated file of thousands of records (issue 37 item 8: report reads and renders in one
pass). The outputs are checked three ways: against digests of what collbench printed before the change (commit
97a802e, which held every record), against values computed here from the records, and against the same file read
through a pipe. scripts/gen-results writes the same bytes for the same arguments, so the digests are fixed."""
import csv
import hashlib
import io
import json
import os
import subprocess

import pytest

from conftest import BIN, SOURCE_DIR, _EMPTY_CONFIG, run

RECORDS = 3000
# sha256 of `collbench report scale.jsonl --format F` (run in the file's folder) by the binary of commit 97a802e, over
# `scripts/gen-results 3000 scale.jsonl --roots late`.
GOLDEN = {
    "table": "f230cf6bba6ea10cf86958a5e6091ba159193e39ed02f8189c8ab708559a6309",
    "markdown": "80e5f8eb8c0abf105f59ca99d534f3508e5bcd5f3733d08c96b3d9f6e0095a9a",
    "csv": "4b10eeb1f1790ef53ee91390e08eb036fe75cd5a528fe2e8792bb83c81c001c7",
}


@pytest.fixture(scope="module")
def scale(tmp_path_factory):
    folder = tmp_path_factory.mktemp("scale")
    path = folder / "scale.jsonl"
    subprocess.run([str(SOURCE_DIR / "scripts" / "gen-results"), str(RECORDS), str(path), "--roots", "late"],
                   check=True)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return folder, path, [r for r in records if r["kind"] == "case"]


def report(folder, fmt):
    res = run(["report", "scale.jsonl", "--format", fmt], cwd=folder)
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""
    return res.stdout


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv"])
def test_output_is_byte_for_byte_what_report_printed_before(scale, fmt):
    folder, _, _ = scale
    assert hashlib.sha256(report(folder, fmt).encode()).hexdigest() == GOLDEN[fmt]


def g6(value):
    """fmt's {:.6g}, as the CSV writes numbers."""
    return f"{value:.6g}"


def test_csv_rows_are_the_records(scale):
    folder, _, cases = scale
    rows = list(csv.DictReader(io.StringIO(report(folder, "csv"))))
    assert len(rows) == len(cases) == RECORDS
    for row, rec in zip(rows, cases, strict=True):
        assert row["file"] == "scale.jsonl"
        assert row["case_key"] == rec["case_key"]
        assert row["bytes"] == str(rec["bytes"])
        assert row["status"] == rec["status"]
        assert row["root"] == (str(rec["root"]) if rec["collective"] == "broadcast" else "")
        if rec["time_us"] is None:
            assert row["p50_us"] == row["busbw_gbps"] == row["iterations"] == ""
        else:
            assert row["p50_us"] == g6(rec["time_us"]["p50"])
            assert row["p99_us"] == g6(rec["time_us"]["p99"])
            assert row["busbw_gbps"] == g6(rec["busbw_gbps"])
        assert row["efficiency"] == (g6(rec["model"]["efficiency"]) if rec["model"] else "")


def test_table_totals_and_root_column_cover_every_record(scale):
    folder, _, cases = scale
    lines = report(folder, "table").splitlines()
    timed = [r for r in cases if r["time_us"] is not None]
    waived = [r for r in cases if r["status"] == "waived"]
    assert lines[0] == "# file: scale.jsonl"
    assert lines[-3:] == [
        "# Out of bounds values : 0 OK",
        f"# Avg bus bandwidth    : {g6(sum(r['busbw_gbps'] for r in timed) / len(timed))}",
        f"# Waived cases         : {len(waived)}",
    ]
    assert len([line for line in lines if not line.startswith("#")]) == RECORDS
    # A root of 1 appears only in the second half of the file; every block's header has the column all the same.
    headers = [line for line in lines if line.startswith("#") and "redop" in line]
    assert headers and all(" root " in line for line in headers)
    first_row = next(line for line in lines if not line.startswith("#"))
    assert first_row.split()[:5] == ["8", "2", "float32", "sum", "-"]
    markdown_rows = [line for line in report(folder, "markdown").splitlines() if line.startswith("| allreduce")]
    assert len(markdown_rows) == sum(1 for r in cases if r["collective"] == "allreduce")


def test_a_pipe_gives_the_same_tables(scale):
    folder, path, _ = scale
    env = dict(os.environ, CB=BIN, XDG_CONFIG_HOME=_EMPTY_CONFIG)
    piped = subprocess.run(["bash", "-c", f'"$CB" report <(cat "{path}")'], capture_output=True, text=True, env=env,
                           timeout=120)
    assert piped.returncode == 0, piped.stderr
    direct = report(folder, "table")
    assert piped.stdout.split("\n", 1)[1] == direct.split("\n", 1)[1]  # all but the "# file:" line
