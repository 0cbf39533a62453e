"""The JSONL reader: schema check, truncated last line, bad lines."""

from __future__ import annotations

import json

import pytest

from collbench_plot import SCHEMA, CollbenchPlotWarning, InputError, SchemaError, read_jsonl, read_many
from conftest import case, header, write_jsonl


def test_reads_header_and_cases(sweep_file):
    f = read_jsonl(sweep_file)
    assert f.header["run_id"] == "run-a"
    assert len(f.cases) == 8
    assert all(c["schema"] == SCHEMA for c in f.cases)
    assert f.cases[0]["_source"] == "run-a"
    assert f.cases[0]["_line"] == 2
    assert f.warnings == []


def test_refuses_schema_2_in_the_header(tmp_path):
    h = header()
    h["schema"] = "collbench.result/2"
    path = write_jsonl(tmp_path / "v2.jsonl", [h, case()])
    with pytest.raises(SchemaError) as e:
        read_jsonl(path)
    msg = str(e.value)
    assert f"{path}:1:" in msg
    assert "collbench.result/2" in msg and SCHEMA in msg


def test_refuses_schema_2_in_a_case(tmp_path):
    c = case()
    c["schema"] = "collbench.result/2"
    path = write_jsonl(tmp_path / "mixed.jsonl", [header(), case(), c])
    with pytest.raises(SchemaError, match=r"mixed\.jsonl:3: record schema 'collbench.result/2' is not supported"):
        read_jsonl(path)


def test_refuses_missing_and_foreign_schema(tmp_path):
    c = case()
    del c["schema"]
    with pytest.raises(SchemaError, match="no 'schema' key"):
        read_jsonl(write_jsonl(tmp_path / "a.jsonl", [header(), c]))
    c["schema"] = "nvbench/1"
    with pytest.raises(SchemaError, match="unknown schema"):
        read_jsonl(write_jsonl(tmp_path / "b.jsonl", [header(), c]))


def test_truncated_last_line_is_skipped_with_a_warning(tmp_path):
    cut = json.dumps(case(nbytes=4096))[:57]  # killed while writing
    path = write_jsonl(tmp_path / "killed.jsonl", [header(), case()], trailing=cut)
    with pytest.warns(CollbenchPlotWarning, match=r"killed\.jsonl:3: truncated last line skipped"):
        f = read_jsonl(path)
    assert len(f.cases) == 1
    assert any("killed.jsonl:3" in w for w in f.warnings)


def test_bad_line_before_the_end_is_an_error(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(header()) + "\n{not json\n" + json.dumps(case()) + "\n")
    with pytest.raises(InputError, match=r"bad\.jsonl:2: not valid JSON"):
        read_jsonl(path)


def test_missing_and_empty_files(tmp_path):
    with pytest.raises(InputError, match="cannot read"):
        read_jsonl(tmp_path / "nope.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(InputError, match="empty file"):
        read_jsonl(tmp_path / "empty.jsonl")


def test_same_run_id_in_two_files_is_told_apart_by_file_name(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", [header("r"), case()])
    b = write_jsonl(tmp_path / "b.jsonl", [header("r"), case()])
    files = read_many([a, b])
    assert {c["_source"] for f in files for c in f.cases} == {"a.jsonl", "b.jsonl"}
