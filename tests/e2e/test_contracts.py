"""Contracts that hold under faults (issue 20 items 2, 3, 6, 7): checked output, --resume of a
record lacking only its newline, of other injected faults and of earlier failures, one record
per case key, and waived cases that keep their requested size."""
import csv
import subprocess

from conftest import BIN, FAST, read_jsonl, run

BASE = ["run", "allreduce", "-b", "8", "-e", "64", "-f", "8", "--format", "none"] + FAST


def test_a_full_stdout_is_exit_3_naming_it(tmp_path):
    out = tmp_path / "r.jsonl"
    assert run(BASE + ["--out", out]).returncode == 0
    for args in (["gate", "--baseline", out, "--current", out], [*BASE[:-len(FAST) - 2], "--format", "table"] + FAST):
        with open("/dev/full", "w") as full:
            p = subprocess.run([BIN] + [str(a) for a in args], stdout=full, stderr=subprocess.PIPE, text=True,
                               timeout=120)
        assert p.returncode == 3, (args, p.returncode, p.stderr)
        assert "error (rank 0): writing standard output (/dev/full) failed: " in p.stderr, p.stderr


def test_a_directory_as_results_file_is_bad_input(tmp_path):
    p = run(["gate", "--baseline", tmp_path, "--current", tmp_path])
    assert p.returncode == 2
    assert f"results file '{tmp_path}' is a directory; give a JSONL file" in p.stderr, p.stderr


def test_resume_keeps_a_complete_last_record_without_its_newline(tmp_path):
    out = tmp_path / "n.jsonl"
    assert run(BASE + ["--out", out]).returncode == 0
    text = out.read_text()
    out.write_text(text[:-1])  # killed between the record and its newline
    p = run(BASE + ["--out", out, "--resume"])
    assert p.returncode == 0, p.stderr
    assert out.read_text() == text  # kept, ended, and nothing measured twice


def test_resume_refuses_other_injected_faults_and_keeps_failures_in_the_exit_code(tmp_path):
    out = tmp_path / "f.jsonl"
    fault = {"COLLBENCH_FAULT": "corrupt:rank=0,case=0"}
    assert run(BASE + ["--out", out], env=fault).returncode == 1
    before = out.read_text()
    p = run(BASE + ["--out", out, "--resume"])
    assert p.returncode == 2
    assert ("was written with other injected faults (COLLBENCH_FAULT 'corrupt:rank=0,case=0' in the file vs "
            "none now)") in p.stderr, p.stderr
    assert out.read_text() == before
    p = run(BASE + ["--out", out, "--resume"], env=fault)  # nothing left to run: the failure still counts
    assert p.returncode == 1, p.stderr
    assert out.read_text() == before


def test_repeated_dtypes_give_one_record_per_case_key(tmp_path):
    out = tmp_path / "d.jsonl"
    p = run(BASE + ["-d", "float32,float32", "--out", out])
    assert p.returncode == 0, p.stderr
    keys = [r["case_key"] for r in read_jsonl(out) if r["kind"] == "case"]
    assert len(keys) == 2 and len(set(keys)) == 2
    assert "2 case(s) repeat an earlier case of this run" in p.stderr, p.stderr


def test_waived_cases_keep_their_size_and_print_empty_csv_fields(tmp_path):
    out = tmp_path / "w.jsonl"
    p = run(["run", "allreduce", "-b", "8", "-e", "64", "-f", "8", "--algo", "nvls", "--format", "csv", "--out", out]
            + FAST)
    assert p.returncode == 0, p.stderr
    cases = [r for r in read_jsonl(out) if r["kind"] == "case"]
    assert [(r["status"], r["bytes"]) for r in cases] == [("waived", 8), ("waived", 64)]
    assert len({r["case_key"] for r in cases}) == 2
    header, row, _ = list(csv.reader(p.stdout.splitlines()))
    assert header[25:27] == ["status", "reason"]
    assert row[9] == "8" and row[10] == "" and row[13:25] == [""] * 12 and row[25] == "waived"
    assert row[26] == cases[0]["reason"]
